import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-STALE: a second context faulting rows a first context loaded, with a staleness interval of −1 (any age,
    /// Core Data's default), 0 (never the row cache), and one that has expired.
    static var staleness: BenchScenario {
        let anyAge = "stalenessInterval −1 (the default)", never = "stalenessInterval 0", expired = "stalenessInterval 0.001 s, expired"
        return BenchScenario(
            id: "staleness", title: "Faulting rows another context loaded, by staleness interval",
            claim: "The staleness interval trades freshness for round trips: with any age allowed, faults are fulfilled from the row cache another context filled; with 0, or once the interval has passed, each fault reads the store.",
            theme: .startup,
            sources: [.apple("Ensuring Data Is Up to Date", nil, "perf-21", "B-STALE")],
            ratios: [RatioSpec(never, over: anyAge)],
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = min(5_000, setup.scale.part(10, minimum: 200))
                let store = try setup.data.rows(rows)
                return [(anyAge, -1.0), (never, 0), (expired, 0.001)].map { name, interval in
                    BenchVariant(name, operations: rows) { probes in
                        let coordinator = try BenchStore.coordinator(model, at: store, probes: probes)
                        // The first context fills the row cache and keeps its objects (their rows stay cached).
                        let loader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let loaded = try loader.performAndWait { try loader.fetch(FetchRequest<ManagedObject>(entityName: "Row")) }
                        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let ids = loaded.map(\.objectID)
                        let faults = reader.performAndWait {
                            reader.stalenessInterval = interval
                            return ids.map { reader.object(with: $0) }
                        }
                        if interval > 0 { usleep(5_000) }
                        return {
                            // The first context and its objects stay: a context's rows leave the row cache with it.
                            withExtendedLifetime((loader, loaded)) {
                                reader.performAndWait { Bench.sink(faults.reduce(0) { $0 &+ $1[RowWorkload.keys[1]] }) }
                            }
                        }
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(anyAge), let b = m.counters(never), let c = m.counters(expired), let ratio = m.ratio(never, anyAge) else {
                    return Verdict(held: nil, "not measured")
                }
                let rows = m[anyAge]?.operations ?? 0
                return Verdict(held: a.statements == 0 && b.statements == rows && c.statements == rows,
                               "statements for \(rows) faults: any age \(a.statements) (\(a.cacheHits) from the row cache), 0 \(b.statements), expired \(c.statements); reading the store takes \(BenchFormat.ratio(ratio)) the row cache's time")
            })
    }
}
