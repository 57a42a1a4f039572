import Faultline
import Foundation

/// Collects, run by run, how the fetches of a variant split their time (the engine's own fetch events).
final class FetchPhaseRecorder: ProbeRecorder, @unchecked Sendable {
    struct Split {
        var sqlite = 0.0, rowCache = 0.0, total = 0.0
        var context: Double { max(0, total - sqlite - rowCache) }
    }
    private let lock = NSLock()
    private var current = Split()
    private(set) var runs: [Split] = []

    func record(_ event: consuming ProbeEvent, at time: UInt64) {
        guard case .fetch(let e) = event else { return }
        lock.lock()
        current.sqlite += e.stepTime
        current.rowCache += e.rowCacheTime
        current.total += e.totalTime
        lock.unlock()
    }

    func flush() {}

    /// Ends a run: its split joins `runs`.
    func endRun() {
        lock.lock()
        runs.append(current)
        current = Split()
        lock.unlock()
    }

    /// The median of each phase's share of the fetch time over the runs, or nil before any.
    func medianShares() -> (sqlite: Double, rowCache: Double, context: Double, total: Double)? {
        lock.lock()
        defer { lock.unlock() }
        let timed = runs.filter { $0.total > 0 }
        guard !timed.isEmpty else { return nil }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return (median(timed.map { $0.sqlite / $0.total }), median(timed.map { $0.rowCache / $0.total }),
                median(timed.map { $0.context / $0.total }), median(timed.map(\.total)))
    }
}

extension ScenarioCatalogue {
    /// B-FETCH-BREAKDOWN: one fetch of N materialized objects, its time split by the engine's probes into SQLite,
    /// the row cache and the context.
    static var fetchPhases: BenchScenario {
        let recorder = FetchPhaseRecorder()
        return BenchScenario(
            id: "fetch-phases", title: "Where a fetch's time goes: SQLite, the row cache, the context's objects",
            claim: "Of a fetch's two expensive parts, querying SQLite is by far the more expensive; the rest is moving the rows into the row cache and on into the context.",
            theme: .overheads, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests", "P-25", "B-FETCH-BREAKDOWN")],
            ratios: [RatioSpec("probes splitting the fetch", over: "probes off", target: "the split's own cost")],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let request = FetchRequest<ManagedObject>(entityName: "Row")
                request.returnsObjectsAsFaults = false
                let objects = setup.scale.rows
                var split = BenchVariant("probes splitting the fetch", operations: objects) { _ in { } }
                split.prepare = { probes in
                    // The runner's traced run brings its own probes; each timed run records the split with these.
                    let timed = !probes.isEnabled
                    var splitting = ProbeConfiguration()
                    splitting.splitsFetchTime = true
                    let context = try BenchStore.coldContext(model, at: store, probes: timed ? Probes(configuration: splitting, recorders: [recorder]) : probes)
                    return {
                        try context.performAndWait { Bench.sink(Int64(try context.fetch(request).count)) }
                        if timed { recorder.endRun() }
                    }
                }
                return [
                    split,
                    .engine("probes off", model: model, store: store, operations: objects) { Bench.sink(Int64(try $0.fetch(request).count)) },
                ]
            },
            judge: { m in
                guard let shares = recorder.medianShares() else { return Verdict(held: nil, "not measured") }
                func percent(_ share: Double) -> String { String(format: "%.0f%%", share * 100) }
                let overhead = m.ratio("probes splitting the fetch", "probes off").map { "; the probes that split it cost \(BenchFormat.ratio($0)) the fetch without them" } ?? ""
                // "By far the most expensive": more than the other two parts together.
                return Verdict(held: shares.sqlite > shares.rowCache + shares.context,
                               "of a \(BenchFormat.seconds(shares.total)) fetch: in SQLite \(percent(shares.sqlite)), rows into the row cache \(percent(shares.rowCache)), the context's objects \(percent(shares.context)) (medians of the timed runs)\(overhead)")
            })
    }
}
