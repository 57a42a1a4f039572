import Faultline

/// Each context's gauges over a trace (the registered and materialized objects and the row cache's size its fetch
/// and save events record): a series per context for the report's chart, and, over its saves, what the
/// context-growth analyzer judges. Memory stays bounded: a series keeps at most `maximumPoints`, dropping every
/// other point when full.
public struct ContextGrowth: Sendable {
    /// Points a series keeps at most.
    public static let maximumPoints = 600

    public struct Point: Sendable, Equatable {
        public var time: Double
        public var gauges: ContextGauges
    }

    public struct Series: Sendable {
        public let context: Int
        public private(set) var points: [Point] = []
        /// Every how many gauged events a point is kept (doubles each time the series fills).
        private var stride = 1
        private var seen = 0
        /// Saves with gauges; registered objects after the first and after the latest; saves that ended with more
        /// registered objects than the one before.
        public private(set) var saves = 0
        public private(set) var firstSaved = 0
        public private(set) var lastSaved = 0
        public private(set) var rises = 0
        /// The saves' time, their trace lines (the first few) and indexes, their call site (the latest), segments
        /// and span.
        var saveCost = 0.0
        var lines: [Int] = []
        var members: [Int] = []
        var callSite: String?
        var segments: [String] = []
        var firstTime = Double.infinity, lastTime = 0.0
        var last: ContextGauges?

        init(context: Int) { self.context = context }

        mutating func add(_ event: TraceEvent, _ gauges: ContextGauges, at index: Int) {
            if seen % stride == 0 {
                if points.count == ContextGrowth.maximumPoints {
                    points = points.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
                    stride *= 2
                }
                if seen % stride == 0 { points.append(Point(time: event.time, gauges: gauges)) }
            }
            seen += 1
            last = gauges
            guard event.kind == .save else { return }
            if saves == 0 { firstSaved = gauges.registeredObjects } else if gauges.registeredObjects > lastSaved { rises += 1 }
            saves += 1
            lastSaved = gauges.registeredObjects
            saveCost += event.duration
            if lines.count < 5 { lines.append(event.line) }
            members.append(index)
            callSite = event.callSite ?? callSite
            if !event.segment.isEmpty && !segments.contains(event.segment) { segments.append(event.segment) }
            firstTime = min(firstTime, event.time)
            lastTime = max(lastTime, event.time)
        }
    }

    /// Series by context, in the order the contexts first appear.
    public private(set) var series: [Series] = []
    private var positions: [Int: Int] = [:]

    public init() {}

    public mutating func add(_ event: TraceEvent, at index: Int) {
        guard let gauges = event.gauges, event.kind == .fetch || event.kind == .save else { return }
        let position = positions[event.context] ?? {
            positions[event.context] = series.count
            series.append(Series(context: event.context))
            return series.count - 1
        }()
        series[position].add(event, gauges, at: index)
    }
}

extension Analyzers {
    /// A context whose registered objects grow save after save and never fall back: the long import that keeps
    /// every object it saved (a context retaining its objects, an undo manager, the program's own references),
    /// with no `reset()` between batches.
    func growingContexts(_ growth: ContextGrowth) -> [Finding] {
        growth.series.compactMap { s in
            guard s.saves >= thresholds.growingSaves, s.lastSaved - s.firstSaved >= thresholds.growingObjects,
                  s.lastSaved >= 2 * max(1, s.firstSaved), Double(s.rises) >= 0.8 * Double(s.saves - 1) else { return nil }
            let last = s.last.map { " (at the end: \($0.materializedObjects) materialized, \($0.rowCacheRows) rows in the row cache)" } ?? ""
            return Finding(kind: .growingContext, segment: s.segments.first ?? "", segments: s.segments, callSite: s.callSite,
                           evidence: "context \(s.context): \(s.saves) saves, its registered objects growing at \(s.rises) of them from \(s.firstSaved) to \(s.lastSaved)\(last); nothing let go of the saved objects",
                           fix: "call context.reset() after each saved batch (or refresh the saved objects with refresh(_:mergeChanges: false)); keep no references to imported objects (arrays, a parent object's to-many); leave retainsRegisteredObjects false and undoManager nil during the import",
                           cost: s.saveCost, count: s.saves, lines: s.lines, times: s.firstTime <= s.lastTime ? s.firstTime...s.lastTime : nil, events: s.members)
        }
    }
}
