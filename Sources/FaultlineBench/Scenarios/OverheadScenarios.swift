import Faultline
import Foundation

extension ScenarioCatalogue {
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
