import Faultline
import Foundation

extension ScenarioCatalogue {
    /// P-65, P-67: N objects whose every value is read, fetched as objects, as faults (their rows in the row cache),
    /// or as faults without property values (nothing cached: a round trip each).
    static var faultCosts: BenchScenario {
        let objects = "objects (returnsObjectsAsFaults = false)", faults = "faults, rows in the row cache", bare = "faults without property values"
        return BenchScenario(
            id: "fault-costs", title: "N objects, every value read: fetched as objects, as faults with their rows cached, as faults without values",
            claim: "When every object's data will be used, returnsObjectsAsFaults = false saves the faults: a small gain even when the rows are in the row cache. A default fetch fills the row cache, so its faults are cheap; without property values each fault is a round trip.",
            theme: .fetchShape,
            sources: [.objcio("Accessing Data", "Faulting", "P-65", "P-67")],
            ratios: [RatioSpec(objects, over: faults), RatioSpec(bare, over: faults)],
            alternatesOrder: true,
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let count = min(setup.scale.rows, 20_000)
                let request = FetchRequest<ManagedObject>(entityName: "Row")
                request.fetchLimit = count
                return [(objects, false, true), (faults, true, true), (bare, true, false)].map { name, asFaults, values in
                    let shaped = request.copy()
                    shaped.returnsObjectsAsFaults = asFaults
                    shaped.includesPropertyValues = values
                    return .engine(name, model: model, store: store, operations: count) { context in
                        var sum: Int64 = 0
                        for row in try context.fetch(shaped) { for key in RowWorkload.keys { sum &+= row[key] } }
                        Bench.sink(sum)
                    }
                }
            },
            judge: { m in
                guard let gain = m.ratio(objects, faults), let trips = m.ratio(bare, faults), let a = m.counters(objects),
                      let b = m.counters(faults), let c = m.counters(bare) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: gain < 1 && b.cacheMisses == 0 && trips > 2,
                               "objects take \(BenchFormat.ratio(gain)) the time of faults fulfilled from the row cache (\(a.faults) against \(b.faults) faults, \(b.cacheMisses) cache misses); without property values, \(BenchFormat.ratio(trips)) (\(c.cacheMisses) cache misses, \(c.statements) statements) — property-values-off measures the memory side")
            })
    }
}
