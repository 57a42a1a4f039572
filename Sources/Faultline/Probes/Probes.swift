import Foundation
import Tracing
import Synchronization

/// Receives probe events. Called under the coordinator's lock, on the thread that did the work: keep it quick.
public protocol ProbeRecorder: AnyObject, Sendable {
    /// Receives one event; `time` is when it ended, in nanoseconds of the probes' monotonic clock (comparable
    /// with the times of other events, not with wall-clock time).
    func record(_ event: consuming ProbeEvent, at time: UInt64)
    /// Writes out anything buffered.
    func flush()
}

extension ProbeRecorder {
    public func flush() {}
}

/// Where a coordinator's probe events go: the SQLDebug logger and trace file the configuration asks for, plus any
/// recorders attached in code. With nothing attached, every probe site costs one branch.
public final class Probes: @unchecked Sendable {
    /// The settings these probes were made from.
    public let configuration: ProbeConfiguration
    /// True when any recorder listens.
    public let isEnabled: Bool
    /// The most detailed SQLDebug level any logger asks for (what to gather for events).
    let sqlDebugLevel: Int
    /// True when bind values are wanted (SQLDebug level ≥ 2, or traces with bind values).
    let wantsBindValues: Bool
    /// True when query plans are wanted (SQLDebug level 4, or any trace or attached recorder).
    let wantsQueryPlans: Bool
    let recorders: [ProbeRecorder]
    /// The trace writer when it is the only recorder (the usual traced run): called directly, not through the
    /// array and the protocol, and not retained for every event (`recorders` holds it).
    private let soleTraceWriter: Unmanaged<TraceWriter>?
    /// The tracing recorder, which is told when operations begin and end (their spans' extent).
    private let tracingRecorder: TracingProbeRecorder?
    /// True when a tracing recorder listens: operations mark their beginning and end, and contexts carry the
    /// caller's `ServiceContext` to their queues.
    public let tracesOperations: Bool

    /// Probes from a configuration, plus `recorders` (an in-memory recorder in tests, the benchmark runner's).
    public init(configuration: ProbeConfiguration = ProbeConfiguration(), recorders extra: [ProbeRecorder] = []) {
        self.configuration = configuration
        var recorders = extra
        if configuration.sqlDebugLevel > 0 { recorders.append(SQLDebugLogger(level: configuration.sqlDebugLevel)) }
        if let path = configuration.tracePath {
            if let writer = try? TraceWriter(path: path, includeBindValues: configuration.traceBindValues) {
                recorders.append(writer)
            } else {
                StandardError.write("Faultline: error: cannot write the trace to \"\(path)\"")
            }
        }
        self.recorders = recorders
        soleTraceWriter = recorders.count == 1 ? (recorders[0] as? TraceWriter).map(Unmanaged.passUnretained) : nil
        isEnabled = !recorders.isEmpty
        tracingRecorder = recorders.lazy.compactMap { $0 as? TracingProbeRecorder }.first
        tracesOperations = tracingRecorder != nil
        sqlDebugLevel = recorders.compactMap { ($0 as? SQLDebugLogger)?.level }.max() ?? 0
        wantsBindValues = configuration.sqlDebugLevel >= 2 || configuration.traceBindValues || !extra.isEmpty
        wantsQueryPlans = configuration.sqlDebugLevel >= 4 || configuration.tracePath != nil || !extra.isEmpty
    }

    /// The probes this process's environment and launch arguments ask for (shared by every coordinator that is
    /// not given its own).
    ///
    /// When the program bootstrapped a tracer (`InstrumentationSystem.bootstrap`) before its first coordinator, as
    /// a server does at launch, every fetch, save and statement is a span of it, as server libraries trace through
    /// the global tracer: one check when the probes are made, none afterwards when no tracer was bootstrapped.
    /// `FAULTLINE_TRACING=0` turns it off; a coordinator given its own `Probes` chooses its recorders.
    public static let shared: Probes = {
        let probes = Probes.forProcess(configuration: .environment, tracer: InstrumentationSystem.tracer)
        if probes.isEnabled { atexit { Probes.shared.flush() } }
        return probes
    }()

    /// The process's probes for `configuration`, with spans to `tracer` when it is a bootstrapped one (not the
    /// no-op tracer) and the configuration follows it.
    static func forProcess(configuration: ProbeConfiguration, tracer: any Tracer) -> Probes {
        let follows = configuration.followsBootstrappedTracer && !(tracer is NoOpTracer)
        return Probes(configuration: configuration, recorders: follows ? [TracingProbeRecorder(tracer: tracer)] : [])
    }

    /// No probes.
    public static let disabled = Probes()

    /// Hands `event`, which ended at `time` (`ProbeClock.now()`), to every recorder.
    func record(_ event: consuming ProbeEvent, at time: UInt64) {
        if let soleTraceWriter {
            var event = event
            soleTraceWriter._withUnsafeGuaranteedRef { $0.record(Self.take(&event), at: time) }
            return
        }
        if recorders.count == 1 { recorders[0].record(event, at: time); return }
        for recorder in recorders { recorder.record(copy event, at: time) }
    }

    /// True when the one recorder is a trace writer: it can record a fetch's predicate by its shape's text and
    /// constants, and needs no `FetchEvent.predicate` then.
    var recordsFetchesByShape: Bool { soleTraceWriter != nil }

    /// `record(_:at:)` for a fetch whose predicate the trace can record by its shape's text and
    /// `predicateConstants` (as `PredicateShape.recordedConstants`).
    func record(_ event: consuming ProbeEvent, at time: UInt64, predicateConstants: UnsafeRawBufferPointer) {
        guard let soleTraceWriter else { return record(event, at: time) }
        var event = event
        soleTraceWriter._withUnsafeGuaranteedRef { $0.record(Self.take(&event), at: time, predicateConstants: predicateConstants) }
    }

    /// Moves `event` out, leaving an event that holds no references (a closure cannot consume what it captures).
    @inline(__always) private static func take(_ event: inout ProbeEvent) -> ProbeEvent {
        var taken = ProbeEvent.signpost(SignpostEvent(name: ""))
        swap(&taken, &event)
        return taken
    }

    /// Hands `event`, which ended now, to every recorder.
    func record(_ event: consuming ProbeEvent) {
        record(event, at: ProbeClock.now())
    }

    /// An operation (fetch, save, batch request, migration) begins on this thread; `endOperation()` must follow on
    /// the same thread. Free unless a tracing recorder listens.
    @inline(__always) func beginOperation(_ operation: ProbeOperation) {
        if let tracingRecorder { tracingRecorder.begin(operation) }
    }

    /// The innermost operation begun on this thread ends.
    @inline(__always) func endOperation() {
        if let tracingRecorder { tracingRecorder.end() }
    }

    /// Marks a point in the run (a `signpost` event in the trace; nothing in SQL debug output): the events that
    /// follow belong to `name` until the next signpost.
    public func signpost(_ name: String) {
        guard isEnabled else { return }
        record(.signpost(SignpostEvent(name: name)))
    }

    private let rowCacheFaults = Atomic<Int>(0)

    /// Whether a fault event should carry a stack (called under the coordinator's lock).
    func wantsStack(cacheMiss: Bool) -> Bool {
        switch configuration.faultCallSites {
        case .none: return false
        case .cacheMisses: return cacheMiss
        case .all: return true
        case .sampled(let n):
            if cacheMiss { return true }
            return rowCacheFaults.wrappingAdd(1, ordering: .relaxed).newValue % max(n, 1) == 0
        }
    }

    /// Writes out buffered events (traces flush on their own every 100 ms and at exit).
    public func flush() {
        for recorder in recorders { recorder.flush() }
    }
}

/// Keeps every event in memory: for tests and the benchmark runner.
public final class InMemoryProbeRecorder: ProbeRecorder, @unchecked Sendable {
    private var stored: [ProbeEvent] = []
    private let lock = NSLock()

    /// An empty recorder.
    public init() {}

    public func record(_ event: consuming ProbeEvent, at time: UInt64) {
        lock.lock()
        stored.append(event)
        lock.unlock()
    }

    /// Everything recorded so far.
    public var events: [ProbeEvent] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    /// Forgets everything recorded so far.
    public func removeAll() {
        lock.lock()
        stored.removeAll()
        lock.unlock()
    }
}
