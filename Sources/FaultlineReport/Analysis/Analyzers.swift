import Foundation

/// Thresholds of the analyzers (configurable from the command line).
public struct AnalyzerThresholds: Sendable {
    /// Faults of one entity (or relationship) from one call site, each reading SQLite, that make an N+1 finding.
    public var nPlusOne = 10
    /// Runs of one fetch (same entity, predicate and sort, from one call site) that make a repeated-fetch finding.
    public var repeatedFetch = 5
    /// Fetches from one call site whose objects were all registered already that make an avoidable-fetch finding.
    public var avoidableFetch = 3
    /// Objects a fetch without a batch size may return before it is flagged.
    public var largeFetch = 1_000
    /// Saves from one call site that make a many-small-saves finding (when they average 2 objects or fewer).
    public var smallSaves = 20
    /// Full-scan steps (rows visited) a statement must add up to before its scan is flagged.
    public var fullScanSteps = 1_000

    public init() {}
}

/// Finds the patterns the seeds warn about in a trace.
public struct Analyzers {
    public var thresholds: AnalyzerThresholds
    /// Call sites whose findings are not reported (`Module/File.swift:42`, or a file to allow all its lines).
    public var allowedCallSites: Set<String>

    public init(thresholds: AnalyzerThresholds = AnalyzerThresholds(), allowedCallSites: Set<String> = []) {
        self.thresholds = thresholds
        self.allowedCallSites = allowedCallSites
    }

    /// Every finding in `trace`, most costly first.
    public func findings(in trace: TraceFile) -> [Finding] {
        var found = faultStorms(trace) + scans(trace) + repeatedFetches(trace) + avoidableFetches(trace) + unusedPrefetches(trace) + largeFetches(trace) + smallSaves(trace)
        found.removeAll { finding in
            guard let site = finding.callSite else { return false }
            let file = site.split(separator: ":").first.map(String.init) ?? site
            return allowedCallSites.contains(site) || allowedCallSites.contains(file)
        }
        if trace.source == .coreDataLog {
            for i in found.indices { found[i].fix += " " + Self.callSiteHint }
        }
        return found.sorted { $0.cost != $1.cost ? $0.cost > $1.cost : $0.count > $1.count }
    }

    /// Where a log's finding happens in the app: a Core Data log names no code.
    static let callSiteHint = "(The log names no code: Instruments' Core Data template shows each fetch's and fault's call stack, and running the same code on Faultline's engine with FAULTLINE_TRACE=trace.jsonl gives the call site of every finding.)"

    private struct Group {
        var count = 0
        var cost = 0.0
        var fullScanSteps = 0
        var savedObjects = 0
        var lines: [Int] = []
        var sample: TraceEvent
        mutating func add(_ event: TraceEvent) {
            count += 1
            cost += event.duration
            fullScanSteps += event.fullScanSteps
            savedObjects += event.savedObjects
            if lines.count < 5 { lines.append(event.line) }
        }
    }

    private func group(_ events: [TraceEvent], by key: (TraceEvent) -> String?) -> [(String, Group)] {
        var groups: [String: Group] = [:]
        var order: [String] = []
        for event in events {
            guard let k = key(event) else { continue }
            if groups[k] == nil { groups[k] = Group(sample: event); order.append(k) }
            groups[k]!.add(event)
        }
        return order.map { ($0, groups[$0]!) }
    }

    /// N+1: one call site fulfilling many faults of one entity (or one relationship) from SQLite, one at a time.
    func faultStorms(_ trace: TraceFile) -> [Finding] {
        let misses = trace.events.filter { $0.kind == .cacheMiss && $0.batch == nil }
        return group(misses) { "\($0.segment)|\($0.callSite ?? "")|\($0.faultKind ?? "")|\($0.objectEntity ?? "")|\($0.relationship ?? "")|\($0.countOnly)" }
            .compactMap { _, g in
                guard g.count >= thresholds.nPlusOne else { return nil }
                let e = g.sample
                let entity = e.objectEntity ?? "?"
                if e.faultKind == "relationship", let relationship = e.relationship, e.countOnly {
                    return Finding(kind: .countThroughFaults, segment: e.segment, callSite: e.callSite,
                                   evidence: "\(entity).\(relationship): \(g.count) relationship faults fired only to count the members",
                                   fix: "keep a denormalized counter attribute on \(entity), updated in willSave (as Moody's numberOfMoods), or count in SQL with one fetch: context.count(for:) on the destination with a predicate on the inverse",
                                   cost: g.cost, count: g.count, lines: g.lines)
                }
                if e.faultKind == "relationship", let relationship = e.relationship {
                    return Finding(kind: .relationshipFaultStorm, segment: e.segment, callSite: e.callSite,
                                   evidence: "\(entity).\(relationship): \(g.count) to-many relationship faults, each a SELECT",
                                   fix: "prefetch it with the fetch: request.relationshipKeyPathsForPrefetching = [\"\(relationship)\"] (one statement for all of them)",
                                   cost: g.cost, count: g.count, lines: g.lines)
                }
                return Finding(kind: .nPlusOne, segment: e.segment, callSite: e.callSite,
                               evidence: "\(entity): \(g.count) faults fulfilled one at a time from SQLite (N+1)",
                               fix: "prefetch the relationship that leads to \(entity) (request.relationshipKeyPathsForPrefetching), or batch-fault the objects first with context.fulfillFaults(for:) — one statement instead of \(g.count)",
                               cost: g.cost, count: g.count, lines: g.lines)
            }
    }

    /// Statements that scan a table or sort in a temporary B-tree, with the fetch that ran them.
    func scans(_ trace: TraceFile) -> [Finding] {
        var plans: [String: [String]] = [:]
        for event in trace.events where event.kind == .queryPlan { plans[event.sql ?? ""] = event.planDetails }
        var findings: [Finding] = []
        let statements = trace.events.filter { $0.kind == .statement && ($0.purpose == "fetch" || $0.purpose == "fault") }
        for (_, g) in group(statements, by: { "\($0.segment)|\($0.sql ?? "")" }) {
            let statementSQL = g.sample.sql ?? ""
            guard let plan = plans[statementSQL] else { continue }
            let steps = g.fullScanSteps
            let scanned = plan.filter { $0.hasPrefix("SCAN") && !$0.contains("COVERING INDEX") && !$0.contains("json_each") && !$0.contains("CONSTANT ROW") }
            let fetch = trace.events.first { $0.kind == .fetch && $0.segment == g.sample.segment && $0.line >= g.sample.line }
            let shape = fetch.flatMap { f in f.entity.map { Finding.FetchShape(entity: $0, predicate: f.predicate, sort: f.sort) } }
            let site = fetch?.callSite
            let columns = Self.whereColumns(statementSQL)
            let table = Self.table(statementSQL) ?? "?"
            // A fetch with no condition on a column reads every row by design: only a filtered scan is a finding.
            // A Core Data log counts no rows visited: its plans' filtered scans are reported as they are.
            let fromLog = trace.source == .coreDataLog
            if !scanned.isEmpty && (steps >= thresholds.fullScanSteps || fromLog) && !columns.isEmpty {
                let index = "CREATE INDEX \(table)_\(columns.joined(separator: "_"))_INDEX ON \(table) (\(columns.joined(separator: ", ")))"
                findings.append(Finding(kind: .fullScan, segment: g.sample.segment, callSite: site,
                                        evidence: "\(table): \(g.count) run\(g.count == 1 ? "" : "s") scanned the whole table (\(fromLog ? "" : "\(steps) full-scan steps, ")\(scanned[0]))\(fetch?.predicate.map { "; \(fromLog ? "" : "predicate ")\($0)" } ?? "")",
                                        fix: "index the predicate's attribute(s) in the model (Indexed, or a fetch index): \(index) — `faultline explain` proves it on a scratch copy of the store",
                                        cost: g.cost, count: g.count, lines: g.lines, fetch: shape, sql: statementSQL))
            }
            if plan.contains(where: { $0.contains("TEMP B-TREE FOR ORDER BY") }) {
                let order = Self.orderColumns(statementSQL)
                let compound = (columns + order.filter { !columns.contains($0) })
                findings.append(Finding(kind: .tempBTree, segment: g.sample.segment, callSite: site,
                                        evidence: "\(table): \(g.count) run\(g.count == 1 ? "" : "s") sorted their rows in a temporary B-tree\(fetch.map { $0.sort.isEmpty ? "" : " (sort \($0.sort.joined(separator: ", ")))" } ?? "")",
                                        fix: compound.isEmpty ? "a compound index on the predicate's columns followed by the sort's" :
                                            "a compound index (\(compound.joined(separator: ", "))) — the predicate's columns, then the sort's — lets SQLite read rows in order: CREATE INDEX \(table)_\(compound.joined(separator: "_"))_INDEX ON \(table) (\(compound.joined(separator: ", ")))",
                                        cost: g.cost, count: g.count, lines: g.lines, fetch: shape, sql: statementSQL))
            }
        }
        return findings
    }

    /// The same fetch (entity, predicate, sort) run many times from one call site.
    func repeatedFetches(_ trace: TraceFile) -> [Finding] {
        let fetches = trace.events.filter { $0.kind == .fetch }
        return group(fetches) { "\($0.segment)|\($0.callSite ?? "")|\($0.entity ?? "")|\($0.predicate ?? "")|\($0.sort.joined(separator: ","))|\($0.resultType ?? "")" }
            .compactMap { _, g in
                guard g.count >= thresholds.repeatedFetch else { return nil }
                let e = g.sample
                return Finding(kind: .repeatedFetch, segment: e.segment, callSite: e.callSite,
                               evidence: "\(e.entity ?? "?"): the same fetch ran \(g.count) times\(e.predicate.map { " (predicate \($0))" } ?? "")",
                               fix: "fetch once and keep the result, or look the objects up among the registered ones (context.registeredObject(for:)) before fetching",
                               cost: g.cost, count: g.count, lines: g.lines)
            }
    }

    /// Fetches whose objects were all registered in the context already: a lookup would have done (no SQL).
    func avoidableFetches(_ trace: TraceFile) -> [Finding] {
        let avoidable = trace.events.filter { $0.kind == .fetch && $0.results > 0 && $0.registered == $0.results }
        return group(avoidable) { "\($0.segment)|\($0.callSite ?? "")|\($0.entity ?? "")" }.compactMap { _, g in
            guard g.count >= thresholds.avoidableFetch else { return nil }
            let e = g.sample
            return Finding(kind: .avoidableFetch, segment: e.segment, callSite: e.callSite,
                           evidence: "\(e.entity ?? "?"): \(g.count) fetches returned only objects the context had registered already",
                           fix: "look among the registered objects first (context.registeredObject(for:), or a scan of registeredObjects — Core Data's find-or-fetch) and fetch only on a miss",
                           cost: g.cost, count: g.count, lines: g.lines)
        }
    }

    /// Prefetches none of whose objects were used before their context reset or went away.
    func unusedPrefetches(_ trace: TraceFile) -> [Finding] {
        let unused = trace.events.filter { $0.kind == .prefetchUse && $0.loaded > 0 && $0.used == 0 }
        return group(unused) { "\($0.segment)|\($0.callSite ?? "")|\($0.entity ?? "")|\($0.keyPath ?? "")" }.map { _, g in
            let e = g.sample
            let loaded = unused.lazy.filter { $0.segment == e.segment && $0.callSite == e.callSite && $0.keyPath == e.keyPath && $0.entity == e.entity }.reduce(0) { $0 + $1.loaded }
            return Finding(kind: .unusedPrefetch, segment: e.segment, callSite: e.callSite,
                           evidence: "\(e.entity ?? "?").\(e.keyPath ?? "?"): \(g.count == 1 ? "a prefetch" : "\(g.count) prefetches") loaded \(loaded) objects and none was used",
                           fix: "take \"\(e.keyPath ?? "")\" out of relationshipKeyPathsForPrefetching: it costs a statement and memory for nothing",
                           cost: 0, count: g.count, lines: g.lines)
        }
    }

    /// Fetches that return many objects with no batch size.
    func largeFetches(_ trace: TraceFile) -> [Finding] {
        let large = trace.events.filter {
            $0.kind == .fetch && $0.batchSize == 0 && $0.results >= thresholds.largeFetch && ($0.resultType == "objects" || $0.resultType == "faults")
        }
        return group(large) { "\($0.segment)|\($0.callSite ?? "")|\($0.entity ?? "")" }.map { _, g in
            let e = g.sample
            return Finding(kind: .largeFetchWithoutBatchSize, segment: e.segment, callSite: e.callSite,
                           evidence: "\(e.entity ?? "?"): \(g.count == 1 ? "a fetch" : "\(g.count) fetches") returned \(e.results) objects with no batch size, every row read and cached",
                           fix: "set request.fetchBatchSize to about twice the rows on screen (20 for a table view): IDs first, rows as they are shown",
                           cost: g.cost, count: g.count, lines: g.lines)
        }
    }

    /// Many saves of a few objects each from one call site (a save in a loop).
    func smallSaves(_ trace: TraceFile) -> [Finding] {
        let saves = trace.events.filter { $0.kind == .save }
        return group(saves) { "\($0.segment)|\($0.callSite ?? "")" }.compactMap { _, g in
            guard g.count >= thresholds.smallSaves else { return nil }
            let objects = g.savedObjects
            guard Double(objects) / Double(g.count) <= 2 else { return nil }
            return Finding(kind: .manySmallSaves, segment: g.sample.segment, callSite: g.sample.callSite,
                           evidence: "\(g.count) saves of \(objects) objects in all (one transaction each)",
                           fix: "save once after the loop (or every few hundred changes): fewer, larger saves cost far less in total",
                           cost: g.cost, count: g.count, lines: g.lines)
        }
    }

    /// `t0.ZCOLUMN` names the WHERE clause compares, in order.
    static func whereColumns(_ sql: String) -> [String] {
        guard let whereRange = sql.range(of: " WHERE ") else { return [] }
        let end = sql.range(of: " ORDER BY ", range: whereRange.upperBound..<sql.endIndex)?.lowerBound ?? sql.endIndex
        return columns(in: String(sql[whereRange.upperBound..<end])).filter { $0 != "Z_PK" && $0 != "Z_ENT" }
    }

    static func orderColumns(_ sql: String) -> [String] {
        guard let order = sql.range(of: " ORDER BY ") else { return [] }
        return columns(in: String(sql[order.upperBound...]))
    }

    private static func columns(in text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let range = rest.range(of: "t0.") {
            let name = rest[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !name.isEmpty && !found.contains(String(name)) { found.append(String(name)) }
            rest = rest[range.upperBound...]
        }
        return found
    }

    static func table(_ sql: String) -> String? {
        guard let from = sql.range(of: " FROM ") else { return nil }
        let name = sql[from.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.isEmpty ? nil : String(name)
    }
}
