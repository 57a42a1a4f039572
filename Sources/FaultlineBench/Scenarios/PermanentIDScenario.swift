import Faultline
import Foundation

extension ScenarioCatalogue {
    /// objc.io's save walk-through (001, P-86): the store gives inserted objects their permanent IDs in an SQLite
    /// transaction of its own, before the save's. `obtainPermanentIDs(for:)` runs that transaction early; the save
    /// then runs only its own — the same statements in all, the allocation moved rather than added.
    static var permanentIDs: BenchScenario {
        let saveAlone = "insert N, save", obtainFirst = "insert N, obtainPermanentIDs, save"
        return BenchScenario(
            id: "permanent-ids", title: "Permanent IDs: allocated by the save, or obtained before it",
            claim: "Permanent IDs are allocated in an SQLite transaction of their own before the save's.",
            theme: .saving,
            sources: [.objcio("Changing and Saving Data", nil, "P-86")],
            ratios: [RatioSpec(obtainFirst, over: saveAlone)],
            alternatesOrder: true,
            variants: { setup in
                let objects = min(10_000, setup.scale.part(20, minimum: 500))
                let model = try ManagedObjectModel(entities: [
                    EntityDescription(name: "Item", properties: [
                        AttributeDescription(name: "number", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                        AttributeDescription(name: "title", type: .string),
                    ]),
                ])
                let store = try ScenarioStore.make(setup.folder, "permanent-ids", model: model) { _ in }
                func variant(_ name: String, obtaining: Bool) -> BenchVariant {
                    let url = setup.folder.appendingPathComponent("permanent-ids-\(obtaining).sqlite")
                    return BenchVariant(name, operations: objects) { probes in
                        let coordinator = try ScenarioStore.open(url, from: store, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return {
                            try context.performAndWait {
                                var inserted: [ManagedObject] = []
                                inserted.reserveCapacity(objects)
                                let entity = model.entity(named: "Item")!
                                for number in 0..<objects {
                                    let item = ManagedObject(entity: entity, insertInto: context)
                                    try item.setValue(Int64(number), forKey: "number")
                                    try item.setValue("item \(number)", forKey: "title")
                                    inserted.append(item)
                                }
                                if obtaining { try context.obtainPermanentIDs(for: inserted) }
                                try context.save()
                                Bench.sink(inserted.last?.objectID.primaryKey ?? 0)
                            }
                        }
                    }
                }
                return [variant(saveAlone, obtaining: false), variant(obtainFirst, obtaining: true)]
            },
            judge: { m in
                guard let alone = m.counters(saveAlone), let first = m.counters(obtainFirst), let ratio = m.ratio(obtainFirst, saveAlone),
                      let objects = m[saveAlone]?.operations else {
                    return Verdict(held: nil, "not measured")
                }
                // The allocation is one transaction either way: obtaining first moves it, adding no statement.
                return Verdict(held: first.statements == alone.statements && first.saves == alone.saves,
                               "\(objects) objects: the save alone ran \(alone.statements) statements, obtaining the IDs first then saving \(first.statements) (the key transaction moved before the save, nothing added); together \(BenchFormat.ratio(ratio)) the save alone's time")
            })
    }
}
