import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-TIER: one attribute read on an object in each tier of the stack.
    static var tiers: BenchScenario {
        BenchScenario(
            id: "tiers", title: "Tiers: materialized object, row-cache fault, SQLite fault",
            claim: "Each tier down the stack costs roughly ten times more: an attribute of a materialized object, a fault fulfilled from the row cache, a fault fulfilled from SQLite (1 : 10 : 100).",
            theme: .overheads, sources: [ClaimSource.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-02", "P-03", "P-04", "P-10", "P-66", "B-TIER")],
            ratios: [RatioSpec("row-cache fault", over: "SQLite fault", limit: 0.1, target: "≤ 0.1× (10× cheaper)")],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let objects = min(setup.scale.rows, 50_000)
                let misses = min(setup.scale.rows, 5_000)
                let key = RowWorkload.keys[3]
                let limited = FetchRequest<ManagedObject>(entityName: "Row")
                limited.fetchLimit = objects
                let materialized = limited.copy()
                materialized.returnsObjectsAsFaults = false
                let idsOnly = FetchRequest<ManagedObject>(entityName: "Row")
                idsOnly.fetchLimit = misses
                idsOnly.includesPropertyValues = false
                func readAll(_ context: ManagedObjectContext, _ rows: [ManagedObject]) {
                    var sum: Int64 = 0
                    for row in rows { sum &+= row[key] }
                    Bench.sink(sum)
                }
                return [
                    .engine("materialized", model: model, store: store, operations: objects,
                            prime: { try $0.fetch(materialized) }, readAll),
                    // Fetched as faults: the rows wait in the row cache.
                    .engine("row-cache fault", model: model, store: store, operations: objects,
                            prime: { try $0.fetch(limited) }, readAll),
                    // IDs only: no row data anywhere, so each fault reads SQLite.
                    .engine("SQLite fault", model: model, store: store, operations: misses,
                            prime: { try $0.fetch(idsOnly) }, readAll),
                ]
            },
            judge: { m in
                guard let a = m.median("materialized"), let b = m.median("row-cache fault"), let c = m.median("SQLite fault") else {
                    return Verdict(held: nil, "not measured")
                }
                // Held when each tier is at least three times the one above (the book's 10× is "a simplification").
                let held = b >= 3 * a && c >= 3 * b
                return Verdict(held: held, "measured \(Bench.proportions([a, b, c])) (\(BenchFormat.seconds(a)), \(BenchFormat.seconds(b)), \(BenchFormat.seconds(c)) per read)")
            })
    }
}

extension ScenarioCatalogue {
    /// P-07: an attribute of a registered, materialized object against a plain Swift object's property.
    static var contextTier: BenchScenario {
        let plain = "plain Swift object", materialized = "materialized managed object"
        /// The same values in plain Swift objects.
        final class PlainRow {
            let value: Int64
            init(_ value: Int64) { self.value = value }
        }
        return BenchScenario(
            id: "context-tier", title: "One attribute of N materialized objects against a plain Swift object's property",
            claim: "The context tier needs no locks: an attribute of a registered, materialized object reads about as fast as a plain object's property.",
            theme: .overheads, sources: [ClaimSource.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-07")],
            ratios: [RatioSpec(materialized, over: plain, limit: 2, target: "≤ 2× (about as fast)")],
            alternatesOrder: true,
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let objects = min(setup.scale.rows, 50_000)
                let key = RowWorkload.keys[3]
                let request = FetchRequest<ManagedObject>(entityName: "Row")
                request.fetchLimit = objects
                request.returnsObjectsAsFaults = false
                return [
                    .engine(plain, model: model, store: store, operations: objects,
                            prime: { context in try context.fetch(request).map { PlainRow($0[key]) } }) { _, rows in
                        var sum: Int64 = 0
                        for row in rows { sum &+= row.value }
                        Bench.sink(sum)
                    },
                    .engine(materialized, model: model, store: store, operations: objects, prime: { try $0.fetch(request) }) { _, rows in
                        var sum: Int64 = 0
                        for row in rows { sum &+= row[key] }
                        Bench.sink(sum)
                    },
                ]
            },
            judge: { m in
                guard let ratio = m.ratio(materialized, plain), let counters = m.counters(materialized) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: ratio <= 2 && counters.statements == 0,
                               "a materialized object's attribute takes \(BenchFormat.ratio(ratio)) a plain Swift object's property (\(BenchFormat.seconds(m.median(materialized) ?? 0)) against \(BenchFormat.seconds(m.median(plain) ?? 0)) per read), \(counters.statements) statements")
            })
    }
}
