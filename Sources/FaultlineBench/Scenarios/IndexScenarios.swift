import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-IDX at 200 rows: an index makes no difference on a tiny table.
    static var indexSmall: BenchScenario {
        BenchScenario(
            id: "index-small", title: "Index versus none at 200 products",
            claim: "With about 200 rows, searching by an indexed attribute is about as fast as scanning: both stay in the page cache.",
            theme: .indexes, sources: [ClaimSource.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-12", "P-13", "P-14")],
            ratios: [RatioSpec("no index", over: "indexed")],
            variants: { setup in
                var variants: [BenchVariant] = []
                for indexed in [true, false] {
                    let model = try ProductWorkload.model(indexed: indexed)
                    let store = setup.folder.appendingPathComponent("products-\(indexed).sqlite")
                    try ProductWorkload.generate(count: 200, into: store, model: model)
                    variants.append(.engine(indexed ? "indexed" : "no index", model: model, store: store, operations: 1_000) { context in
                        var found = 0
                        for i in 0..<1_000 {
                            found += try context.count(for: try Bench.request("Product", "number == %@", Int64(i % 400) * 7))
                        }
                        Bench.sink(Int64(found))
                    })
                }
                return variants
            },
            judge: { m in
                guard let ratio = m.ratio("no index", "indexed") else { return Verdict(held: nil, "not measured") }
                return Verdict(held: ratio < 1.5, "no index \(BenchFormat.ratio(ratio)) the indexed time")
            })
    }

    /// B-IDX at 100,000+ rows: `population > 1,000,000` with and without an index.
    static var indexLarge: BenchScenario {
        BenchScenario(
            id: "index-large", title: "Index versus none at 100,000+ cities (population > 1,000,000)",
            claim: "On a large table an index on the predicate's attribute turns a full scan into a search, and the gain grows with the table.",
            theme: .indexes, sources: [ClaimSource.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-12", "P-13", "P-14"), ClaimSource.objcio("Performance", "Optimizing Fetch Requests › Indexes", "P-33", "B-IDX")],
            ratios: [RatioSpec("no index", over: "indexed")],
            variants: { setup in
                let count = setup.scale.part(2, minimum: 1_000)
                return try [true, false].map { indexed in
                    let model = try CityWorkload.model(indexedPopulation: indexed)
                    let store = try setup.data.cities(count, indexedPopulation: indexed, residents: false)
                    return .engine(indexed ? "indexed" : "no index", model: model, store: store, operations: 20) { context in
                        var found = 0
                        for _ in 0..<20 {
                            var request = try Bench.request("City", "population > %@", Int64(1_000_000), sort: [FetchSortDescriptor(keyPath: "population", ascending: false)])
                            request.includesPropertyValues = false
                            found += try context.fetchObjectIDs(request).count
                        }
                        Bench.sink(Int64(found))
                    }
                }
            },
            judge: { m in
                guard let ratio = m.ratio("no index", "indexed"), let indexed = m.counters("indexed"), let plain = m.counters("no index") else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: ratio >= 2 && indexed.fullScanStatements == 0 && plain.fullScanStatements > 0,
                               "index \(BenchFormat.ratio(ratio)) faster; full scans: indexed \(indexed.fullScanStatements), no index \(plain.fullScanStatements)")
            })
    }

    /// B-CIDX: the seed's `markedForDeletionDate` + `updatedAt` example, single versus compound index.
    static var compoundIndex: BenchScenario {
        BenchScenario(
            id: "compound-index", title: "Single versus compound index for predicate + sort (Moody regions)",
            claim: "A predicate on markedForDeletionDate sorted by updatedAt needs a temporary B-tree to sort with a single-column index, and none with the compound index (markedForDeletionDate, updatedAt), which is faster.",
            theme: .indexes, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests › Indexes", "P-34", "B-CIDX"), ClaimSource.objcio("Profiling", "SQL Debug Output")],
            ratios: [RatioSpec("single index", over: "compound index")],
            model: { try RegionWorkload.model(compoundIndex: true) },
            variants: { setup in
                let count = setup.scale.part(4, minimum: 1_000)
                return try [false, true].map { compound in
                    let model = try RegionWorkload.model(compoundIndex: compound)
                    let store = setup.folder.appendingPathComponent("regions-\(compound).sqlite")
                    try RegionWorkload.generate(count: count, into: store, compoundIndex: compound)
                    return .engine(compound ? "compound index" : "single index", model: model, store: store, operations: 50) { context in
                        var found = 0
                        for _ in 0..<50 {
                            var request = try Bench.request("Country", "markedForDeletionDate == nil", sort: [FetchSortDescriptor(keyPath: "updatedAt", ascending: false)])
                            request.fetchLimit = 20
                            request.includesPropertyValues = false
                            found += try context.fetchObjectIDs(request).count
                        }
                        Bench.sink(Int64(found))
                    }
                }
            },
            judge: { m in
                guard let single = m["single index"], let compound = m["compound index"], let ratio = m.ratio("single index", "compound index") else {
                    return Verdict(held: nil, "not measured")
                }
                func usesTempBTree(_ result: VariantResult) -> Bool {
                    (result.queryPlans ?? [:]).contains { sql, details in sql.contains("ZMARKEDFORDELETIONDATE") && details.contains { $0.contains("TEMP B-TREE") } }
                }
                let singleSorts = usesTempBTree(single), compoundSorts = usesTempBTree(compound)
                return Verdict(held: singleSorts && !compoundSorts && ratio > 1,
                               "temp B-tree for ORDER BY: single index \(singleSorts ? "yes" : "no"), compound \(compoundSorts ? "yes" : "no"); compound \(BenchFormat.ratio(ratio)) faster")
            })
    }

    /// `[cd]` search versus a normalized, indexed shadow attribute (seed 001 L4816–L4914).
    static var normalizedSearch: BenchScenario {
        BenchScenario(
            id: "normalized-search", title: "BEGINSWITH[cd] versus a normalized indexed shadow attribute",
            claim: "Searching ~4,000 city names with BEGINSWITH[cd] reads and folds every row; searching name_normalized BEGINSWITH[n] with an index is about 10–15× faster, more on larger sets.",
            theme: .predicates, sources: [ClaimSource.objcio("Text", "Searching", "X5", "X6", "X7", "X8", "X9", "X10")],
            ratios: [RatioSpec("[cd] on name", over: "[n] on name_normalized")],
            variants: { setup in
                let model = try CityWorkload.model()
                let store = try setup.data.cities(max(4_000, setup.scale.part(50)), indexedPopulation: true, residents: false)
                let terms = ["Ber", "bé", "Mün", "sa", "kö", "Zü", "pa", "Lyo", "ham", "tou", "Ná", "gda", "Kra", "ro", "ma", "ne", "ti", "lo", "ch", "od"]
                return [
                    .engine("[cd] on name", model: model, store: store, operations: terms.count) { context in
                        var found = 0
                        for term in terms { found += try context.fetchObjectIDs(try Bench.request("City", "name BEGINSWITH[cd] %@", term)).count }
                        Bench.sink(Int64(found))
                    },
                    .engine("[n] on name_normalized", model: model, store: store, operations: terms.count) { context in
                        var found = 0
                        for term in terms {
                            found += try context.fetchObjectIDs(try Bench.request("City", "name_normalized BEGINSWITH[n] %@", CityWorkload.normalizedForSearch(term))).count
                        }
                        Bench.sink(Int64(found))
                    },
                ]
            },
            judge: { m in
                guard let ratio = m.ratio("[cd] on name", "[n] on name_normalized"), let plain = m.counters("[cd] on name"),
                      let normalized = m.counters("[n] on name_normalized") else { return Verdict(held: nil, "not measured") }
                return Verdict(held: ratio >= 10 && normalized.fullScanStatements == 0,
                               "normalized search \(BenchFormat.ratio(ratio)) faster (the book: 10–15×); rows read: [cd] \(plain.rows), [n] \(normalized.rows)")
            })
    }
}
