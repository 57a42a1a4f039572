import CoreMetrics
import Foundation

/// Counts the probes' events with swift-metrics (the factory bootstrapped in `MetricsSystem`, or one given):
///
/// | metric | type | dimensions |
/// |---|---|---|
/// | `faultline_statements` | counter | `purpose` (`fetch`, `fault`, `save`…), `plan` (`StatementEvent.planVerdict`) |
/// | `faultline_statement_duration` | timer | `purpose` |
/// | `faultline_fetches` | counter | `entity`, `result` (`objects`, `faults`, `ids`, `count`, `dictionary`), `context` |
/// | `faultline_fetch_duration` | timer | `entity`, `context` |
/// | `faultline_fetched_rows` | counter | `entity` |
/// | `faultline_saves` | counter | `outcome` (`saved`, `failed`), `context` |
/// | `faultline_save_duration` | timer | `context` |
/// | `faultline_faults` | counter | `entity`, `kind` (`object`, `relationship`), `source` (`rowCache`, `database`) |
/// | `faultline_row_cache_hits`, `faultline_row_cache_misses` | counter | `entity` (object faults, by where they were fulfilled) |
/// | `faultline_conflicts` | counter | `context` (optimistic-locking and uniqueness conflicts a save met) |
/// | `faultline_batch_requests` | counter | `kind`, `entity` |
///
/// `context` is the name the program gave the context (`ManagedObjectContext.name`), or `unnamed`: a metric's
/// dimensions must stay few. Metric handles are made once per label and dimensions.
public final class MetricsProbeRecorder: ProbeRecorder, @unchecked Sendable {
    private let factory: (any MetricsFactory)?
    private struct Key: Hashable {
        let label: String
        let dimensions: [String]
    }
    /// Guards the handle caches (an `NSLock`: ThreadSanitizer sees it, where it does not see a `Mutex`'s futex).
    private let lock = NSLock()
    private var counters: [Key: CoreMetrics.Counter] = [:]
    private var timers: [Key: CoreMetrics.Timer] = [:]

    /// A recorder using `factory` (default: `MetricsSystem.factory`).
    public init(factory: (any MetricsFactory)? = nil) {
        self.factory = factory
    }

    private func count(_ label: String, _ dimensions: [(String, String)], by amount: Int = 1) {
        handle(\.counters, label, dimensions) { label, dimensions, factory in
            factory.map { CoreMetrics.Counter(label: label, dimensions: dimensions, factory: $0) } ?? CoreMetrics.Counter(label: label, dimensions: dimensions)
        }.increment(by: amount)
    }

    private func time(_ label: String, _ dimensions: [(String, String)], seconds: Double) {
        handle(\.timers, label, dimensions) { label, dimensions, factory in
            factory.map { CoreMetrics.Timer(label: label, dimensions: dimensions, factory: $0) } ?? CoreMetrics.Timer(label: label, dimensions: dimensions)
        }.recordNanoseconds(seconds.isFinite && seconds > 0 ? Int64(min(seconds, 1e6) * 1e9) : 0)
    }

    /// The handle for a label and dimensions from `cache`, made by `make` (with the recorder's factory, or nil for
    /// `MetricsSystem`'s) the first time.
    private func handle<Metric>(_ cache: ReferenceWritableKeyPath<MetricsProbeRecorder, [Key: Metric]>, _ label: String,
                                _ dimensions: [(String, String)],
                                make: (String, [(String, String)], (any MetricsFactory)?) -> Metric) -> Metric {
        let key = Key(label: label, dimensions: dimensions.flatMap { [$0.0, $0.1] })
        lock.lock()
        defer { lock.unlock() }
        if let existing = self[keyPath: cache][key] { return existing }
        let made = make(label, dimensions, factory)
        self[keyPath: cache][key] = made
        return made
    }

    private static func context(_ name: String?) -> String { name.flatMap { $0.isEmpty ? nil : $0 } ?? "unnamed" }

    public func record(_ event: consuming ProbeEvent, at time: UInt64) {
        switch event {
        case .statement(let e):
            count("faultline_statements", [("purpose", e.purpose.rawValue), ("plan", e.planVerdict)])
            self.time("faultline_statement_duration", [("purpose", e.purpose.rawValue)], seconds: e.duration)
        case .fetch(let e):
            let context = Self.context(e.contextName)
            count("faultline_fetches", [("entity", e.entity), ("result", e.resultType.rawValue), ("context", context)])
            self.time("faultline_fetch_duration", [("entity", e.entity), ("context", context)], seconds: e.totalTime)
            if e.rows > 0 { count("faultline_fetched_rows", [("entity", e.entity)], by: e.rows) }
        case .save(let e):
            let context = Self.context(e.contextName)
            count("faultline_saves", [("outcome", e.error == nil ? "saved" : "failed"), ("context", context)])
            self.time("faultline_save_duration", [("context", context)], seconds: e.duration)
            if e.conflicts > 0 { count("faultline_conflicts", [("context", context)], by: e.conflicts) }
        case .fault(let e):
            let entity = e.objectID.entity.name
            count("faultline_faults", [("entity", entity), ("kind", e.kind.rawValue), ("source", e.source.rawValue)])
            if e.kind == .object {
                count(e.source == .rowCache ? "faultline_row_cache_hits" : "faultline_row_cache_misses", [("entity", entity)])
            }
        case .batch(let e):
            count("faultline_batch_requests", [("kind", e.kind), ("entity", e.entity)])
        default:
            break
        }
    }
}
