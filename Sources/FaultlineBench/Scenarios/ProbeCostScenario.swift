import Faultline
import Foundation

extension ScenarioCatalogue {
    /// The probes' own cost: the same fetches with a trace on and with probes off. The target (≤ 5%) is judged on
    /// a bulk fetch and on the anchors' point-lookup benchmark; the smallest fetch there is (one row of ten integers
    /// from a 1,000-row table, in the processor's cache) is measured and reported beside them.
    static var probeCost: BenchScenario {
        BenchScenario(
            id: "probe-cost", title: "Probe cost: the trace on versus probes off",
            claim: "With the JSON Lines trace on, a fetch-heavy workload is at most 5% slower than with probes off "
                + "(a bulk fetch, and the anchors' point-lookup benchmark: single-object fetches by primary key from 200,000 rows of ten strings).",
            theme: .probes, sources: [ClaimSource(.faultline, "docs/trace-format.md", "Cost", keys: ["probes ≤ 5%"])],
            ratios: [RatioSpec("bulk fetch, trace on", over: "bulk fetch, probes off", limit: 1.05, paired: true),
                     RatioSpec("point lookups, trace on", over: "point lookups, probes off", limit: 1.05, paired: true),
                     RatioSpec("one-row fetches, trace on", over: "one-row fetches, probes off", target: "reported (the smallest fetch)",
                               paired: true)],
            // Each variant is timed next to its other half, in both orders, and each ratio is the median of the
            // repetitions' own: a difference of a few percent is then not at the mercy of the machine's drift.
            minimumRepetitions: 15, alternatesOrder: true,
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let smallStore = try setup.data.rows(1_000)
                // The anchors' 200,000 rows from medium up; below, as many as the scale has (`--scale small` stays
                // within its minute).
                let lookupRows = setup.scale.rows >= BenchScale.medium.rows ? PointLookupWorkload.rows : setup.scale.rows
                let lookupModel = try PointLookupWorkload.model()
                let lookupStore = try setup.data.pointLookups(lookupRows)
                let trace = setup.folder.appendingPathComponent("probe-cost.jsonl").path
                // 20,000 from medium up; a quarter of the rows below (5,000 at small, fewer at a test's tiny scale).
                let fetches = setup.scale.rows >= BenchScale.medium.rows ? 20_000 : max(1, setup.scale.rows / 4)
                // Enough bulk fetches per run for a run as long as the one-row fetches' (a 9 ms run judged to 5% is
                // at the mercy of the machine's noise): each on a cold context of its own, up to ten.
                let passes = setup.scale.rows >= BenchScale.medium.rows ? min(10, max(1, 200_000 / setup.scale.rows))
                    : setup.scale.rows >= BenchScale.small.rows ? 2 : min(10, max(1, 200_000 / setup.scale.rows))
                // The runner passes its tracing probes for the traced run and none for timed runs; "trace on" runs
                // are timed with a trace file of their own, written by one trace writer for all of them, as a traced
                // program has one for its whole run (starting a writer, its thread and its queue's memory, is not
                // what the claim is about). Each timed "trace on" run ends by writing what its trace still holds
                // (below), so no run leaves events for the next one to pay for.
                var timedTracing: Probes?
                func probes(_ traced: Bool, _ given: Probes) -> Probes {
                    guard traced && !given.isEnabled else { return given }
                    if let timedTracing { return timedTracing }
                    let tracing = Probes(configuration: ProbeConfiguration(tracePath: trace))
                    timedTracing = tracing
                    return tracing
                }
                // Each workload's two variants side by side. A traced run ends by writing what its trace still
                // holds (its last millisecond or so of events), so that the processor time measured for it includes
                // the writer's work for all of its events.
                let states = [(traced: false, name: "probes off"), (traced: true, name: "trace on")]
                // The two variants of a workload of `fetches` fetches through one cold context.
                func fetchVariants(_ workload: String, _ model: ManagedObjectModel, at store: URL,
                                   _ work: @escaping (ManagedObjectContext) throws -> Int) -> [BenchVariant] {
                    states.map { traced, state in
                        BenchVariant("\(workload), \(state)", operations: fetches) { given in
                            let tracing = probes(traced, given)
                            let context = try BenchStore.coldContext(model, at: store, probes: tracing)
                            return {
                                Bench.sink(Int64(try work(context)))
                                tracing.flush()
                            }
                        }
                    }
                }
                return states.map { traced, state in
                    BenchVariant("bulk fetch, \(state)", operations: passes) { given in
                        let tracing = probes(traced, given)
                        let contexts = try (0..<passes).map { _ in try BenchStore.coldContext(model, at: store, probes: tracing) }
                        return {
                            for context in contexts { Bench.sink(try RowWorkload.fetchMaterialized(context)) }
                            tracing.flush()
                        }
                    }
                } + fetchVariants("point lookups", lookupModel, at: lookupStore) { context in
                    try PointLookupWorkload.lookups(context, count: fetches, rows: lookupRows)
                } + fetchVariants("one-row fetches", model, at: smallStore) { context in
                    try RowWorkload.smallFetches(context, count: fetches)
                }
            },
            judge: { m in
                guard let bulk = m.pairedRatio("bulk fetch, trace on", "bulk fetch, probes off"),
                      let lookups = m.pairedRatio("point lookups, trace on", "point lookups, probes off"),
                      let small = m.pairedRatio("one-row fetches, trace on", "one-row fetches, probes off") else { return Verdict(held: nil, "not measured") }
                // What the trace adds to one fetch, in time and in processor time (every thread's).
                func added(_ name: String, _ ratio: Double) -> String {
                    guard let off = m.median("\(name), probes off") else { return "" }
                    return String(format: " (%+.0f ns a fetch)", (ratio - 1) * off * 1e9)
                }
                var processor = ""
                if let ratio = m.processorRatio("point lookups, trace on", "point lookups, probes off"),
                   let off = m.processorMedian("point lookups, probes off") {
                    processor = String(format: "; processor time on point lookups, %@ (%+.0f ns a fetch, with the trace writer's thread), "
                                           + "which a program whose processors are all busy pays in time", BenchFormat.ratio(ratio), (ratio - 1) * off * 1e9)
                }
                return Verdict(held: bulk <= 1.05 && lookups <= 1.05,
                               "trace on costs \(BenchFormat.ratio(bulk)) on a bulk fetch, \(BenchFormat.ratio(lookups)) on point lookups\(added("point lookups", lookups)); "
                                + "the smallest fetch, \(BenchFormat.ratio(small))\(added("one-row fetches", small))\(processor)")
            })
    }
}
