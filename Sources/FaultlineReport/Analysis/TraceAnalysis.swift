/// One pass over a trace's events, keeping what the report needs and not the events: the summary, the analyzers'
/// groups, the timeline's points and the migration steps.
public struct TraceAnalysis {
    public var summary = TraceSummary()
    public var run: Analyzers.Run
    public var timeline = TraceTimeline()
    public var migrations: [TraceEvent] = []

    public init(analyzers: Analyzers) { run = analyzers.start() }

    /// Adds one event, in trace order.
    public mutating func add(_ event: TraceEvent) {
        summary.add(event)
        run.add(event)
        timeline.add(event)
        if event.kind == .migration { migrations.append(event) }
    }
}

/// The fetches, saves, faults and cache misses of a trace as points in time by context: 13 bytes each, where the
/// events themselves would take hundreds.
public struct TraceTimeline: Sendable {
    /// The kinds drawn, in lane order.
    public static let kinds: [TraceEvent.Kind] = [.fetch, .save, .fault, .cacheMiss]

    public private(set) var times: [Double] = []
    /// Index in `kinds`.
    public private(set) var lanes: [UInt8] = []
    public private(set) var contexts: [Int32] = []
    /// Points per context.
    public private(set) var perContext: [Int: Int] = [:]

    public init() {}

    public mutating func add(_ event: TraceEvent) {
        guard let lane = Self.kinds.firstIndex(of: event.kind) else { return }
        times.append(event.time)
        lanes.append(UInt8(lane))
        contexts.append(Int32(truncatingIfNeeded: event.context))
        perContext[event.context, default: 0] += 1
    }
}
