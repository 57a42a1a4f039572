import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-IDLOOKUP: the three ways to get an object from its ID, for objects the context has and has not registered.
    static var idLookups: BenchScenario {
        let registered = "registeredObject(for:)", object = "object(with:)", existing = "existingObject(with:)", existingRegistered = "existingObject(with:), registered"
        return BenchScenario(
            id: "id-lookups", title: "An object from its ID: registeredObject(for:), object(with:), existingObject(with:)",
            claim: "registeredObject(for:) does no I/O (nil for an object the context does not have); object(with:) does none either (a fault, read when touched); existingObject(with:) reads the row when the object is not registered — one round trip each — and none when it is.",
            theme: .avoidingFetches,
            sources: [.objcio("Accessing Data", "Other Ways to Get Managed Objects", "P-78", "B-IDLOOKUP")],
            ratios: [RatioSpec(existing, over: object)],
            variants: { setup in
                let model = try RowWorkload.model()
                let lookups = min(5_000, setup.scale.part(4, minimum: 100))
                let store = try setup.data.rows(max(lookups, setup.scale.part(4, minimum: 100)))
                func ids(_ context: ManagedObjectContext) throws -> [ManagedObjectID] {
                    let request = FetchRequest<ManagedObject>(entityName: "Row")
                    request.fetchLimit = lookups
                    return try context.fetchObjectIDs(request)
                }
                return [
                    .engine(registered, model: model, store: store, operations: lookups, prime: ids) { context, ids in
                        Bench.sink(Int64(ids.reduce(0) { $0 + (context.registeredObject(for: $1) == nil ? 0 : 1) }))
                    },
                    .engine(object, model: model, store: store, operations: lookups, prime: ids) { context, ids in
                        Bench.sink(Int64(ids.reduce(0) { $0 + (context.object(with: $1).isFault ? 1 : 0) }))
                    },
                    .engine(existing, model: model, store: store, operations: lookups, prime: ids) { context, ids in
                        Bench.sink(Int64(try ids.reduce(0) { $0 + (try context.existingObject(with: $1).isFault ? 0 : 1) }))
                    },
                    .engine(existingRegistered, model: model, store: store, operations: lookups, prime: { context -> ([ManagedObjectID], [ManagedObject]) in
                        let request = FetchRequest<ManagedObject>(entityName: "Row")
                        request.fetchLimit = lookups
                        request.returnsObjectsAsFaults = false
                        let objects = try context.fetch(request)
                        return (objects.map(\.objectID), objects)
                    }) { context, primed in
                        Bench.sink(Int64(try primed.0.reduce(0) { $0 + (try context.existingObject(with: $1).isFault ? 0 : 1) }))
                    },
                ]
            },
            judge: { m in
                let counts = [registered, object, existing, existingRegistered].compactMap { m.counters($0)?.statements }
                guard counts.count == 4, let lookups = m[existing]?.operations, let ratio = m.ratio(existing, object) else { return Verdict(held: nil, "not measured") }
                let held = counts == [0, 0, lookups, 0]
                return Verdict(held: held, "statements for \(lookups) lookups: registeredObject(for:) \(counts[0]), object(with:) \(counts[1]), existingObject(with:) \(counts[2]) (\(counts[3]) when registered); existingObject(with:) takes \(BenchFormat.ratio(ratio)) the time of object(with:)")
            })
    }

    /// B-FINDORFETCH: looking objects up by a unique value — a fetch each, the registered objects first, or the
    /// registered objects when they are faults.
    static var findOrFetch: BenchScenario {
        let fetchEach = "fetch each (fetchLimit 1)", scan = "scan the registered objects (materialized)", faults = "scan the registered objects (faults)"
        return BenchScenario(
            id: "find-or-fetch", title: "Find or fetch: K lookups by a unique value among N objects",
            claim: "Before fetching an object by a unique value, look among the context's registered objects: a scan of objects in memory is much faster than a fetch, even over many objects — but a scan that evaluates its predicate on faults fires every one of them, a round trip each: a disaster.",
            theme: .avoidingFetches,
            sources: [.objcio("Performance", "Avoiding Fetch Requests", "P-22", "P-51", "P-52", "B-FINDORFETCH")],
            ratios: [RatioSpec(scan, over: fetchEach), RatioSpec(faults, over: fetchEach)],
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = min(20_000, setup.scale.part(10, minimum: 200))
                let lookups = 100
                let store = try setup.data.rows(rows)
                // The unique values looked up: a0 is 10 × (the row's number − 1).
                let wanted = (0..<lookups).map { Int64(($0 * 37) % rows * 10) }
                func register(_ context: ManagedObjectContext, asFaults: Bool) throws -> [ManagedObject] {
                    let request = FetchRequest<ManagedObject>(entityName: "Row")
                    request.returnsObjectsAsFaults = asFaults
                    request.includesPropertyValues = !asFaults
                    return try context.fetch(request)
                }
                func lookUp(_ objects: [ManagedObject], skippingFaults: Bool) -> Int {
                    var found = 0
                    for value in wanted {
                        if objects.first(where: { !(skippingFaults && $0.isFault) && $0[RowWorkload.keys[0]] == value }) != nil { found += 1 }
                    }
                    return found
                }
                return [
                    .engine(fetchEach, model: model, store: store, operations: lookups) { context in
                        var found = 0
                        for value in wanted {
                            let request = try Bench.request("Row", "a0 == %@", value)
                            request.fetchLimit = 1
                            found += try context.fetch(request).count
                        }
                        Bench.sink(Int64(found))
                    },
                    .engine(scan, model: model, store: store, operations: lookups, prime: { try register($0, asFaults: false) }) { _, objects in
                        Bench.sink(Int64(lookUp(objects, skippingFaults: true)))
                    },
                    .engine(faults, model: model, store: store, operations: lookups, prime: { try register($0, asFaults: true) }) { _, objects in
                        Bench.sink(Int64(lookUp(objects, skippingFaults: false)))
                    },
                ]
            },
            judge: { m in
                guard let f = m.counters(fetchEach), let s = m.counters(scan), let d = m.counters(faults),
                      let scanRatio = m.ratio(scan, fetchEach), let faultRatio = m.ratio(faults, fetchEach) else { return Verdict(held: nil, "not measured") }
                let held = s.statements == 0 && f.statements == (m[fetchEach]?.operations ?? -1) && d.statements > f.statements && scanRatio < 1 && faultRatio > 1
                return Verdict(held: held, "statements: a fetch each \(f.statements), the registered objects \(s.statements), the registered faults \(d.statements) (\(d.faults) faults fired); "
                               + "time against a fetch each: the scan \(BenchFormat.ratio(scanRatio)), the scan of faults \(BenchFormat.ratio(faultRatio))")
            })
    }

    /// P-68: fetching without property values, then using every object.
    static var propertyValuesOff: BenchScenario {
        let values = "includesPropertyValues = true (the default)", noValues = "includesPropertyValues = false, then every object used"
        return BenchScenario(
            id: "property-values-off", title: "Fetching without property values, then using the objects",
            claim: "includesPropertyValues = false makes the fetch cheap, but each object used afterwards costs a round trip of its own: N + 1 statements where one would do.",
            theme: .avoidingFetches,
            sources: [.objcio("Accessing Data", "Fetch Requests", "P-68", "P-69"), .apple("Performance", "Reducing Memory Overhead", "perf-12")],
            ratios: [RatioSpec(noValues, over: values)],
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = min(20_000, setup.scale.part(10, minimum: 200))
                let store = try setup.data.rows(rows)
                func run(_ context: ManagedObjectContext, includesValues: Bool) throws {
                    let request = FetchRequest<ManagedObject>(entityName: "Row")
                    request.includesPropertyValues = includesValues
                    Bench.sink(try context.fetch(request).reduce(0) { $0 &+ $1[RowWorkload.keys[1]] })
                }
                return [
                    .engine(values, model: model, store: store, operations: rows) { try run($0, includesValues: true) },
                    .engine(noValues, model: model, store: store, operations: rows) { try run($0, includesValues: false) },
                ]
            },
            judge: { m in
                guard let a = m.counters(values), let b = m.counters(noValues), let ratio = m.ratio(noValues, values), let rows = m[values]?.operations else {
                    return Verdict(held: nil, "not measured")
                }
                let held = a.statements == 1 && b.statements == rows + 1 && ratio > 1
                return Verdict(held: held, "statements: \(a.statements) with the values, \(b.statements) without (\(b.cacheMisses) faults from the store); \(BenchFormat.ratio(ratio)) the time")
            })
    }
}

extension ScenarioCatalogue {
    /// B-SINGLETON: a singleton-like object (the current user) fetched each time it is needed, or cached in the
    /// context's userInfo after the first fetch.
    static var singleton: BenchScenario {
        let fetchEach = "fetched each time", cached = "cached in the context's userInfo"
        return BenchScenario(
            id: "singleton", title: "The current user, needed N times: fetched each time, or cached in the context's userInfo",
            claim: "An object the app needs over and over — the logged-in user — is worth one fetch, kept in the context's userInfo: then no fetch at all.",
            theme: .avoidingFetches,
            sources: [.objcio("Performance", "Avoiding Fetch Requests", "P-23", "B-SINGLETON")],
            ratios: [RatioSpec(cached, over: fetchEach)],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(min(20_000, setup.scale.part(10, minimum: 200)))
                let uses = 1_000
                func currentUser(_ context: ManagedObjectContext) throws -> ManagedObject? {
                    let request = try Bench.request("Row", "a0 == %@", Int64(420))
                    request.fetchLimit = 1
                    return try context.fetch(request).first
                }
                return [
                    .engine(fetchEach, model: model, store: store, operations: uses) { context in
                        var sum: Int64 = 0
                        for _ in 0..<uses { sum &+= try currentUser(context)?[RowWorkload.keys[1]] ?? 0 }
                        Bench.sink(sum)
                    },
                    .engine(cached, model: model, store: store, operations: uses) { context in
                        var sum: Int64 = 0
                        for _ in 0..<uses {
                            let user: ManagedObject?
                            if let kept = context.userInfo["currentUser"] as? ManagedObject {
                                user = kept
                            } else {
                                user = try currentUser(context)
                                context.userInfo["currentUser"] = user
                            }
                            sum &+= user?[RowWorkload.keys[1]] ?? 0
                        }
                        Bench.sink(sum)
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(fetchEach), let b = m.counters(cached), let ratio = m.ratio(cached, fetchEach) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: b.fetches == 1 && a.fetches == (m[fetchEach]?.operations ?? -1),
                               "fetches: \(a.fetches) fetched each time, \(b.fetches) cached; the cache takes \(BenchFormat.ratio(ratio)) the time")
            })
    }
}
