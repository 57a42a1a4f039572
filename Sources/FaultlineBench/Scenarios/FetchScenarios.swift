import Faultline
import Foundation

extension ScenarioCatalogue {
    /// Fetch N rows of ten integers into objects, use every value and release them, against raw SQLite and GRDB
    /// records doing the same, each phase timed apart.
    static var fetchObjects: BenchScenario {
        BenchScenario(
            id: "fetch-objects", title: "Fetch N × 10 integers into objects, use them, release them (cold and warm), with peers",
            claim: "Fetching into managed objects costs little more than reading the rows: the fetch at most 1.25× a raw SQLite loop into structs, and fetch, use and release together no slower than GRDB records; a warm context re-uses its registered objects.",
            theme: .overheads, sources: [ClaimSource(.grdb, "fetch 200,000 × 10 INT")],
            ratios: [RatioSpec("engine, cold", over: "raw SQLite", phase: .fetch, limit: 1.25),
                     RatioSpec("engine, cold", over: "GRDB records", limit: 1.0, target: "≤ 1× end to end"),
                     RatioSpec("engine, cold", over: "raw SQLite"),
                     RatioSpec("engine, cold", over: "GRDB records", phase: .fetch),
                     RatioSpec("engine, cold", over: "GRDB records", phase: .release),
                     RatioSpec("engine, warm", over: "raw SQLite", phase: .fetch)],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let path = store.path
                return [
                    .phased { clock in
                        .engine("engine, cold", model: model, store: store) { Bench.sink(try RowWorkload.fetchUseRelease($0, clock: clock)) }
                    },
                    // Warm: the context still holds last fetch's objects (the program kept them), so the fetch
                    // finds each row's object registered and its snapshot current.
                    .phased { clock in
                        .engine("engine, warm", model: model, store: store, prime: { try RowWorkload.fetchMaterializedObjects($0).objects }) { context, _ in
                            Bench.sink(try RowWorkload.fetchUseRelease(context, clock: clock))
                        }
                    },
                    .phased { clock in .raw(path: path) { Bench.sink(try RawSQLite.fetchUseRelease($0, clock: clock)) } },
                    .phased { clock in .grdb(path: path) { Bench.sink(try GRDBPeer.fetchUseRelease($0, clock: clock)) } },
                ]
            },
            judge: { m in
                guard let raw = m.ratio("engine, cold", "raw SQLite", phase: .fetch), let grdb = m.ratio("engine, cold", "GRDB records") else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: raw <= 1.25 && grdb <= 1,
                               "fetch phase \(BenchFormat.ratio(raw)) raw SQLite (target ≤ 1.25×); fetch, use and release \(BenchFormat.ratio(grdb)) GRDB records (target ≤ 1×); "
                               + Bench.phaseSummary(m, ["engine, cold", "GRDB records", "raw SQLite"])
                               + "; warm fetch phase \(BenchFormat.ratio(m.ratio("engine, warm", "raw SQLite", phase: .fetch) ?? .nan)) raw")
            })
    }

    /// B-RESULTTYPES: the same request as objects, faults, IDs, dictionaries and a count.
    static var resultTypes: BenchScenario {
        BenchScenario(
            id: "result-types", title: "Result types: objects, faults, IDs, dictionaries, count",
            claim: "A count request is far cheaper than fetching and counting; object IDs without property values are the cheapest fetch; a dictionary of two attributes costs less than full objects.",
            theme: .fetchShape, sources: [ClaimSource.objcio("Accessing Data", "Fetch Requests", "P-68", "P-69", "P-70", "P-71", "P-72", "B-RESULTTYPES")],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let half = Int64(setup.scale.rows * 5)
                let base = try Bench.request("Row", "a0 < %@", half, materialized: false)
                let objects = base.copy()
                objects.returnsObjectsAsFaults = false
                let ids = base.copy()
                ids.includesPropertyValues = false
                let dictionaries = base.copy()
                dictionaries.propertiesToFetch = [PropertyToFetch("a0"), PropertyToFetch("a9")]
                return [
                    .engine("objects", model: model, store: store) { Bench.sink(Int64(try $0.fetch(objects).count)) },
                    .engine("faults", model: model, store: store) { Bench.sink(Int64(try $0.fetch(base).count)) },
                    .engine("object IDs", model: model, store: store) { Bench.sink(Int64(try $0.fetchObjectIDs(ids).count)) },
                    .engine("dictionaries (2 keys)", model: model, store: store) { Bench.sink(Int64(try $0.fetchDictionaries(dictionaries).count)) },
                    .engine("count", model: model, store: store) { Bench.sink(Int64(try $0.count(for: base))) },
                ]
            },
            judge: { m in
                guard let objects = m.median("objects"), let ids = m.median("object IDs"), let count = m.median("count"),
                      let faults = m.median("faults"), let dictionaries = m.median("dictionaries (2 keys)") else {
                    return Verdict(held: nil, "not measured")
                }
                let cheapestFetch = ids <= min(objects, faults, dictionaries)
                let held = count * 5 <= objects && cheapestFetch && dictionaries < objects
                return Verdict(held: held, "objects \(BenchFormat.seconds(objects)), faults \(BenchFormat.seconds(faults)), IDs \(BenchFormat.seconds(ids)), dictionaries \(BenchFormat.seconds(dictionaries)), count \(BenchFormat.seconds(count)) (count is \(BenchFormat.ratio(objects / count)) cheaper than objects)")
            })
    }

    /// B-BATCH: a scrolling list over a large result with different batch sizes.
    static var batchSize: BenchScenario {
        let sizes = [0, 5, 13, 20, 50, 200, 1_000]
        func name(_ size: Int) -> String { size == 0 ? "no batch size" : "batch \(size)" }
        return BenchScenario(
            id: "batch-size", title: "Batch size sweep: a scrolling list of 10-row screens",
            claim: "Without a batch size every row is read and cached up front; with one, only what is shown is read. A batch of 1.3–2× the visible rows is about optimal.",
            theme: .fetchShape, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests", "P-29", "P-30", "B-BATCH"), ClaimSource.objcio("Accessing Data", "Fetch Requests", "P-73", "P-74", "P-75"), ClaimSource.objcio("Hello Core Data", "Fetched Results Controller", "P-49")],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(max(1_000, setup.scale.rows / 2))
                let screens = 20, screen = 10
                return sizes.map { size in
                    .engine(name(size), model: model, store: store, operations: screens) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "Row", sortDescriptors: [FetchSortDescriptor(keyPath: "a0")])
                        request.fetchBatchSize = size
                        let rows = try context.fetch(request)
                        var sum: Int64 = 0
                        // Scroll: each screen shows the next 10 rows and reads two attributes of each.
                        for row in rows.prefix(screens * screen) { sum &+= row[RowWorkload.keys[0]] &+ row[RowWorkload.keys[9]] }
                        Bench.sink(sum)
                    }
                }
            },
            judge: { m in
                let batched = sizes.dropFirst().compactMap { size in m.median(name(size)).map { (size, $0) } }
                guard let none = m.median(name(0)), let best = batched.min(by: { $0.1 < $1.1 }), let twenty = m.median(name(20)),
                      let cached = m.counters(name(0))?.cacheHits, let misses = m.counters(name(20))?.cacheMisses else {
                    return Verdict(held: nil, "not measured")
                }
                // Held when batching beats fetching everything and a batch of 20 (2× the screen) is within 20% of the best.
                let held = best.1 < none && twenty <= best.1 * 1.2
                return Verdict(held: held, "fastest: \(name(best.0)) (\(BenchFormat.ratio(none / best.1)) faster than no batch size); batch 20 \(BenchFormat.ratio(twenty / best.1)) the fastest; no batch size filled the row cache with every row (\(cached) faults then hit it), batch 20 read \(misses) batches")
            })
    }

    /// Point lookups by primary key, against raw SQLite and GRDB.
    static var pointLookup: BenchScenario {
        BenchScenario(
            id: "point-lookup", title: "Point lookups by key, with peers",
            claim: "Fetching one object by its ID costs one indexed SELECT plus object set-up: fetching, reading and releasing 5,000 objects one by one no slower than GRDB records doing the same.",
            theme: .avoidingFetches, sources: [ClaimSource.objcio("Accessing Data", "Other Ways to Get Managed Objects", "P-78"), ClaimSource(.grdb, "fetch by primary key")],
            ratios: [RatioSpec("engine existingObject", over: "raw SQLite"),
                     RatioSpec("engine existingObject", over: "GRDB records", limit: 1.0, target: "≤ 1× end to end"),
                     RatioSpec("engine existingObject", over: "raw SQLite", phase: .fetch),
                     RatioSpec("engine, pinned query generation", over: "GRDB records")],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let all = try Bench.objectIDs("Row", model: model, store: store)
                var random = SeededGenerator(seed: 78)
                let ids = (0..<min(all.count, 5_000)).map { _ in all.randomElement(using: &random)! }
                let keys = ids.compactMap(\.primaryKey)
                let path = store.path
                return [
                    .phased { clock in
                        .engine("engine existingObject", model: model, store: store, operations: ids.count) { context in
                            Bench.sink(try RowWorkload.pointLookups(context, ids: ids, clock: clock))
                        }
                    },
                    // Where Core Data reads inside one read transaction: a context pinned to a query generation
                    // (its reads see the store as it was when pinned), as GRDB's `read` runs its lookups in one.
                    .phased { clock in
                        .engine("engine, pinned query generation", model: model, store: store, operations: ids.count,
                                prime: { try $0.setQueryGenerationFrom(.current) }) { context, _ in
                            Bench.sink(try RowWorkload.pointLookups(context, ids: ids, clock: clock))
                        }
                    },
                    .phased { clock in .raw(path: path, operations: keys.count) { Bench.sink(try RawSQLite.pointLookups($0, keys: keys, clock: clock)) } },
                    .phased { clock in .grdb(path: path, operations: keys.count) { Bench.sink(try GRDBPeer.pointLookups($0, keys: keys, clock: clock)) } },
                ]
            },
            judge: { m in
                guard let raw = m.ratio("engine existingObject", "raw SQLite"), let grdb = m.ratio("engine existingObject", "GRDB records"),
                      let statements = m.counters("engine existingObject")?.statements else {
                    return Verdict(held: nil, "not measured")
                }
                let lookups = m["engine existingObject"]?.operations ?? 0
                let pinned = m.ratio("engine, pinned query generation", "GRDB records").map(BenchFormat.ratio) ?? "n/a"
                return Verdict(held: statements <= lookups + 2 && grdb <= 1,
                               "\(statements) statements for \(lookups) lookups; end to end \(BenchFormat.ratio(grdb)) GRDB (target ≤ 1×), \(BenchFormat.ratio(raw)) raw SQLite; "
                               + "pinned to a query generation (one read transaction) \(pinned) GRDB; "
                               + Bench.phaseSummary(m, ["engine existingObject", "GRDB records", "raw SQLite"]))
            })
    }

    /// An indexed range query, against raw SQLite and GRDB.
    static var rangeQuery: BenchScenario {
        BenchScenario(
            id: "range-query", title: "Indexed range queries, with peers",
            claim: "A range predicate on an indexed attribute is answered through the index; fetching, reading and releasing the objects no slower than GRDB records doing the same.",
            theme: .indexes, sources: [ClaimSource.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-12", "P-13", "P-14"), ClaimSource(.grdb, "range query on an indexed column")],
            ratios: [RatioSpec("engine", over: "raw SQLite"), RatioSpec("engine", over: "GRDB records", limit: 1.0, target: "≤ 1× end to end"),
                     RatioSpec("engine", over: "GRDB records", phase: .fetch), RatioSpec("engine", over: "GRDB records", phase: .release)],
            variants: { setup in
                let model = try CityWorkload.model()
                let store = try setup.data.cities(setup.scale.part(2, minimum: 1_000), indexedPopulation: true, residents: false)
                var random = SeededGenerator(seed: 13)
                let ranges: [(Int64, Int64)] = (0..<100).map { _ in
                    let low = Int64.random(in: 10_000...200_000, using: &random)
                    return (low, low + low / 50)
                }
                let sql = "SELECT \(CityWorkload.rowColumns) FROM ZCITY WHERE ZPOPULATION BETWEEN ? AND ?"
                let path = store.path
                return [
                    .phased { clock in
                        .engine("engine", model: model, store: store, operations: ranges.count) { context in
                            Bench.sink(Int64(try CityWorkload.rangeQueries(context, ranges: ranges, clock: clock)))
                        }
                    },
                    .phased { clock in
                        .raw(path: path, operations: ranges.count) { Bench.sink(Int64(try RawSQLite.rangeQueries($0, sql: sql, ranges: ranges, clock: clock))) }
                    },
                    .phased { clock in
                        .grdb(path: path, operations: ranges.count) { Bench.sink(Int64(try GRDBPeer.rangeQueries($0, sql: sql, ranges: ranges, clock: clock))) }
                    },
                ]
            },
            judge: { m in
                guard let counters = m.counters("engine"), let raw = m.ratio("engine", "raw SQLite"), let grdb = m.ratio("engine", "GRDB records") else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: counters.fullScanStatements == 0 && grdb <= 1,
                               "\(counters.fullScanStatements) full scans in \(counters.fetches) fetches; end to end \(BenchFormat.ratio(grdb)) GRDB (target ≤ 1×), \(BenchFormat.ratio(raw)) raw SQLite; "
                               + Bench.phaseSummary(m, ["engine", "GRDB records", "raw SQLite"]))
            })
    }
}
