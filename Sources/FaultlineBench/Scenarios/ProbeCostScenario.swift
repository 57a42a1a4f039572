import Faultline
import Foundation

extension ScenarioCatalogue {
    /// The probes' own cost: the same fetches with a trace on and with probes off.
    static var probeCost: BenchScenario {
        BenchScenario(
            id: "probe-cost", title: "Probe cost: the trace on versus probes off",
            claim: "With the JSON Lines trace on, a fetch-heavy workload is at most 5% slower than with probes off.",
            source: "the probes issue (cost); anchors-diagnostics (always-on tracing)",
            ratios: [RatioSpec("bulk fetch, trace on", over: "bulk fetch, probes off", limit: 1.05),
                     RatioSpec("one-row fetches, trace on", over: "one-row fetches, probes off", limit: 1.05)],
            minimumRepetitions: 15,
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let smallStore = try setup.data.rows(1_000)
                let trace = setup.folder.appendingPathComponent("probe-cost.jsonl").path
                // 20,000, or as many as the main data set has rows when it has fewer (a test's tiny scale).
                let fetches = min(20_000, setup.scale.rows)
                // Enough bulk fetches per run for a run as long as the one-row fetches' (a 9 ms run judged to 5% is
                // at the mercy of the machine's noise): each on a cold context of its own, up to ten.
                let passes = min(10, max(1, 200_000 / setup.scale.rows))
                // The runner passes its tracing probes for the traced run and none for timed runs; "trace on" runs
                // are timed with a trace file of their own, written by one trace writer for all of them, as a traced
                // program has one for its whole run (starting a writer, its thread and its queue's memory, is not
                // what the claim is about). Before each, untimed, the writer writes what an earlier run left queued
                // (up to its last millisecond of events), which would otherwise be written during the next timed
                // run, whichever variant that is.
                var timedTracing: Probes?
                func probes(_ traced: Bool, _ given: Probes) -> Probes {
                    guard traced && !given.isEnabled else { return given }
                    if let timedTracing {
                        timedTracing.flush()
                        return timedTracing
                    }
                    let tracing = Probes(configuration: ProbeConfiguration(tracePath: trace))
                    timedTracing = tracing
                    return tracing
                }
                var variants: [BenchVariant] = []
                for traced in [false, true] {
                    let state = traced ? "trace on" : "probes off"
                    variants.append(BenchVariant("bulk fetch, \(state)", operations: passes) { given in
                        let tracing = probes(traced, given)
                        let contexts = try (0..<passes).map { _ in try BenchStore.coldContext(model, at: store, probes: tracing) }
                        return { for context in contexts { Bench.sink(try RowWorkload.fetchMaterialized(context)) } }
                    })
                    variants.append(BenchVariant("one-row fetches, \(state)", operations: fetches) { given in
                        let context = try BenchStore.coldContext(model, at: smallStore, probes: probes(traced, given))
                        return { Bench.sink(Int64(try RowWorkload.smallFetches(context, count: fetches))) }
                    })
                }
                return variants
            },
            judge: { m in
                guard let bulk = m.ratio("bulk fetch, trace on", "bulk fetch, probes off"),
                      let small = m.ratio("one-row fetches, trace on", "one-row fetches, probes off") else { return Verdict(held: nil, "not measured") }
                return Verdict(held: bulk <= 1.05 && small <= 1.05,
                               "trace on costs \(BenchFormat.ratio(bulk)) on a bulk fetch, \(BenchFormat.ratio(small)) on one-row fetches")
            })
    }
}
