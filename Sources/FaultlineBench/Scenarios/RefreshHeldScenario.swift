import Faultline
import Foundation

extension ScenarioCatalogue {
    /// P-83: objects the program still holds, refreshed to faults and read again, against reading them again as
    /// they were.
    static var refreshHeld: BenchScenario {
        let plain = "read again", refreshed = "refreshed to faults, read again"
        return BenchScenario(
            id: "refresh-held", title: "N objects the program holds: read again, or refreshed to faults and read again",
            claim: "Refreshing an object still in use is not as bad as it sounds: while the program holds it, its data stays in the row cache, and fulfilling its fault again is cheap — no round trip.",
            theme: .memory, sources: [.objcio("Accessing Data", "Memory Considerations", "P-83")],
            ratios: [RatioSpec(refreshed, over: plain)],
            alternatesOrder: true,
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let count = min(setup.scale.rows, 20_000)
                let request = FetchRequest<ManagedObject>(entityName: "Row")
                request.fetchLimit = count
                request.returnsObjectsAsFaults = false
                return [(plain, false), (refreshed, true)].map { name, refresh in
                    .engine(name, model: model, store: store, operations: count, prime: { context -> [ManagedObject] in
                        let rows = try context.fetch(request)
                        if refresh { for row in rows { context.refresh(row, mergeChanges: false) } }
                        return rows
                    }) { _, rows in
                        var sum: Int64 = 0
                        for row in rows { sum &+= row[RowWorkload.keys[0]] }
                        Bench.sink(sum)
                    }
                }
            },
            judge: { m in
                guard let ratio = m.ratio(refreshed, plain), let counters = m.counters(refreshed) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: counters.cacheMisses == 0,
                               "the refreshed objects' faults: \(counters.faults) fulfilled, \(counters.cacheMisses) from SQLite, \(counters.statements) statements; reading them again takes \(BenchFormat.ratio(ratio)) the time of reading objects never refreshed"
                               + (counters.cacheMisses > 0 ? " (Faultline's refresh lets go of the row's snapshot, so the refreshed object shows what others wrote since: docs/contexts.md)" : ""))
            })
    }
}
