import Foundation

/// What a trace adds up to: totals and time per category, the row cache's hit ratio, statements grouped by
/// fingerprint with their plans, fetches and faults by entity, relationship and call site, and the segments
/// (signposts).
public struct TraceSummary: Sendable {
    public struct StatementGroup: Sendable {
        public var fingerprint: String
        public var count = 0
        public var total = 0.0
        public var durations: [Double] = []
        public var rows = 0
        public var fullScanSteps = 0
        public var sorts = 0
        /// EXPLAIN QUERY PLAN detail lines of the first plan recorded for this fingerprint.
        public var plan: [String] = []
        public var p50: Double { percentile(0.5) }
        public var p95: Double { percentile(0.95) }
        public var max: Double { durations.max() ?? 0 }

        func percentile(_ p: Double) -> Double {
            guard !durations.isEmpty else { return 0 }
            let sorted = durations.sorted()
            return sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }

        /// full scan, entity walk, temp B-tree, or index, from the plan.
        public var verdicts: [String] {
            var verdicts = PlanVerdict(plan: plan, sql: "").badges
            if verdicts.isEmpty && plan.contains(where: { $0.hasPrefix("SEARCH") }) { verdicts.append("index") }
            return verdicts
        }
    }

    /// Count and time of one kind of thing, by a key (entity, relationship, call site).
    public struct Tally: Sendable {
        public var key: String
        public var count = 0
        public var time = 0.0
        public var rows = 0
    }

    public var events = 0
    public var duration = 0.0
    public var fetches = Tally(key: "fetch")
    public var saves = Tally(key: "save")
    public var faults = Tally(key: "fault (row cache)")
    public var cacheMisses = Tally(key: "cache miss")
    public var otherSQL = Tally(key: "other SQL")
    public var statementCount = 0
    public var statements: [StatementGroup] = []
    public var fetchesByEntity: [Tally] = []
    public var fetchesByCallSite: [Tally] = []
    /// Objects saved (inserted, updated or deleted) by entity; `count` is objects, `time` the saves' time shared
    /// out by objects.
    public var savesByEntity: [Tally] = []
    public var savesByCallSite: [Tally] = []
    public var faultsByEntity: [Tally] = []
    public var missesByCallSite: [Tally] = []
    public var segments: [Tally] = []

    /// Where the fetches' time went, over the fetches whose events split it (Faultline's own traces): inside
    /// SQLite, decoding rows into the row cache, and the rest (the context's: uniquing, creating and registering
    /// objects). P-25's breakdown.
    public struct FetchPhases: Sendable {
        public var fetches = 0
        public var sqlite = 0.0
        public var rowCache = 0.0
        public var context = 0.0
        public var total: Double { sqlite + rowCache + context }
    }
    public var fetchPhases = FetchPhases()

    /// Faults fulfilled from the row cache over all faults.
    public var rowCacheHitRatio: Double? {
        let all = faults.count + cacheMisses.count
        return all > 0 ? Double(faults.count) / Double(all) : nil
    }

    // What the summary adds up while events come (by fingerprint, entity, call site).
    /// Statement groups, and each one's position by fingerprint and by SQL text: a trace repeats a few texts many
    /// times, so a statement costs one lookup of its text (a fingerprint may hold non-ASCII text, whose hashing
    /// normalizes it every time).
    private var groupList: [StatementGroup] = []
    private var groupsByFingerprint: [String: Int] = [:]
    private var groupsBySQL: [String: Int] = [:]
    private var plans: [String: [String]] = [:]
    private var fetchSites: [String: Tally] = [:], savedEntities: [String: Tally] = [:], saveSites: [String: Tally] = [:]
    private var byEntity: [String: Tally] = [:], faultEntities: [String: Tally] = [:], missSites: [String: Tally] = [:], segmentTallies: [String: Tally] = [:]
    private var segmentOrder: [String] = []
    private var segmentSeen: Set<String> = []

    /// The summary of `trace`'s events.
    public init(_ trace: TraceFile) {
        self.init()
        for event in trace.events { add(event) }
        finish()
    }

    /// An empty summary, to `add` events to one at a time and `finish`.
    public init() {}

    /// The position in `groupList` of `sql`'s group, made when new.
    private mutating func group(_ sql: String) -> Int {
        if let known = groupsBySQL[sql] { return known }
        let key = StatementFingerprint.of(sql)
        let position = groupsByFingerprint[key] ?? {
            groupList.append(StatementGroup(fingerprint: key))
            groupsByFingerprint[key] = groupList.count - 1
            return groupList.count - 1
        }()
        groupsBySQL[sql] = position
        return position
    }

    private static func add(_ tally: inout [String: Tally], _ key: String, _ time: Double, rows: Int = 0) {
        tally[key, default: Tally(key: key)].count += 1
        tally[key]!.time += time
        tally[key]!.rows += rows
    }

    /// Adds one event, in trace order.
    public mutating func add(_ event: TraceEvent) {
        events += 1
        duration = Swift.max(duration, event.time)
        if !event.segment.isEmpty && event.segment != segmentOrder.last && segmentSeen.insert(event.segment).inserted { segmentOrder.append(event.segment) }
        switch event.kind {
        case .statement:
            statementCount += 1
            let position = group(event.sql ?? "")
            groupList[position].count += 1
            groupList[position].total += event.duration
            groupList[position].durations.append(event.duration)
            groupList[position].rows += event.rows
            groupList[position].fullScanSteps += event.fullScanSteps
            groupList[position].sorts += event.sorts
            switch event.purpose {
            case "fetch"?, "fault"?, "relationshipFault"?, "save"?: break
            default:
                otherSQL.count += 1
                otherSQL.time += event.duration
            }
        case .queryPlan:
            // A plan follows its statement: the statement's group knows the fingerprint.
            let sql = event.sql ?? ""
            let key = groupsBySQL[sql].map { groupList[$0].fingerprint } ?? StatementFingerprint.of(sql)
            if plans[key] == nil { plans[key] = event.planDetails }
        case .fetch:
            fetches.count += 1
            fetches.time += event.duration
            fetches.rows += event.rows
            if event.stepTime > 0 {
                fetchPhases.fetches += 1
                fetchPhases.sqlite += event.stepTime
                fetchPhases.rowCache += event.rowCacheTime
                fetchPhases.context += max(0, event.duration - event.stepTime - event.rowCacheTime)
            }
            Self.add(&byEntity, event.entity ?? "?", event.duration, rows: event.rows)
            Self.add(&fetchSites, event.callSite ?? "(unknown call site)", event.duration, rows: event.rows)
        case .save:
            saves.count += 1
            saves.time += event.duration
            let objects = event.savedObjects
            Self.add(&saveSites, event.callSite ?? "(unknown call site)", event.duration, rows: objects)
            for (entity, count) in [event.inserted, event.updated, event.deleted].flatMap({ $0 }) {
                savedEntities[entity, default: Tally(key: entity)].count += count
                savedEntities[entity]!.time += objects > 0 ? event.duration * Double(count) / Double(objects) : 0
            }
        case .fault:
            faults.count += 1
            faults.time += event.duration
            Self.add(&faultEntities, (event.objectEntity ?? "?") + (event.relationship.map { ".\($0)" } ?? ""), event.duration)
        case .cacheMiss:
            cacheMisses.count += 1
            cacheMisses.time += event.duration
            Self.add(&faultEntities, (event.objectEntity ?? "?") + (event.relationship.map { ".\($0)" } ?? ""), event.duration)
            Self.add(&missSites, event.callSite ?? "(unknown call site)", event.duration)
        case .connect, .signpost, .prefetchUse, .batch, .merge, .refresh, .invalidate, .resultsController, .migration:
            break
        }
        if !event.segment.isEmpty, event.kind != .signpost {
            segmentTallies[event.segment, default: Tally(key: event.segment)].count += 1
            if event.kind == .fetch || event.kind == .save || event.kind == .cacheMiss || event.kind == .fault {
                segmentTallies[event.segment]!.time += event.duration
            }
        }
    }

    /// Sorts what was added into the summary's tables.
    public mutating func finish() {
        for (fingerprint, plan) in plans {
            if let position = groupsByFingerprint[fingerprint] { groupList[position].plan = plan }
        }
        statements = groupList.sorted { $0.total > $1.total }
        fetchesByEntity = byEntity.values.sorted { $0.time > $1.time }
        fetchesByCallSite = fetchSites.values.sorted { $0.time > $1.time }
        savesByEntity = savedEntities.values.sorted { $0.time > $1.time }
        savesByCallSite = saveSites.values.sorted { $0.time > $1.time }
        faultsByEntity = faultEntities.values.sorted { $0.time > $1.time }
        missesByCallSite = missSites.values.sorted { $0.time > $1.time }
        segments = segmentOrder.compactMap { segmentTallies[$0] }
    }
}
