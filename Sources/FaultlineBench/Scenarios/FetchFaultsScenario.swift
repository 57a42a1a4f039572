import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-FETCHFAULTS: N mayor faults fired one by one or fulfilled by one fetch (Moody's `fetchFaults`, Faultline's
    /// `fulfillFaults(for:)`), with their rows not in the row cache, in it, and in it while another context of the
    /// same coordinator fetches.
    static var fetchFaults: BenchScenario {
        let states = ["row cache cold", "row cache warm", "row cache warm, coordinator contended"]
        func name(_ batch: Bool, _ state: String) -> String { "\(batch ? "one fetch for all" : "a fault each"), \(state)" }
        return BenchScenario(
            id: "fetch-faults", title: "N faults: fired one by one, or fulfilled by one fetch — row cache cold, warm, warm and contended",
            claim: "Many faults are fulfilled faster by one fetch than one by one; but when their rows are still in the row cache and the coordinator is not contended, firing them one by one may be faster, since it never reaches SQLite — and under contention the one fetch may win again. Measure twice, cut once.",
            theme: .nPlusOne, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests", "P-27", "P-28", "B-FETCHFAULTS")],
            ratios: states.map { RatioSpec(name(true, $0), over: name(false, $0)) },
            model: { try CityWorkload.model() },
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let store = try setup.data.cities(setup.scale.part(50, minimum: 200))
                let cities = min(2_000, setup.scale.part(50, minimum: 200))
                let request = FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
                request.fetchLimit = cities
                request.returnsObjectsAsFaults = false
                var variants: [BenchVariant] = []
                for (s, state) in states.enumerated() {
                    for batch in [false, true] {
                        variants.append(BenchVariant(name(batch, state), operations: cities) { probes in
                            let coordinator = try BenchStore.coordinator(model, at: store, probes: probes)
                            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                            // Warm: another context fetched every person and keeps them, so their rows stay cached.
                            let keeper = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                            let kept = s == 0 ? [] : try keeper.performAndWait {
                                let people = FetchRequest<ManagedObject>(entityName: "Person")
                                people.returnsObjectsAsFaults = false
                                return try keeper.fetch(people)
                            }
                            let mayors = try context.performAndWait { try context.fetch(request).compactMap { $0[CityWorkload.mayor] } }
                            let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                            return {
                                let done = ManagedAtomicFlag(), started = DispatchSemaphore(value: 0), failure = FirstError(), group = DispatchGroup()
                                if s == 2 {
                                    group.enter()
                                    Thread.detachNewThread {
                                        defer { group.leave() }
                                        do {
                                            try other.performAndWait {
                                                var i = 0
                                                while !done.isSet {
                                                    let low = Int64((i * 104_729) % 200_000)
                                                    Bench.sink(Int64(try other.fetch(try Bench.request("City", "population BETWEEN {%@, %@}", low, low + 2_000)).count))
                                                    other.reset()
                                                    if i == 0 { started.signal() }
                                                    i += 1
                                                }
                                            }
                                        } catch { failure.set(error); started.signal() }
                                    }
                                    started.wait()
                                }
                                do {
                                    try context.performAndWait {
                                        if batch { try context.fulfillFaults(for: mayors) }
                                        Bench.sink(Int64(mayors.reduce(0) { $0 + $1[CityWorkload.personName].utf8.count }))
                                    }
                                } catch { failure.set(error) }
                                done.set()
                                group.wait()
                                withExtendedLifetime((keeper, kept)) {}  // the keeper context holds the rows in the row cache
                                if let error = failure.error { throw error }
                            }
                        })
                    }
                }
                return variants
            },
            judge: { m in
                guard let cold = m.ratio(name(true, states[0]), name(false, states[0])), let warm = m.ratio(name(true, states[1]), name(false, states[1])),
                      let contended = m.ratio(name(true, states[2]), name(false, states[2])),
                      let coldOne = m.counters(name(false, states[0])), let warmOne = m.counters(name(false, states[1])),
                      let coldBatch = m.counters(name(true, states[0])) else { return Verdict(held: nil, "not measured") }
                func winner(_ ratio: Double) -> String { ratio < 1 ? "one fetch wins (\(BenchFormat.ratio(ratio)))" : "a fault each wins (the fetch takes \(BenchFormat.ratio(ratio)))" }
                // Held: the book's firm part — cold, one fetch wins; the rest ("may") is reported.
                return Verdict(held: cold < 1 && coldBatch.statements < coldOne.statements,
                               "row cache cold: \(winner(cold)), statements \(coldOne.statements) against \(coldBatch.statements); warm: \(winner(warm)), \(warmOne.cacheMisses) cache misses one by one; warm and contended: \(winner(contended))")
            })
    }
}
