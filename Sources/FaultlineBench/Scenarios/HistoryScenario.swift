import Faultline
import Foundation

extension ScenarioCatalogue {
    /// What persistent history costs each save, in time and in the file, with and without pruning.
    static var historyCost: BenchScenario {
        let saves = 50
        let off = "history off", on = "history on", pruned = "history on, pruned every 10 saves"
        /// What each variant left behind after its last run: history rows and the store's bytes (file and WAL).
        final class Growth: @unchecked Sendable {
            var rows: [String: (transactions: Int, changes: Int)] = [:]
            var bytes: [String: Int] = [:]
        }
        let growth = Growth()
        return BenchScenario(
            id: "history-cost", title: "Persistent history: \(saves) saves of N/400 inserts and as many updates, tracking off, on, and on with pruning",
            claim: "History tracking (always on in SwiftData) writes a transaction row and a change row per changed object with every save: saves cost more and the file grows with every change, unless old history is pruned.",
            theme: .saving, sources: [ClaimSource(.faultline, "docs/store-format.md", "Persistent history tables")],
            ratios: [RatioSpec(on, over: off), RatioSpec(pruned, over: off)],
            variants: { setup in
                let model = try RowWorkload.model()
                let batch = max(10, setup.scale.part(400, minimum: 10))
                return [(off, PersistentStoreOptions()), (on, .persistentHistoryTracking), (pruned, .persistentHistoryTracking)].map { name, options in
                    let store = setup.folder.appendingPathComponent("history-\(name.filter(\.isLetter)).sqlite")
                    return BenchVariant(name, operations: saves) { probes in
                        // What the previous run left is measured here, outside the clock.
                        if FileManager.default.fileExists(atPath: store.path) {
                            let history = try PersistentHistory.read(storeAt: store, model: model)
                            growth.rows[name] = (history.transactions.count, history.transactions.reduce(0) { $0 + $1.changes.count })
                            growth.bytes[name] = ["", "-wal"].reduce(0) { sum, suffix in
                                sum + ((try? FileManager.default.attributesOfItem(atPath: store.path + suffix)[.size] as? NSNumber)?.intValue ?? 0)
                            }
                        }
                        RowWorkload.removeStore(at: store)
                        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                        try coordinator.addPersistentStore(at: store, options: options)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        context.performAndWait {
                            context.name = "import"
                            context.transactionAuthor = "bench"
                        }
                        return {
                            try context.performAndWait {
                                let entity = model.entity(named: "Row")!
                                var previous: [ManagedObject] = []
                                for save in 0..<saves {
                                    // Half new rows, half changes to the last save's rows.
                                    for row in previous { row[RowWorkload.keys[0]] = row[RowWorkload.keys[0]] + 1 }
                                    var inserted: [ManagedObject] = []
                                    for i in 0..<batch / 2 {
                                        let row = ManagedObject(entity: entity, insertInto: context)
                                        for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(save * batch + i * 10 + j) }
                                        inserted.append(row)
                                    }
                                    try context.save()
                                    previous = inserted
                                    if name == pruned && (save + 1) % 10 == 0 { try coordinator.deleteHistory(before: Date()) }
                                }
                            }
                        }
                    }
                }
            },
            judge: { m in
                guard let ratio = m.ratio(on, off), let prunedRatio = m.ratio(pruned, off), let kept = growth.rows[on], let left = growth.rows[pruned],
                      let bytesOn = growth.bytes[on], let bytesOff = growth.bytes[off], let bytesPruned = growth.bytes[pruned] else {
                    return Verdict(held: nil, "not measured")
                }
                let perSave = Double(bytesOn - bytesOff) / Double(saves)
                // Held when tracking costs time and space and pruning bounds the rows it keeps.
                let held = ratio > 1 && kept.transactions == saves && bytesOn > bytesOff && left.transactions < kept.transactions
                return Verdict(held: held, "a save with history costs \(BenchFormat.ratio(ratio)) one without (pruned: \(BenchFormat.ratio(prunedRatio))); "
                               + "\(saves) saves kept \(kept.transactions) transactions and \(kept.changes) changes (\(kept.changes / max(1, kept.transactions)) per save), "
                               + "\(BenchFormat.bytes(bytesOn - bytesOff)) more file and WAL than without (\(BenchFormat.bytes(Int(perSave))) per save); "
                               + "pruned every 10 saves: \(left.transactions) transactions, \(left.changes) changes, \(BenchFormat.bytes(bytesPruned)) (freed pages are reused, not returned)")
            })
    }
}
