import Foundation
import Tracing

/// Sends the probes to swift-distributed-tracing: each fetch, save, batch request and migration a span, each SQL
/// statement a child span, faults events on the span they happened in (a fault outside any of those that read the
/// store, a span of its own).
///
/// Spans join the caller's `ServiceContext`: a fetch inside `withSpan("GET /departments")` is a child of that span,
/// on whatever queue the context runs it (`perform` and `performAndWait` carry the caller's service context to the
/// context's queue while tracing is on). Attach it with `Probes(recorders: [TracingProbeRecorder()])`; it uses the
/// tracer bootstrapped in `InstrumentationSystem` unless given one.
///
/// | span | name | attributes |
/// |---|---|---|
/// | fetch | `fetch <Entity>` | `faultline.entity`, `faultline.predicate`, `faultline.result_type`, `faultline.rows`, `faultline.results`, `faultline.statements`, `faultline.faults`, `code.filepath`, `code.lineno`, `faultline.context` |
/// | save | `save` | `faultline.inserted`, `faultline.updated`, `faultline.deleted`, `faultline.statements`, `faultline.conflicts` |
/// | batch request | `batch <kind> <Entity>` | `faultline.entity`, `faultline.rows`, `faultline.statements` |
/// | migration | `migrate` (each entity's copy a child `migrate <Entity>`) | `faultline.rows`, `faultline.statements` |
/// | fault that read the store, outside any operation | `fault <Entity>` (`fault <Entity>.<relationship>`) | `faultline.object`, `faultline.source`, `faultline.relationship`, `faultline.count` |
/// | statement | its first word (`SELECT`, `INSERT`…) | `db.system.name` = `sqlite`, `db.query.text`, `faultline.rows`, `faultline.plan` |
///
/// Failed saves and batch requests set the span's status to error.
public final class TracingProbeRecorder: ProbeRecorder, @unchecked Sendable {
    private let tracer: (any Tracer)?

    /// A recorder sending spans to `tracer` (default: `InstrumentationSystem.tracer`, read when each span starts, so
    /// that a recorder made before the program bootstraps its tracer uses it).
    public init(tracer: (any Tracer)? = nil) {
        self.tracer = tracer
    }

    private func startSpan(_ name: String, context: ServiceContext, kind: SpanKind, at instant: some TracerInstant) -> any Span {
        if let tracer { return tracer.startSpan(name, context: context, ofKind: kind, at: instant, function: #function, file: #fileID, line: #line) }
        return Tracing.startSpan(name, context: context, ofKind: kind, at: instant)
    }

    /// One operation in progress on this thread: its span (started when it began).
    private final class Frame {
        let span: any Span
        var faults = 0
        /// The operation's event came (a migration has none of its own: its entities' copies are its children).
        var sawEvent: Bool
        init(span: any Span, expectsEvent: Bool) {
            self.span = span
            sawEvent = !expectsEvent
        }
    }

    /// This thread's open operations, innermost last.
    private final class FrameStack {
        var frames: [Frame] = []
    }

    private static let stackKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<FrameStack>.fromOpaque(pointer).release()
        }
        return key
    }()

    private var stack: FrameStack {
        if let pointer = pthread_getspecific(Self.stackKey) { return Unmanaged<FrameStack>.fromOpaque(pointer).takeUnretainedValue() }
        let stack = FrameStack()
        pthread_setspecific(Self.stackKey, Unmanaged.passRetained(stack).toOpaque())
        return stack
    }

    /// The context a new span on this thread belongs to: the innermost open operation's span, else the caller's.
    private func parentContext(_ stack: FrameStack) -> ServiceContext {
        stack.frames.last?.span.context ?? ServiceContext.current ?? .topLevel
    }

    /// An operation begins on this thread (called by the engine when tracing is on).
    func begin(_ operation: ProbeOperation) {
        let stack = stack
        let span = startSpan(operation.rawValue, context: parentContext(stack), kind: .client, at: DefaultTracerClock.now)
        stack.frames.append(Frame(span: span, expectsEvent: operation != .migration))
    }

    /// The innermost operation on this thread ends.
    func end() {
        let stack = stack
        guard let frame = stack.frames.popLast() else { return }
        if !frame.sawEvent { frame.span.setStatus(SpanStatus(code: .error, message: "ended by an error before its probe event")) }
        frame.span.end(at: DefaultTracerClock.now)
    }

    public func record(_ event: consuming ProbeEvent, at time: UInt64) {
        let stack = stack
        let frame = stack.frames.last
        switch event {
        case .statement(let e):
            // A store's schema statements when it opens belong to no operation: not a span of their own each.
            if frame == nil && e.purpose == .schema { return }
            let span = startSpan(Self.keyword(e.sql), context: parentContext(stack), kind: .client, at: Self.instant(time, minus: e.duration))
            span.attributes["db.system.name"] = "sqlite"
            span.attributes["db.query.text"] = e.sql
            span.attributes["faultline.rows"] = e.rows
            span.attributes["faultline.purpose"] = e.purpose.rawValue
            span.attributes["faultline.plan"] = e.planVerdict
            span.attributes["faultline.full_scan_steps"] = e.fullScanSteps
            span.attributes["faultline.sorts"] = e.sorts
            span.attributes["faultline.vm_steps"] = e.vmSteps
            span.end(at: Self.instant(time, minus: 0))
        case .fetch(let e):
            guard let frame else { return }
            frame.sawEvent = true
            frame.span.operationName = "fetch \(e.entity)"
            var a = frame.span.attributes
            a["faultline.entity"] = e.entity
            if let predicate = e.predicate?.predicateFormat { a["faultline.predicate"] = predicate }
            a["faultline.result_type"] = e.resultType.rawValue
            a["faultline.rows"] = e.rows
            a["faultline.results"] = e.results
            a["faultline.statements"] = e.statements
            a["faultline.registered"] = e.registered
            a["faultline.sql_time"] = e.sqlTime
            if e.stepTime > 0 {
                a["faultline.step_time"] = e.stepTime
                a["faultline.row_cache_time"] = e.rowCacheTime
            }
            if e.batchSize > 0 { a["faultline.batch_size"] = e.batchSize }
            if !e.prefetch.isEmpty { a["faultline.prefetch"] = e.prefetch }
            if !e.sort.isEmpty { a["faultline.sort"] = e.sort.map { "\($0.keyPath) \($0.ascending ? "ascending" : "descending")" } }
            a["faultline.faults"] = frame.faults
            if !e.optionalNotEqual.isEmpty { a["faultline.optional_not_equal"] = e.optionalNotEqual }
            a["faultline.context"] = e.context
            Self.set(e.callSite, in: &a)
            frame.span.attributes = a
        case .save(let e):
            guard let frame else { return }
            frame.sawEvent = true
            var a = frame.span.attributes
            a["faultline.inserted"] = e.inserted.values.reduce(0, +)
            a["faultline.updated"] = e.updated.values.reduce(0, +)
            a["faultline.deleted"] = e.deleted.values.reduce(0, +)
            a["faultline.statements"] = e.statements
            a["faultline.conflicts"] = e.conflicts
            if e.bytes > 0 { a["faultline.bytes"] = e.bytes }
            for (key, counts) in [("inserted", e.inserted), ("updated", e.updated), ("deleted", e.deleted)] where !counts.isEmpty {
                a["faultline.\(key)_entities"] = counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            }
            a["faultline.context"] = e.context
            Self.set(e.callSite, in: &a)
            frame.span.attributes = a
            if let error = e.error { frame.span.setStatus(SpanStatus(code: .error, message: error)) }
        case .batch(let e):
            guard let frame else { return }
            frame.sawEvent = true
            frame.span.operationName = "batch \(e.kind) \(e.entity)"
            var a = frame.span.attributes
            a["faultline.entity"] = e.entity
            a["faultline.rows"] = e.rows
            a["faultline.statements"] = e.statements
            a["faultline.context"] = e.context
            frame.span.attributes = a
            if let error = e.error { frame.span.setStatus(SpanStatus(code: .error, message: error)) }
        case .migration(let e):
            let span = startSpan("migrate \(e.entity)", context: parentContext(stack), kind: .internal, at: Self.instant(time, minus: e.duration))
            span.attributes["faultline.step"] = e.step
            span.attributes["faultline.from"] = e.from
            span.attributes["faultline.to"] = e.to
            span.attributes["faultline.rows"] = e.rows
            span.attributes["faultline.statements"] = e.statements
            span.end(at: Self.instant(time, minus: 0))
        case .fault(let e):
            // Inside an operation, an event on its span; outside, a span of its own when it read the store (a
            // row-cache fault outside any operation costs no span: the metrics count it).
            let entity = e.objectID.entity.name
            let name = e.relationship.map { "fault \(entity).\($0)" } ?? "fault \(entity)"
            var attributes: SpanAttributes = [:]
            attributes["faultline.object"] = e.object
            attributes["faultline.kind"] = e.kind.rawValue
            attributes["faultline.source"] = e.source.rawValue
            attributes["faultline.context"] = e.context
            if let relationship = e.relationship { attributes["faultline.relationship"] = relationship }
            if let count = e.count { attributes["faultline.count"] = count }
            if let batch = e.batch { attributes["faultline.batch"] = batch }
            if e.countOnly { attributes["faultline.count_only"] = true }
            if e.missing { attributes["faultline.missing"] = true }
            if let site = e.stack?.callSite, let colon = site.lastIndex(of: ":"), let line = Int(site[site.index(after: colon)...]) {
                attributes["code.filepath"] = String(site[..<colon])
                attributes["code.lineno"] = line
            }
            if let frame {
                frame.faults += 1
                frame.span.addEvent(SpanEvent(name: name, at: Self.instant(time, minus: 0), attributes: attributes))
            } else if e.source == .database {
                let span = startSpan(name, context: parentContext(stack), kind: .client, at: Self.instant(time, minus: e.duration))
                span.attributes = attributes
                span.end(at: Self.instant(time, minus: 0))
            }
        default:
            break
        }
    }

    /// `code.filepath` and `code.lineno` (OpenTelemetry's names) of the caller's code.
    private static func set(_ site: CallSite?, in attributes: inout SpanAttributes) {
        guard let site else { return }
        attributes["code.filepath"] = site.file.description
        attributes["code.lineno"] = Int(site.line)
    }

    /// The wall-clock instant `seconds` before the probe clock's `time`.
    private static func instant(_ time: UInt64, minus seconds: Double) -> ProbeInstant {
        let wall = DefaultTracerClock.now.nanosecondsSinceEpoch, now = ProbeClock.now()
        let age = now > time ? now - time : 0
        // (A duration is a difference of the probe clock's readings: finite; clamped all the same.)
        let back = age &+ (seconds.isFinite && seconds > 0 ? UInt64(min(seconds, 1e6) * 1e9) : 0)
        return ProbeInstant(nanosecondsSinceEpoch: wall > back ? wall - back : 0)
    }

    /// A statement's first word, upper-cased (`SELECT`, `INSERT`, `PRAGMA`…): its span's name.
    private static func keyword(_ sql: String) -> String {
        let word = sql.drop { $0 == " " || $0 == "\n" }.prefix { $0.isLetter }
        return word.isEmpty ? "SQL" : word.uppercased()
    }
}

/// An instant on the wall clock, for spans that started before they were recorded.
struct ProbeInstant: TracerInstant {
    let nanosecondsSinceEpoch: UInt64
    static func < (a: ProbeInstant, b: ProbeInstant) -> Bool { a.nanosecondsSinceEpoch < b.nanosecondsSinceEpoch }
}

/// The operations the tracing recorder makes spans of; the raw value is the span's name until its event renames it.
enum ProbeOperation: String {
    case fetch, save, batch, migration = "migrate"
}

