import Faultline
import Foundation

extension ScenarioCatalogue {
    /// Kodeco's find-or-create (002, perf-11): an import of K records, half of them already stored — a fetch per
    /// record, or every record inserted and a uniqueness constraint with a merge policy keeping one object per value.
    static var findOrCreate: BenchScenario {
        let fetchEach = "find-or-create: a fetch per record, insert when missing", constraint = "insert all: a uniqueness constraint and mergeByPropertyObjectTrump"
        return BenchScenario(
            id: "find-or-create", title: "Importing K records, half of them stored already: find-or-create, or a uniqueness constraint",
            claim: "Find-or-create costs a fetch per imported record to keep duplicates out; a uniqueness constraint (iOS 9) lets the import insert every record and the save resolve the duplicates, without those fetches.",
            theme: .importing,
            sources: [ClaimSource(.kodeco, "The Core Data Stack", "Find-or-create", keys: ["perf-11"])],
            ratios: [RatioSpec(constraint, over: fetchEach)],
            alternatesOrder: true,
            variants: { setup in
                let records = min(4_000, setup.scale.part(20, minimum: 200))
                let model = try ManagedObjectModel(entities: [
                    EntityDescription(name: "Item", properties: [
                        AttributeDescription(name: "remoteID", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                        AttributeDescription(name: "title", type: .string, isOptional: false, defaultValue: ""),
                    ], uniquenessConstraints: [["remoteID"]]),
                ])
                // The even remote IDs are stored already; the import brings every ID once.
                let store = try ScenarioStore.make(setup.folder, "find-or-create", model: model) { context in
                    for id in stride(from: 0, to: records, by: 2) {
                        let item = ManagedObject(entity: model.entity(named: "Item")!, insertInto: context)
                        try item.setValue(Int64(id), forKey: "remoteID")
                        try item.setValue("stored \(id)", forKey: "title")
                    }
                }
                func variant(_ name: String, findFirst: Bool) -> BenchVariant {
                    let url = setup.folder.appendingPathComponent("find-or-create-\(findFirst).sqlite")
                    return BenchVariant(name, operations: records) { probes in
                        let coordinator = try ScenarioStore.open(url, from: store, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        context.mergePolicy = .mergeByPropertyObjectTrump
                        return {
                            try context.performAndWait {
                                for id in 0..<records {
                                    var item: ManagedObject?
                                    if findFirst {
                                        let request = try Bench.request("Item", "remoteID == %@", Int64(id))
                                        request.fetchLimit = 1
                                        item = try context.fetch(request).first
                                    }
                                    let record = item ?? ManagedObject(entity: model.entity(named: "Item")!, insertInto: context)
                                    try record.setValue(Int64(id), forKey: "remoteID")
                                    try record.setValue("imported \(id)", forKey: "title")
                                }
                                try context.save()
                                Bench.sink(Int64(try context.count(for: FetchRequest<ManagedObject>(entityName: "Item"))))
                            }
                        }
                    }
                }
                return [variant(fetchEach, findFirst: true), variant(constraint, findFirst: false)]
            },
            judge: { m in
                guard let a = m.counters(fetchEach), let b = m.counters(constraint), let ratio = m.ratio(constraint, fetchEach), let records = m[fetchEach]?.operations else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: a.fetches > records && b.fetches < a.fetches && ratio < 1,
                               "\(records) records: find-or-create ran \(a.fetches) fetches and \(a.statements) statements; the constraint \(b.fetches) fetches and \(b.statements) statements; the constraint takes \(BenchFormat.ratio(ratio)) the time")
            })
    }
}
