import Faultline
import Foundation

extension ScenarioCatalogue {
    /// Index counts the `index-costs` scenario compares.
    static let indexCounts = [0, 1, 2, 3, 4]

    /// Inserting and updating rows with 0 to 4 indexed attributes: what each index costs the writes and the file.
    static var indexCosts: BenchScenario {
        func insertName(_ k: Int) -> String { "\(k) index\(k == 1 ? "" : "es"): insert" }
        func updateName(_ k: Int) -> String { "\(k) index\(k == 1 ? "" : "es"): update" }
        final class Sizes: @unchecked Sendable { var bytes: [Int: Int] = [:] }
        let sizes = Sizes()
        return BenchScenario(
            id: "index-costs", title: "Insert N rows and update a quarter of them, with 0 to 4 indexed attributes",
            claim: "An index speeds searches and sorts at a price paid by every insert and update, and in the file's size: the more indexes, the slower the writes and the bigger the store.",
            theme: .indexes,
            sources: [.objcio("Performance", "Optimizing Fetch Requests › Indexes", "P-33", "B-IDX"), .objcio("Hello Core Data", "Data Model", "P-50")],
            ratios: [RatioSpec(insertName(4), over: insertName(0)), RatioSpec(updateName(4), over: updateName(0))],
            alternatesOrder: true,
            variants: { setup in
                let rows = setup.scale.part(8, minimum: 200)
                var variants: [BenchVariant] = []
                for k in indexCounts {
                    let model = try ManagedObjectModel(entities: [
                        EntityDescription(name: "Row", properties: (0..<10).map { AttributeDescription(name: "a\($0)", type: .integer64, isIndexed: (1...4).contains($0) && $0 <= k) }),
                    ])
                    let entity = model.entity(named: "Row")!
                    let insertURL = setup.folder.appendingPathComponent("index-costs-\(k)-insert.sqlite")
                    variants.append(BenchVariant(insertName(k), operations: rows) { probes in
                        if FileManager.default.fileExists(atPath: insertURL.path) {
                            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
                            try coordinator.addPersistentStore(at: insertURL)
                            let file = try coordinator.vacuum(.incremental(pages: 0))  // a checkpoint: the file holds every row
                            sizes.bytes[k] = file.pagesAfter * file.pageSize
                        }
                        let coordinator = try ScenarioStore.open(insertURL, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return {
                            try context.performAndWait {
                                var random = SeededGenerator(seed: 7)
                                for _ in 0..<rows {
                                    let row = ManagedObject(entity: entity, insertInto: context)
                                    for key in RowWorkload.keys { row[key] = Int64.random(in: 0..<1_000_000, using: &random) }
                                }
                                try context.save()
                            }
                        }
                    })
                    let template = setup.folder.appendingPathComponent("index-costs-\(k)-template.sqlite")
                    RowWorkload.removeStore(at: template)
                    do {
                        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
                        try coordinator.addPersistentStore(at: template)
                        try RowWorkload.insert(count: rows, into: ManagedObjectContext(.privateQueue, coordinator: coordinator))
                        try coordinator.vacuum(.incremental(pages: 0))
                    }
                    let updateURL = setup.folder.appendingPathComponent("index-costs-\(k)-update.sqlite")
                    variants.append(BenchVariant(updateName(k), operations: rows / 4) { probes in
                        let coordinator = try ScenarioStore.open(updateURL, from: template, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        // The rows to change, fetched outside the clock.
                        let objects = try context.performAndWait {
                            try context.fetch(try Bench.request("Row", "a0 < %@", Int64(rows / 4 * 10)))
                        }
                        return {
                            try context.performAndWait {
                                var random = SeededGenerator(seed: 11)
                                for object in objects {
                                    for key in RowWorkload.keys.dropFirst() { object[key] = Int64.random(in: 0..<1_000_000, using: &random) }
                                }
                                try context.save()
                            }
                        }
                    })
                }
                return variants
            },
            judge: { m in
                let inserts = indexCounts.compactMap { m.median(insertName($0)) }, updates = indexCounts.compactMap { m.median(updateName($0)) }
                guard inserts.count == indexCounts.count, updates.count == indexCounts.count else { return Verdict(held: nil, "not measured") }
                let files = indexCounts.compactMap { sizes.bytes[$0] }
                func list(_ values: [Double]) -> String { values.map { BenchFormat.seconds($0) }.joined(separator: ", ") }
                var text = "per row inserted with 0…4 indexes: \(list(inserts)); per row updated: \(list(updates))"
                if files.count == indexCounts.count { text += "; the file: " + files.map { BenchFormat.bytes($0) }.joined(separator: ", ") }
                // Held: four indexes cost the writes at least 10% more than none, and each index grows the file.
                let grows = files.count == indexCounts.count && zip(files, files.dropFirst()).allSatisfy { $0 < $1 }
                let held = inserts[4] >= inserts[0] * 1.1 && updates[4] >= updates[0] * 1.1 && grows
                return Verdict(held: files.count == indexCounts.count ? held : nil, text)
            })
    }
}
