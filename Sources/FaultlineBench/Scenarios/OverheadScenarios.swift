import Faultline
import Foundation

extension ScenarioCatalogue {
    /// Apple's list of the methods that do not fire faults (FA-06): N faults hashed into a set, compared and asked for
    /// their IDs, against reading one attribute of each.
    static var nonFiringMethods: BenchScenario {
        let identity = "a set of the faults, ==, objectID, isFault", read = "one attribute read from each"
        return BenchScenario(
            id: "non-firing-methods", title: "N faults put in a set, compared and asked for their IDs, or each read once",
            claim: "Faults can be hashed, compared, put in sets and asked for their object ID without firing: only a persistent value read (or a description or key-value coding that reads one) fulfils them, a round trip each when the row is not cached.",
            theme: .overheads,
            sources: [.apple("Performance", "Faulting Behavior", "perf-8"), .apple("Faulting and Uniquing", "Faulting Limits the Size of the Object Graph", "FA-06")],
            ratios: [RatioSpec(identity, over: read)],
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = min(20_000, setup.scale.part(10, minimum: 200))
                let store = try setup.data.rows(rows)
                // Faults with nothing cached: each fired fault reads its row.
                func faults(_ context: ManagedObjectContext) throws -> [ManagedObject] {
                    let request = FetchRequest<ManagedObject>(entityName: "Row")
                    request.returnsObjectsAsFaults = true
                    request.includesPropertyValues = false
                    return try context.fetch(request)
                }
                return [
                    .engine(identity, model: model, store: store, operations: rows, prime: faults) { _, objects in
                        let set = Set(objects)
                        var same = 0, stillFaults = 0
                        for (object, next) in zip(objects, objects.dropFirst()) where object == next || object.objectID == next.objectID { same += 1 }
                        for object in objects where object.isFault && set.contains(object) { stillFaults += 1 }
                        Bench.sink(Int64(set.count + same + stillFaults))
                    },
                    .engine(read, model: model, store: store, operations: rows, prime: faults) { _, objects in
                        Bench.sink(objects.reduce(0) { $0 &+ $1[RowWorkload.keys[0]] })
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(identity), let b = m.counters(read), let ratio = m.ratio(identity, read), let rows = m[read]?.operations else {
                    return Verdict(held: nil, "not measured")
                }
                let held = a.faults == 0 && a.statements == 0 && b.faults == rows && b.cacheMisses == rows
                return Verdict(held: held, "faults fired: \(a.faults) by the set, ==, objectID and isFault over \(rows) faults, \(b.faults) by reading an attribute (\(b.statements) statements); "
                               + "the set costs \(BenchFormat.ratio(ratio)) the reads' time")
            })
    }

    /// B-INSERT: inserting objects into a context, then saving them, timed apart.
    static var insertThenSave: BenchScenario {
        let insertOnly = "insert into the context", save = "save"
        return BenchScenario(
            id: "insert-then-save", title: "N objects inserted into a context, then saved: the two steps timed apart",
            claim: "Inserting objects into a context is cheap — it stays in the context's tier — and the save, which goes down to SQLite, is where the time goes.",
            theme: .overheads,
            sources: [.objcio("Performance", "Inserting and Changing Objects", "P-35", "B-INSERT")],
            ratios: [RatioSpec(save, over: insertOnly)],
            alternatesOrder: true,
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = setup.scale.part(4, minimum: 200)
                let entity = model.entity(named: "Row")!
                func insert(_ context: ManagedObjectContext) {
                    for i in 0..<rows {
                        let row = ManagedObject(entity: entity, insertInto: context)
                        for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(i * 10 + j) }
                    }
                }
                let insertURL = setup.folder.appendingPathComponent("insert-then-save-a.sqlite"), saveURL = setup.folder.appendingPathComponent("insert-then-save-b.sqlite")
                return [
                    BenchVariant(insertOnly, operations: rows) { probes in
                        let coordinator = try ScenarioStore.open(insertURL, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return { context.performAndWait { insert(context) } }
                    },
                    BenchVariant(save, operations: rows) { probes in
                        let coordinator = try ScenarioStore.open(saveURL, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        context.performAndWait { insert(context) }
                        return { try context.performAndWait { try context.save() } }
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(insertOnly), let b = m.counters(save), let ratio = m.ratio(save, insertOnly) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.statements == 0 && ratio > 1, "inserting: \(a.statements) statements; saving: \(b.statements); the save takes \(BenchFormat.ratio(ratio)) the insert's time")
            })
    }
}
