import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-PREFETCH (to-one): each city's mayor, one at a time, prefetched, or batch-faulted.
    static var prefetchMayors: BenchScenario {
        BenchScenario(
            id: "prefetch-mayors", title: "N+1 versus prefetching versus batch faulting (City.mayor)",
            claim: "Touching a to-one relationship of N fetched objects fires N faults, each a SELECT (N+1); prefetching the key path needs one more statement in all, and batch faulting the destinations one per batch.",
            theme: .nPlusOne, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests", "P-32", "B-PREFETCH")],
            ratios: [RatioSpec("prefetch", over: "N+1"), RatioSpec("batch faulting", over: "N+1")],
            model: { try CityWorkload.model() }, snapshots: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let store = try setup.data.cities(setup.scale.part(50, minimum: 200))
                let cities = min(2_000, setup.scale.part(50, minimum: 200))
                func request(prefetching: Bool) -> FetchRequest<ManagedObject> {
                    let request = FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
                    request.fetchLimit = cities
                    request.returnsObjectsAsFaults = false
                    if prefetching { request.relationshipKeyPathsForPrefetching = ["mayor"] }
                    return request
                }
                func names(of mayors: [ManagedObject?]) -> Int64 {
                    Int64(mayors.reduce(0) { $0 + ($1?[CityWorkload.personName].utf8.count ?? 0) })
                }
                return [
                    .engine("N+1", model: model, store: store, operations: cities) { context in
                        Bench.sink(names(of: try context.fetch(request(prefetching: false)).map { $0[CityWorkload.mayor] }))
                    },
                    .engine("prefetch", model: model, store: store, operations: cities) { context in
                        Bench.sink(names(of: try context.fetch(request(prefetching: true)).map { $0[CityWorkload.mayor] }))
                    },
                    .engine("batch faulting", model: model, store: store, operations: cities) { context in
                        let mayors = try context.fetch(request(prefetching: false)).compactMap { $0[CityWorkload.mayor] }
                        try context.fulfillFaults(for: mayors)
                        Bench.sink(names(of: mayors))
                    },
                ]
            },
            judge: { m in
                guard let plain = m.counters("N+1"), let prefetch = m.counters("prefetch"), let batch = m.counters("batch faulting"),
                      let speedup = m.ratio("N+1", "prefetch") else { return Verdict(held: nil, "not measured") }
                return Verdict(held: prefetch.statements <= 3 && plain.cacheMisses >= (m["N+1"]?.operations ?? 0) && speedup > 1,
                               "statements: N+1 \(plain.statements) (\(plain.cacheMisses) cache misses), prefetch \(prefetch.statements), batch faulting \(batch.statements); prefetch \(BenchFormat.ratio(speedup)) faster")
            })
    }

    /// B-PREFETCH (to-many): each department's employees, one relationship fault at a time or prefetched.
    static var prefetchEmployees: BenchScenario {
        BenchScenario(
            id: "prefetch-employees", title: "N+1 versus prefetching versus batch faulting (Department.employees)",
            claim: "Reading a to-many relationship of N fetched objects fires N relationship faults and then a fault per member; batch faulting the members needs one statement for all of them, and prefetching the key path loads everything with a constant number of statements.",
            theme: .nPlusOne, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests", "P-32", "B-PREFETCH"), ClaimSource.apple("Performance", "Decreasing Fault Overhead", "perf-9", "perf-11", "B1")],
            ratios: [RatioSpec("prefetch", over: "N+1"), RatioSpec("batch faulting", over: "N+1")],
            model: { try EmployeeWorkload.model() },
            variants: { setup in
                let model = try EmployeeWorkload.model()
                let store = try setup.data.employees(setup.scale.part(2, minimum: 1_000))
                let departments = min(500, setup.scale.part(2, minimum: 1_000) / EmployeeWorkload.employeesPerDepartment)
                func run(_ context: ManagedObjectContext, prefetching: Bool = false, batchFaulting: Bool = false) throws {
                    let request = FetchRequest<ManagedObject>(entityName: "Department")
                    request.fetchLimit = departments
                    request.returnsObjectsAsFaults = false
                    if prefetching { request.relationshipKeyPathsForPrefetching = ["employees"] }
                    let fetched = try context.fetch(request)
                    // Batch faulting: the relationship faults fire one by one, their members are fulfilled together.
                    if batchFaulting { try context.fulfillFaults(for: fetched.flatMap { $0[EmployeeWorkload.employees] }) }
                    var total = 0.0
                    for department in fetched {
                        for employee in department[EmployeeWorkload.employees] { total += employee[EmployeeWorkload.salary] }
                    }
                    Bench.sink(Int64(total))
                }
                return [
                    .engine("N+1", model: model, store: store, operations: departments) { try run($0) },
                    .engine("prefetch", model: model, store: store, operations: departments) { try run($0, prefetching: true) },
                    .engine("batch faulting", model: model, store: store, operations: departments) { try run($0, batchFaulting: true) },
                ]
            },
            judge: { m in
                guard let plain = m.counters("N+1"), let prefetch = m.counters("prefetch"), let batch = m.counters("batch faulting"),
                      let speedup = m.ratio("N+1", "prefetch"), let batchSpeedup = m.ratio("N+1", "batch faulting") else {
                    return Verdict(held: nil, "not measured")
                }
                let departments = m["N+1"]?.operations ?? 0
                return Verdict(held: prefetch.statements <= 3 && batch.statements <= departments + 2 && plain.statements > batch.statements && speedup > 1 && batchSpeedup > 1,
                               "statements: N+1 \(plain.statements), batch faulting \(batch.statements), prefetch \(prefetch.statements); prefetch \(BenchFormat.ratio(speedup)) faster, batch faulting \(BenchFormat.ratio(batchSpeedup)) faster")
            })
    }

    /// B-REL-TO1 / B-REL-TOMANY: traversing a relationship versus fetching its destination, by registration state.
    static var traversal: BenchScenario {
        BenchScenario(
            id: "traversal-vs-fetch", title: "Relationship traversal versus fetch, by registration state",
            claim: "Traversing a to-one relationship is never slower than fetching its destination, and far faster when it is registered (no SQL). For a to-many relationship traversal wins when the members are registered; when they are not, a fetch (or a compromise) wins.",
            theme: .avoidingFetches, sources: [ClaimSource.objcio("Performance", "Avoiding Fetch Requests", "P-16", "P-19", "P-20", "B-REL-TO1", "B-REL-TOMANY"), ClaimSource.objcio("Hello Core Data", "Fetch Requests", "P-48")],
            model: { try CityWorkload.model() }, snapshots: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let store = try setup.data.cities(setup.scale.part(50, minimum: 200))
                let count = min(500, setup.scale.part(50, minimum: 200))
                let request = FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
                request.fetchLimit = count
                request.returnsObjectsAsFaults = false
                let people = FetchRequest<ManagedObject>(entityName: "Person")
                func cities(_ context: ManagedObjectContext, registering share: Int) throws -> [ManagedObject] {
                    // Registered: fetched before, and kept by the context (Core Data's retainsRegisteredObjects),
                    // where by default it would let go of objects the program no longer references. Half: the
                    // people at even positions.
                    if share > 0 {
                        context.retainsRegisteredObjects = true
                        let all = try context.fetchObjectIDs(people)
                        let some = people.copy()
                        some.objectIDs = share == 100 ? all : all.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
                        some.returnsObjectsAsFaults = false
                        _ = try context.fetch(some).map { $0[CityWorkload.personName] }
                    }
                    return try context.fetch(request)
                }
                func sum(_ people: [ManagedObject]) -> Int64 { Int64(people.reduce(0) { $0 + $1[CityWorkload.personName].utf8.count }) }
                var variants: [BenchVariant] = []
                for share in [0, 50, 100] {
                    let state = share == 0 ? "not registered" : share == 100 ? "registered" : "half registered"
                    if share != 50 {
                        variants.append(.engine("mayor: traverse, \(state)", model: model, store: store, operations: count,
                                                prime: { try cities($0, registering: share) }) { _, cities in
                            Bench.sink(sum(cities.compactMap { $0[CityWorkload.mayor] }))
                        })
                        variants.append(.engine("mayor: fetch, \(state)", model: model, store: store, operations: count,
                                                prime: { try cities($0, registering: share) }) { context, cities in
                            var found: [ManagedObject] = []
                            for city in cities { found += try context.fetch(try Bench.request("Person", "mayorOf == %@", city)) }
                            Bench.sink(sum(found))
                        })
                    }
                    variants.append(.engine("residents: traverse, \(state)", model: model, store: store, operations: count,
                                            prime: { try cities($0, registering: share) }) { _, cities in
                        Bench.sink(sum(cities.flatMap { $0[CityWorkload.residents] }))
                    })
                    variants.append(.engine("residents: fetch, \(state)", model: model, store: store, operations: count,
                                            prime: { try cities($0, registering: share) }) { context, cities in
                        var found: [ManagedObject] = []
                        for city in cities { found += try context.fetch(try Bench.request("Person", "homeTown == %@", city)) }
                        Bench.sink(sum(found))
                    })
                    // The book's compromise: traverse, then one fetch for the members still faults (fetchFaults).
                    variants.append(.engine("residents: traverse + fetch faults, \(state)", model: model, store: store, operations: count,
                                            prime: { try cities($0, registering: share) }) { context, cities in
                        let residents = cities.flatMap { $0[CityWorkload.residents] }
                        try context.fulfillFaults(for: residents)
                        Bench.sink(sum(residents))
                    })
                }
                return variants
            },
            judge: { m in
                func speedup(_ relation: String, _ state: String) -> Double? {
                    m.ratio("\(relation): fetch, \(state)", "\(relation): traverse, \(state)")
                }
                guard let mayorCold = speedup("mayor", "not registered"), let mayorWarm = speedup("mayor", "registered"),
                      let residentsCold = speedup("residents", "not registered"), let residentsWarm = speedup("residents", "registered"),
                      let registered = m.counters("mayor: traverse, registered") else { return Verdict(held: nil, "not measured") }
                // To-one: traversal no slower (10% noise allowed), far faster and SQL-free when registered.
                // To-many: traversal faster when registered.
                let held = mayorCold >= 0.9 && mayorWarm >= 3 && registered.statements == 0 && residentsWarm > 1
                let notes = ["mayor not registered \(BenchFormat.ratio(mayorCold))", "mayor registered \(BenchFormat.ratio(mayorWarm)) (\(registered.statements) statements)",
                             "residents not registered \(BenchFormat.ratio(residentsCold))", "residents half registered \(speedup("residents", "half registered").map(BenchFormat.ratio) ?? "n/a")",
                             "residents registered \(BenchFormat.ratio(residentsWarm))"]
                // The compromise against the better of the other two, at each registration.
                let compromise = ["not registered", "half registered", "registered"].compactMap { state -> String? in
                    guard let c = m.median("residents: traverse + fetch faults, \(state)"), let t = m.median("residents: traverse, \(state)"),
                          let f = m.median("residents: fetch, \(state)") else { return nil }
                    return "\(state) \(BenchFormat.ratio(c / min(t, f)))"
                }
                return Verdict(held: held, "traversal speed-up over a fetch: " + notes.joined(separator: ", ")
                               + "; traverse + fetch faults against the better of the two: " + compromise.joined(separator: ", "))
            })
    }
}
