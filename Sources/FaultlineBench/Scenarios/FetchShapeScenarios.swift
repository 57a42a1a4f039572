import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-SORT: sorted by SQLite through an index, by SQLite without one, or fetched unsorted and sorted in memory.
    static var sortInSQLite: BenchScenario {
        let indexed = "SQLite, indexed (population)", unindexed = "SQLite, no index (name)", inMemory = "in memory (name, after the fetch)"
        return BenchScenario(
            id: "sort-in-sqlite", title: "N cities in order: sorted by SQLite with an index, without one, or in memory after the fetch",
            claim: "Sort in SQLite, not afterwards in memory: with an index the order is free, without one SQLite still sorts faster than the objects can be sorted once made.",
            theme: .sorting,
            sources: [.objcio("Performance", "Optimizing Fetch Requests", "P-26", "B-SORT")],
            ratios: [RatioSpec(indexed, over: inMemory), RatioSpec(unindexed, over: inMemory)],
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let cities = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.cities(cities, indexedPopulation: true, residents: false)
                return [
                    .engine(indexed, model: model, store: store, operations: cities) { context in
                        let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "population")]))
                        Bench.sink(objects.first?[CityWorkload.population] ?? 0)
                    },
                    .engine(unindexed, model: model, store: store, operations: cities) { context in
                        let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "name")]))
                        Bench.sink(Int64(objects.first?[CityWorkload.name].count ?? 0))
                    },
                    .engine(inMemory, model: model, store: store, operations: cities) { context in
                        let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: "City"))
                        let sorted = objects.sorted { $0[CityWorkload.name] < $1[CityWorkload.name] }
                        Bench.sink(Int64(sorted.first?[CityWorkload.name].count ?? 0))
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(indexed), let b = m.counters(unindexed), let c = m.counters(inMemory),
                      let indexedRatio = m.ratio(indexed, inMemory), let unindexedRatio = m.ratio(unindexed, inMemory) else { return Verdict(held: nil, "not measured") }
                let held = a.sortingStatements == 0 && b.sortingStatements == 1 && indexedRatio < 1 && unindexedRatio < 1
                return Verdict(held: held, "SQLite's order through the index: \(a.sortingStatements) sort (\(BenchFormat.ratio(indexedRatio)) of the in-memory sort's time); "
                               + "without an index: \(b.sortingStatements) temporary B-tree (\(BenchFormat.ratio(unindexedRatio))); in memory: \(c.fetchedObjects) objects made, then sorted")
            })
    }

    /// objc.io's Text chapter: about 4,000 names sorted for people (localizedStandardCompare) — in memory, as SQLite
    /// cannot — against SQLite's byte order.
    static var localizedSort: BenchScenario {
        let bytes = "SQLite's byte order (ORDER BY name)", localized = "localizedStandardCompare (in memory, after the fetch)"
        return BenchScenario(
            id: "localized-sort", title: "About 4,000 city names in order: SQLite's byte order, or sorted for people (localizedStandardCompare)",
            claim: "Sorting user-visible strings as people expect (Unicode collation) cannot be done by SQLite, which orders by the strings' bytes: it runs in memory after the fetch and is very expensive — about 300 ms for 4,000 names on a 2.7 GHz MacBook Pro.",
            theme: .sorting,
            sources: [.objcio("Text", "Sorting", "X11", "X12", "X13")],
            ratios: [RatioSpec(localized, over: bytes)],
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let cities = min(4_000, setup.scale.part(2, minimum: 1_000))
                let store = try setup.data.cities(cities, indexedPopulation: false, residents: false)
                func run(_ context: ManagedObjectContext, _ sort: FetchSortDescriptor) throws {
                    let objects = try context.fetch(FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [sort]))
                    Bench.sink(Int64(objects.first?[CityWorkload.name].utf8.count ?? 0))
                }
                return [
                    .engine(bytes, model: model, store: store, operations: cities) { try run($0, FetchSortDescriptor(keyPath: "name")) },
                    .engine(localized, model: model, store: store, operations: cities) { try run($0, FetchSortDescriptor(keyPath: "name", comparison: .localized)) },
                ]
            },
            judge: { m in
                guard let a = m.counters(bytes), let b = m.counters(localized), let ratio = m.ratio(localized, bytes),
                      let time = m[localized]?.median, let names = m[localized]?.operations else { return Verdict(held: nil, "not measured") }
                let held = a.sortingStatements == 1 && b.sortingStatements == 0 && ratio > 1.5
                return Verdict(held: held, "SQLite sorts by bytes in \(a.sortingStatements) statement; the people's order is \(b.sortingStatements) SQL sort and one in memory: "
                               + "\(BenchFormat.ratio(ratio)) the time (\(BenchFormat.seconds(time)) for \(names) names, the book's 300 ms for 4,000 on a 2012 laptop)")
            })
    }

    /// B3: the whole table, the first screen (fetchLimit 100), the first screen then the rest (fetchOffset).
    static var paging: BenchScenario {
        let all = "everything", screen = "first screen (fetchLimit 100)", progressive = "first screen, then the rest (fetchOffset 100)"
        let pageSize = 100
        return BenchScenario(
            id: "paging", title: "Time to the first screen: fetch everything, fetch 100, fetch 100 then the rest",
            claim: "A fetch limit keeps the working set small: the first 100 objects arrive far sooner than the whole table, and loading the rest afterwards with fetchOffset costs little more than one fetch of everything.",
            theme: .fetchShape,
            sources: [.apple("Performance", "Fetch Limits", "perf-6", "perf-7", "B3"), ClaimSource(.studyNotes, "Advanced", "Performance tips", keys: ["perf-26"])],
            ratios: [RatioSpec(screen, over: all), RatioSpec(progressive, over: all)],
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let cities = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.cities(cities, indexedPopulation: true, residents: false)
                func page(_ context: ManagedObjectContext, limit: Int, offset: Int) throws -> Int {
                    let request = FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "population", ascending: false)])
                    request.fetchLimit = limit
                    request.fetchOffset = offset
                    return try context.fetch(request).count
                }
                return [
                    .engine(all, model: model, store: store) { Bench.sink(Int64(try page($0, limit: 0, offset: 0))) },
                    .engine(screen, model: model, store: store) { Bench.sink(Int64(try page($0, limit: pageSize, offset: 0))) },
                    .engine(progressive, model: model, store: store) { context in
                        Bench.sink(Int64(try page(context, limit: pageSize, offset: 0) + page(context, limit: 0, offset: pageSize)))
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(all), let s = m.counters(screen), let p = m.counters(progressive),
                      let first = m.ratio(screen, all), let both = m.ratio(progressive, all) else { return Verdict(held: nil, "not measured") }
                let held = s.rows == pageSize && p.rows == a.rows && first <= 0.2 && both <= 1.25
                return Verdict(held: held, "the first screen: \(s.rows) rows in \(BenchFormat.ratio(first)) of the time of all \(a.rows); "
                               + "the first screen then the rest: \(p.statements) statements, \(p.rows) rows, \(BenchFormat.ratio(both)) of one fetch of everything")
            })
    }

    /// W-004-3: the earliest date three ways — every object sorted, a sorted fetch of one, a min: aggregate.
    static var earliestValue: BenchScenario {
        let everything = "fetch all, sorted, take the first", one = "sorted, fetchLimit 1", aggregate = "min: in a dictionary fetch"
        return BenchScenario(
            id: "earliest-value", title: "The smallest value of an attribute: fetch everything sorted, fetch one, ask SQLite for min",
            claim: "To find the earliest date, do not fetch every object sorted and take the first: a sorted fetch with a limit of 1 reads one row, and a min: expression in a dictionary fetch computes it in SQLite.",
            theme: .fetchShape,
            sources: [ClaimSource(.studyNotes, "Understanding", "Fetching", keys: ["perf-17", "004-F7", "W-004-3"])],
            ratios: [RatioSpec(one, over: everything), RatioSpec(aggregate, over: everything)],
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let cities = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.cities(cities, indexedPopulation: true, residents: false)
                let order = [FetchSortDescriptor(keyPath: "population")]
                return [
                    .engine(everything, model: model, store: store) { context in
                        Bench.sink(try context.fetch(FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: order)).first?[CityWorkload.population] ?? 0)
                    },
                    .engine(one, model: model, store: store) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: order)
                        request.fetchLimit = 1
                        Bench.sink(try context.fetch(request).first?[CityWorkload.population] ?? 0)
                    },
                    .engine(aggregate, model: model, store: store) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "City")
                        request.propertiesToFetch = [PropertyToFetch(.min, "population", as: "earliest")]
                        Bench.sink(try context.fetchDictionaries(request).first?["earliest"] as? Int64 ?? 0)
                    },
                ]
            },
            judge: { m in
                guard let e = m.counters(everything), let o = m.counters(one), let a = m.counters(aggregate),
                      let oneRatio = m.ratio(one, everything), let minRatio = m.ratio(aggregate, everything) else { return Verdict(held: nil, "not measured") }
                let held = o.rows == 1 && a.rows == 1 && oneRatio < 0.2 && minRatio < 0.2
                return Verdict(held: held, "rows read: \(e.rows), \(o.rows), \(a.rows); a fetch of one takes \(BenchFormat.ratio(oneRatio)) of the time of fetching all, min: \(BenchFormat.ratio(minRatio))")
            })
    }
}
