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

    /// Faults fulfilled from the row cache over all faults.
    public var rowCacheHitRatio: Double? {
        let all = faults.count + cacheMisses.count
        return all > 0 ? Double(faults.count) / Double(all) : nil
    }

    public init(_ trace: TraceFile) {
        var groups: [String: StatementGroup] = [:]
        // Fingerprints by SQL text: a trace repeats a few texts many times.
        var fingerprints: [String: String] = [:]
        func fingerprint(_ sql: String) -> String {
            if let known = fingerprints[sql] { return known }
            let computed = StatementFingerprint.of(sql)
            fingerprints[sql] = computed
            return computed
        }
        var plans: [String: [String]] = [:]
        var fetchSites: [String: Tally] = [:], savedEntities: [String: Tally] = [:], saveSites: [String: Tally] = [:]
        var byEntity: [String: Tally] = [:], faultEntities: [String: Tally] = [:], missSites: [String: Tally] = [:], segments: [String: Tally] = [:]
        var segmentOrder: [String] = []
        func add(_ tally: inout [String: Tally], _ key: String, _ time: Double, rows: Int = 0) {
            tally[key, default: Tally(key: key)].count += 1
            tally[key]!.time += time
            tally[key]!.rows += rows
        }
        for event in trace.events {
            events += 1
            duration = Swift.max(duration, event.time)
            if !event.segment.isEmpty && segments[event.segment] == nil { segmentOrder.append(event.segment) }
            switch event.kind {
            case .statement:
                statementCount += 1
                let key = fingerprint(event.sql ?? "")
                var group = groups[key] ?? StatementGroup(fingerprint: key)
                group.count += 1
                group.total += event.duration
                group.durations.append(event.duration)
                group.rows += event.rows
                group.fullScanSteps += event.fullScanSteps
                group.sorts += event.sorts
                groups[key] = group
                if !["fetch", "fault", "relationshipFault", "save"].contains(event.purpose ?? "") {
                    otherSQL.count += 1
                    otherSQL.time += event.duration
                }
            case .queryPlan:
                let key = fingerprint(event.sql ?? "")
                if plans[key] == nil { plans[key] = event.planDetails }
            case .fetch:
                fetches.count += 1
                fetches.time += event.duration
                fetches.rows += event.rows
                add(&byEntity, event.entity ?? "?", event.duration, rows: event.rows)
                add(&fetchSites, event.callSite ?? "(unknown call site)", event.duration, rows: event.rows)
            case .save:
                saves.count += 1
                saves.time += event.duration
                let objects = event.savedObjects
                add(&saveSites, event.callSite ?? "(unknown call site)", event.duration, rows: objects)
                for (entity, count) in [event.inserted, event.updated, event.deleted].flatMap({ $0 }) {
                    savedEntities[entity, default: Tally(key: entity)].count += count
                    savedEntities[entity]!.time += objects > 0 ? event.duration * Double(count) / Double(objects) : 0
                }
            case .fault:
                faults.count += 1
                faults.time += event.duration
                add(&faultEntities, (event.objectEntity ?? "?") + (event.relationship.map { ".\($0)" } ?? ""), event.duration)
            case .cacheMiss:
                cacheMisses.count += 1
                cacheMisses.time += event.duration
                add(&faultEntities, (event.objectEntity ?? "?") + (event.relationship.map { ".\($0)" } ?? ""), event.duration)
                add(&missSites, event.callSite ?? "(unknown call site)", event.duration)
            case .connect, .signpost, .prefetchUse, .batch, .merge, .refresh, .migration:
                break
            }
            if !event.segment.isEmpty, event.kind != .signpost {
                segments[event.segment, default: Tally(key: event.segment)].count += 1
                if event.kind == .fetch || event.kind == .save || event.kind == .cacheMiss || event.kind == .fault {
                    segments[event.segment]!.time += event.duration
                }
            }
        }
        for (fingerprint, plan) in plans { groups[fingerprint]?.plan = plan }
        statements = groups.values.sorted { $0.total > $1.total }
        fetchesByEntity = byEntity.values.sorted { $0.time > $1.time }
        fetchesByCallSite = fetchSites.values.sorted { $0.time > $1.time }
        savesByEntity = savedEntities.values.sorted { $0.time > $1.time }
        savesByCallSite = saveSites.values.sorted { $0.time > $1.time }
        faultsByEntity = faultEntities.values.sorted { $0.time > $1.time }
        missesByCallSite = missSites.values.sorted { $0.time > $1.time }
        self.segments = segmentOrder.compactMap { segments[$0] }
    }
}
