import Faultline
import Foundation

/// Thresholds of the analyzers (configurable from the command line).
public struct AnalyzerThresholds: Sendable {
    /// Faults of one entity (or relationship) from one call site, each reading SQLite, that make an N+1 finding.
    public var nPlusOne = 10
    /// Runs of one fetch (same entity, predicate and sort, from one call site) that make a repeated-fetch finding;
    /// also the distinct constants that make fetches of one shape from one call site a fetch in a loop.
    public var repeatedFetch = 5
    /// Fetches from one call site whose objects were all registered already that make an avoidable-fetch finding.
    public var avoidableFetch = 3
    /// Objects a fetch without a batch size may return before it is flagged.
    public var largeFetch = 1_000
    /// Saves from one call site that make a many-small-saves finding (when they average 2 objects or fewer).
    public var smallSaves = 20
    /// Rows a statement examines per run below which its table is too small for an index to matter.
    public var smallTable = FetchExplanation.smallTableRows
    /// A scan that returns at least this share of the rows it examines is the right plan: an index would read
    /// about as many rows, each through a B-tree lookup.
    public var unselectiveShare = FetchExplanation.unselectiveShare
    /// A batched fetch's batch size below which its batches, when many are read, make a finding.
    public var smallBatch = 10
    /// Rows a statement sorts per run below which its temporary B-tree costs too little for an index to matter.
    public var sortedRows = FetchExplanation.sortedRows
    /// Saves of one context, and growth of its registered objects over them, that make a growing-context finding
    /// (when the count rose at nearly every save and at least doubled).
    public var growingSaves = 10
    public var growingObjects = 1_000
    /// Bytes of values one save may write before it is flagged: large commits to the write-ahead log are slow
    /// (objc.io, Core Data › Relational Database Basics and SQL › Journaling).
    public var largeSaveBytes = 100_000_000
    /// Object changes one round of a fetched results controller may process before it is a change storm.
    public var changeStorm = 100

    public init() {}
}

/// Finds the patterns the seeds warn about in a trace, one finding per problem: the events of one kind from one
/// call site (or, where there is none, of one statement, entity or relationship) make one finding, whatever
/// segments they ran in.
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
        var run = start()
        for event in trace.events { run.add(event) }
        return run.findings(source: trace.source)
    }

    /// An analysis to give events one at a time (a trace read streaming), then ask for its findings.
    public func start() -> Run { Run(analyzers: self) }

    /// The part of `total` the findings' events explain, each event counted once however many findings name it
    /// (`durations`: each event's cost by index, as `Run.durations`).
    public static func explainedTime(_ findings: [Finding], durations: [Double]) -> Double {
        var seen = Set<Int>()
        var explained = 0.0
        for finding in findings {
            for index in finding.events where index < durations.count && seen.insert(index).inserted {
                explained += durations[index]
            }
        }
        return explained
    }

    /// Events grouped as they come, for the analyzers to judge at the end: memory grows with the groups, not with
    /// the trace.
    public struct Run {
        let analyzers: Analyzers
        /// Each event's cost by index, what findings add up: the time of the statements it ran (a fetch's with its
        /// prefetches and batches, a fault's, a save's from BEGIN to COMMIT) — or, in a trace with no statement
        /// events at all, the fetch's, save's or fault's own time. 0 for the other events.
        public var durations: [Double] { hasStatements ? statementTimes : eventTimes }
        /// What `durations` add up to with the time no event owns (schema statements, statements after the last
        /// fetch, save or fault): the trace's whole statement time, or its events' time when it has no statements.
        public var totalTime: Double { hasStatements ? statementTime : eventTimes.reduce(0, +) }
        /// Whether `durations` are statement times.
        public private(set) var hasStatements = false
        private var eventTimes: [Double] = [], statementTimes: [Double] = []
        private var statementTime = 0.0, pendingStatements = 0.0
        /// The latest fetches (object and index), for statements a log ties to the fetch they belong to.
        private var recentFetches: [(ObjectIdentifier, Int)] = []
        fileprivate var storms = Groups(), batches = Groups(), statements = Groups(), fetches = Groups(), avoidable = Groups()
        fileprivate var prefetches = Groups(), large = Groups(), saves = Groups()
        fileprivate var inequalities = Groups(), missing = Groups(), largeSaves = Groups()
        fileprivate var controllers = Groups(), changeStorms = Groups(), sectionCaches = Groups(), sectionReads = Groups()
        /// Indexes the trace saw created (`CREATE INDEX`), by name: (table, columns, its statement's event index).
        fileprivate var indexes: [(name: String, table: String, columns: [String], event: TraceEvent, index: Int)] = []
        /// Each context's gauges over the trace (the report's chart, the growing-context analyzer).
        public private(set) var growth = ContextGrowth()
        fileprivate var plans: [String: [String]] = [:]
        /// Each planned statement's SQL and its plan's rows.
        public var plannedStatements: [String: [String]] { plans }
        /// Statement groups' positions by SQL text (one lookup of the text per statement; the fingerprint is made once
        /// per text), and predicate shapes by predicate.
        private var statementPositions: [String: Int] = [:], shapes: [String: String] = [:]
        /// Statement groups waiting for the fetch that ran their first statement, and for the event (fetch or fault)
        /// that ran their latest.
        private var awaitingFetch: [Int] = [], awaitingOwner: [Int] = []

        init(analyzers: Analyzers) { self.analyzers = analyzers }

        static let recentFetchCount = 16

        public mutating func add(_ event: TraceEvent) {
            let index = eventTimes.count
            eventTimes.append(event.isTopLevel ? event.duration : 0)
            statementTimes.append(0)
            // A statement's time goes to the event that ran it: the one it names, else the next fetch, save, fault
            // or batch request (statements come before the event that ran them).
            switch event.kind {
            case .statement:
                hasStatements = true
                statementTime += event.duration
                if let owner = event.owner, let at = recentFetches.last(where: { $0.0 == ObjectIdentifier(owner) })?.1 {
                    statementTimes[at] += event.duration
                } else if event.purpose != "schema" && event.purpose != "other" {
                    pendingStatements += event.duration
                }
            case .fetch, .save, .fault, .cacheMiss, .batch, .migration:
                statementTimes[index] = pendingStatements
                pendingStatements = 0
                if event.kind == .fetch {
                    if recentFetches.count == Self.recentFetchCount { recentFetches.removeFirst() }
                    recentFetches.append((ObjectIdentifier(event), index))
                }
            default:
                break
            }
            let thresholds = analyzers.thresholds
            growth.add(event, at: index)
            switch event.kind {
            case .queryPlan:
                plans[event.sql ?? ""] = event.planDetails
            case .statement where (event.sql ?? "").hasPrefix("CREATE "):
                if let created = IndexDefinition(sql: event.sql ?? ""), !created.enforcesOrFilters { indexes.append((created.name, created.table, created.columns, event, index)) }
            case .statement where event.purpose == "fetch" || event.purpose == "fault":
                let sql = event.sql ?? ""
                let position: Int, isNew: Bool
                if let known = statementPositions[sql] {
                    statements.items[known].add(event, at: index)
                    (position, isNew) = (known, false)
                } else {
                    (position, isNew) = statements.add(StatementFingerprint.of(sql), event, at: index)
                    statementPositions[sql] = position
                }
                if isNew { awaitingFetch.append(position) }
                if awaitingOwner.last != position { awaitingOwner.append(position) }
            case .cacheMiss, .fault, .fetch:
                for position in awaitingOwner where statements.items[position].owners.last != index {
                    statements.items[position].owners.append(index)
                }
                awaitingOwner.removeAll(keepingCapacity: true)
                if event.missing {
                    missing.add("\(event.callSite ?? "")|\(event.objectEntity ?? "")", event, at: index)
                }
                if event.kind == .cacheMiss {
                    if event.batch == nil {
                        storms.add("\(event.callSite ?? "")|\(event.faultKind ?? "")|\(event.objectEntity ?? "")|\(event.relationship ?? "")|\(event.countOnly)", event, at: index)
                    } else if (event.batch ?? Int.max) < thresholds.smallBatch {
                        batches.add("\(event.callSite ?? "")|\(event.objectEntity ?? "")|\(event.batch ?? 0)", event, at: index)
                    }
                }
                guard event.kind == .fetch else { break }
                for position in awaitingFetch { statements.items[position].fetch = event }
                awaitingFetch.removeAll(keepingCapacity: true)
                guard !Analyzers.isEngineCallSite(event.callSite) else { break }
                let predicate = event.predicate ?? ""
                let shape = shapes[predicate] ?? {
                    let computed = StatementFingerprint.ofPredicate(predicate)
                    shapes[predicate] = computed
                    return computed
                }()
                fetches.add("\(event.callSite ?? "")|\(event.entity ?? "")|\(shape)|\(event.sort.joined(separator: ","))|\(event.resultType ?? "")", event, at: index)
                if !event.optionalNotEqual.isEmpty {
                    inequalities.add("\(event.callSite ?? "")|\(event.entity ?? "")|\(event.optionalNotEqual.joined(separator: ","))", event, at: index)
                }
                if event.results > 0 && event.registered == event.results {
                    avoidable.add("\(event.callSite ?? "")|\(event.entity ?? "")", event, at: index)
                }
                if event.batchSize == 0 && event.results >= thresholds.largeFetch && (event.resultType == "objects" || event.resultType == "faults") {
                    large.add("\(event.callSite ?? "")|\(event.entity ?? "")", event, at: index)
                }
            case .resultsController where event.faultKind == "fetch":
                // (A controller event keeps its cache name in `object` and its cache's answer in `name`: docs/trace-format.md.)
                if event.batchSize == 0 && event.results >= thresholds.largeFetch {
                    controllers.add("\(event.entity ?? "")|\(event.keyPath ?? "")", event, at: index)
                }
                if event.name == "miss" && event.error != "no cache" {
                    sectionCaches.add(event.object ?? "", event, at: index)
                }
                if event.purpose == "objects" && event.batchSize > 0 && event.results >= thresholds.largeFetch {
                    sectionReads.add("\(event.entity ?? "")|\(event.keyPath ?? "")", event, at: index)
                }
            case .resultsController where event.statements >= thresholds.changeStorm:
                changeStorms.add("\(event.entity ?? "")|\(event.keyPath ?? "")", event, at: index)
            case .prefetchUse where event.loaded > 0 && event.used == 0:
                prefetches.add("\(event.callSite ?? "")|\(event.entity ?? "")|\(event.keyPath ?? "")", event, at: index)
            case .save:
                saves.add(event.callSite ?? "", event, at: index)
                if event.savedBytes >= thresholds.largeSaveBytes { largeSaves.add(event.callSite ?? "", event, at: index) }
            default:
                break
            }
        }

        /// The findings of the events added so far, most costly first; `source` says whether they came from a Core
        /// Data log (whose plans and rows are read differently).
        public func findings(source: TraceFile.Source) -> [Finding] {
            let a = analyzers
            var found = Analyzers.foldingObjectFaults(into: a.faultStorms(storms.items)) + a.smallBatches(batches.items)
                + a.scans(statements.items, plans: plans, fromLog: source == .coreDataLog)
                + a.repeatedFetches(fetches.items) + a.unusedPrefetches(prefetches.items) + a.largeFetches(large.items) + a.smallSaves(saves.items)
                + a.growingContexts(growth)
                + a.optionalInequalities(inequalities.items) + a.missingRows(missing.items) + a.largeSaves(largeSaves.items)
                + a.redundantIndexes(indexes)
                + a.controllersWithoutBatchSize(controllers.items) + a.changeStorms(changeStorms.items) + a.rebuiltSectionCaches(sectionCaches.items)
                + a.sectionsReadFromObjects(sectionReads.items)
            // A fetch repeated (or run in a loop) whose objects were registered already is one problem, not two: the
            // repeated fetch's fix covers the lookup.
            let repeated = Set(found.filter { $0.kind == .repeatedFetch || $0.kind == .fetchInLoop }.map { "\($0.callSite ?? "")|\($0.entity ?? "")" })
            found += a.avoidableFetches(avoidable.items).filter { !repeated.contains("\($0.callSite ?? "")|\($0.entity ?? "")") }
            found.removeAll { finding in
                guard let site = finding.callSite else { return false }
                let file = site.split(separator: ":").first.map(String.init) ?? site
                return a.allowedCallSites.contains(site) || a.allowedCallSites.contains(file)
            }
            for i in found.indices where Analyzers.isFaultlineCode(found[i].callSite) {
                found[i].faultlineSite = found[i].callSite
                found[i].callSite = nil
            }
            return Analyzers.attributingTime(found, durations: durations)
        }
    }

    /// Each event's time to one finding only: findings taken costliest first, each keeps the time of the events it
    /// explains that no costlier finding explains (a repeated fetch that is also a scan is not counted twice), then
    /// ranked by that time. So the findings' costs add up to the time they explain together, and with the time no
    /// finding explains, to the trace's total (`explainedTime`). A finding that names no events keeps its own cost
    /// only when it explains time of no event (a context's growth is measured in objects, not seconds).
    static func attributingTime(_ findings: [Finding], durations: [Double]) -> [Finding] {
        // Each event once, in trace order: the same sums, to the last bit, on every run (a set's order is not).
        let events = findings.map { uniqueAscending($0.events) }
        let whole = events.map { $0.reduce(0.0) { $0 + ($1 < durations.count ? durations[$1] : 0) } }
        let order = findings.indices.sorted { a, b in
            whole[a] != whole[b] ? whole[a] > whole[b] : findings[a].count != findings[b].count ? findings[a].count > findings[b].count : a < b
        }
        let rankedEvents = order.map { events[$0] }
        var ranked = order.map { findings[$0] }
        var claimed = Set<Int>()
        for i in ranked.indices {
            guard !ranked[i].events.isEmpty else { ranked[i].cost = 0; continue }
            var own = 0.0, shared = 0.0
            for index in rankedEvents[i] where index < durations.count {
                if claimed.insert(index).inserted { own += durations[index] } else { shared += durations[index] }
            }
            ranked[i].cost = own
            ranked[i].sharedCost = shared
        }
        return ranked.enumerated().sorted { a, b in
            a.element.cost != b.element.cost ? a.element.cost > b.element.cost : a.offset < b.offset
        }.map(\.element)
    }

    /// `events` without repeats, ascending (they usually come ascending already: then no sort).
    static func uniqueAscending(_ events: [Int]) -> [Int] {
        var ascending = true
        for i in events.indices.dropFirst() where events[i] < events[i - 1] { ascending = false; break }
        let sorted = ascending ? events : events.sorted()
        var result: [Int] = []
        result.reserveCapacity(sorted.count)
        for event in sorted where event != result.last { result.append(event) }
        return result
    }

    /// Where a log's finding happens in the app: a Core Data log names no code (said once per report, not per fix).
    public static let callSiteHint = "(The log names no code: Instruments' Core Data template shows each fetch's and fault's call stack, and running the same code on Faultline's engine with FAULTLINE_TRACE=trace.jsonl gives the call site of every finding.)"

    /// Events of one problem: counts, cost, the first few lines, the segments they ran in.
    fileprivate struct Group {
        var count = 0
        var cost = 0.0
        var fullScanSteps = 0
        var vmSteps = 0
        var rows = 0
        var savedObjects = 0
        var lines: [Int] = []
        var members: [Int] = []
        var segments: [String] = []
        var sample: TraceEvent
        var firstTime = Double.infinity, lastTime = 0.0
        /// Hashes of the distinct predicates (fetch groups).
        var predicates = Set<Int>()
        /// Objects loaded (prefetch groups); the most results of one fetch (fetch groups).
        var loaded = 0
        var largest = 0
        /// Controller groups: the most object changes of one round, and why their caches missed.
        var mostChanges = 0
        var reasons: Set<String> = []
        /// Statement groups: the fetch that ran the first statement, and the fetches and faults that ran them all.
        var fetch: TraceEvent?
        var owners: [Int] = []

        mutating func add(_ event: TraceEvent, at index: Int) {
            count += 1
            cost += event.duration
            fullScanSteps += event.fullScanSteps
            vmSteps += event.vmSteps
            rows += event.rows
            savedObjects += event.savedObjects
            if lines.count < 5 { lines.append(event.line) }
            members.append(index)
            firstTime = min(firstTime, event.time)
            lastTime = max(lastTime, event.time)
            if segments.last != event.segment && !event.segment.isEmpty && !segments.contains(event.segment) { segments.append(event.segment) }
            if event.kind == .fetch {
                predicates.insert(event.predicate?.hashValue ?? 0)
                largest = max(largest, event.results)
            } else if event.kind == .resultsController {
                largest = max(largest, event.results)
                mostChanges = max(mostChanges, event.statements)
                if let reason = event.error { reasons.insert(reason) }
            }
            loaded += event.loaded
        }

        func finding(_ kind: Finding.Kind, evidence: String, fix: String, cost: Double? = nil, events: [Int]? = nil) -> Finding {
            Finding(kind: kind, segment: segments.first ?? "", segments: segments, callSite: sample.callSite, evidence: evidence, fix: fix,
                    cost: cost ?? self.cost, count: count, lines: lines, times: firstTime <= lastTime ? firstTime...lastTime : nil, events: events ?? members)
        }
    }

    /// Groups by key, in the order their first events came.
    fileprivate struct Groups {
        var positions: [String: Int] = [:]
        var items: [Group] = []

        @discardableResult
        mutating func add(_ key: String, _ event: TraceEvent, at index: Int) -> (position: Int, isNew: Bool) {
            if let position = positions[key] {
                items[position].add(event, at: index)
                return (position, false)
            }
            positions[key] = items.count
            var group = Group(sample: event)
            group.add(event, at: index)
            items.append(group)
            return (items.count - 1, true)
        }
    }

    /// A call site inside the engine: a fetch the engine ran for a fault (a batch of a batched fetch result), not
    /// one the program asked for.
    fileprivate static func isEngineCallSite(_ site: String?) -> Bool { site?.hasPrefix("Faultline/") ?? false }

    /// Faultline's own modules, whose code is never the program's: the engine, the benchmark scenarios (a
    /// `faultline bench --trace` trace), the data, report and command-line modules.
    static let faultlineModules: Set<Substring> = ["Faultline", "FaultlineBench", "FaultlineData", "FaultlineReport", "faultline"]

    /// A call site (`Module/File.swift:42`) in one of Faultline's own modules.
    public static func isFaultlineCode(_ site: String?) -> Bool {
        guard let site, let slash = site.firstIndex(of: "/") else { return false }
        return faultlineModules.contains(site[..<slash])
    }

    /// N+1: one call site fulfilling many faults of one entity (or one relationship) from SQLite, one at a time.
    fileprivate func faultStorms(_ groups: [Group]) -> [Finding] {
        groups.compactMap { g in
            guard g.count >= thresholds.nPlusOne else { return nil }
            let e = g.sample
            let entity = e.objectEntity ?? "?"
            if e.faultKind == "relationship", let relationship = e.relationship, e.countOnly {
                return g.finding(.countThroughFaults,
                                 evidence: "\(entity).\(relationship): \(g.count) relationship faults fired only to count the members",
                                 fix: "keep a denormalized counter attribute on \(entity), updated in willSave (as Moody's numberOfMoods), or count in SQL with one fetch: context.count(for:) on the destination with a predicate on the inverse")
            }
            if e.faultKind == "relationship", let relationship = e.relationship {
                return g.finding(.relationshipFaultStorm,
                                 evidence: "\(entity).\(relationship): \(g.count) to-many relationship faults, each a SELECT",
                                 fix: "prefetch it with the fetch: request.relationshipKeyPathsForPrefetching = [\"\(relationship)\"] (one statement for all of them)")
            }
            if let via = e.via, !via.contains(" or "), let dot = via.firstIndex(of: ".") {
                // Inferred, and said so: a log does not say which relationship fired a fault; the model's only to-one
                // from the entity fetched before the faults to theirs is the likely one — or, with no model, the
                // column the fetch before them read that is named after their table.
                let source = via[..<dot], relationship = via[via.index(after: dot)...]
                let why = e.viaFromLog
                    ? "inferred from the log, no model given: the fetch of Z\(source.uppercased()) read Z\(relationship.uppercased()) just before them"
                    : "the \(source) fetch came before them, and it is \(source)'s only to-one to \(entity)"
                var finding = g.finding(.nPlusOne,
                                        evidence: "\(entity): \(g.count) faults fulfilled one at a time from SQLite (N+1), likely through \(via) (\(why))",
                                        fix: "prefetch it with the \(source) fetch: request.relationshipKeyPathsForPrefetching = [\"\(relationship)\"] — one statement instead of \(g.count)")
                finding.inferredRelationship = via
                return finding
            }
            let leads = e.via.map { "the relationship that leads to \(entity) (\($0))" } ?? "the relationship that leads to \(entity)"
            return g.finding(.nPlusOne,
                             evidence: "\(entity): \(g.count) faults fulfilled one at a time from SQLite (N+1)",
                             fix: "prefetch \(leads) (request.relationshipKeyPathsForPrefetching), or batch-fault the objects first with context.fulfillFaults(for:) — one statement instead of \(g.count)")
        }
    }

    /// A to-many relationship fault reads only its members' keys, as Core Data's does: a loop that reads the members
    /// then faults each of them too. Those N+1 faults from the same call site are the same problem, with the same
    /// fix (prefetching the relationship), so they join the relationship's finding.
    static func foldingObjectFaults(into findings: [Finding]) -> [Finding] {
        var result = findings
        for (i, storm) in findings.enumerated() where storm.kind == .relationshipFaultStorm || storm.kind == .countThroughFaults {
            guard storm.kind == .relationshipFaultStorm, let site = storm.callSite,
                  let j = result.firstIndex(where: { $0.kind == .nPlusOne && $0.callSite == site }) else { continue }
            let objects = result[j]
            result[i].evidence += ", then \(objects.count) faults of \(objects.entity ?? "their") objects one at a time"
            result[i].count += objects.count
            result[i].cost += objects.cost
            result[i].events += objects.events
            result[i].lines = Array((result[i].lines + objects.lines).sorted().prefix(5))
            if let a = result[i].times, let b = objects.times { result[i].times = min(a.lowerBound, b.lowerBound)...max(a.upperBound, b.upperBound) }
            result[j].count = 0
        }
        return result.filter { $0.count > 0 }
    }

    /// Batched fetch results whose batches are so small that reading them takes a statement every few rows.
    fileprivate func smallBatches(_ groups: [Group]) -> [Finding] {
        groups.compactMap { g in
            guard g.count >= thresholds.nPlusOne else { return nil }
            let size = g.sample.batch ?? 0
            return g.finding(.batchSizeTooSmall,
                             evidence: "\(g.sample.objectEntity ?? "?"): \(g.count) batches of \(size) object\(size == 1 ? "" : "s") each read with a statement of their own",
                             fix: "raise request.fetchBatchSize to about twice the rows shown at once (20 for a table view of 10 rows): \(g.count * size) objects would take \(max(1, g.count * size / 20)) statement\(g.count * size / 20 > 1 ? "s" : "") instead of \(g.count)")
        }
    }

    /// Statements that examine many more rows than they return — a filtered full scan, or a walk of a whole entity
    /// through the `Z_ENT` index — or sort in a temporary B-tree, with the fetch that ran them.
    fileprivate func scans(_ groups: [Group], plans: [String: [String]], fromLog: Bool) -> [Finding] {
        var findings: [Finding] = []
        for g in groups {
            let statementSQL = g.sample.sql ?? ""
            guard let plan = plans[statementSQL] else { continue }
            let verdict = PlanVerdict(plan: plan, sql: statementSQL)
            // The fetch that ran the statement: the first fetch event after it (a fetch is written when it ends).
            let fetch = g.fetch
            let shape = fetch.flatMap { f in f.entity.map { Finding.FetchShape(entity: $0, predicate: f.predicate, sort: f.sort) } }
            var found = g.finding(.fullScan, evidence: "", fix: "", events: g.owners)
            found.callSite = fetch?.callSite
            found.fetch = shape
            found.sql = statementSQL
            let table = Self.table(statementSQL) ?? "?"
            let runs = g.count == 1 ? "1 run" : "\(g.count) runs"
            let textOperator = Self.textOperator(predicate: fetch?.predicate, sql: statementSQL)
            if verdict.fullScan, let predicate = fetch?.predicate, Self.folds(predicate),
               (g.fullScanSteps + g.count) / max(1, g.count) >= thresholds.smallTable {
                found.kind = .foldingSearch
                found.evidence = "\(fetch?.entity ?? table): \(runs) compared text with [c] or [d] on every row (\(verdict.detail); \(g.fullScanSteps + g.count) rows examined; predicate \(predicate)): folding case and diacritics in each comparison can use no index"
                found.fix = "keep a normalized copy of the attribute (lowercased, diacritics removed: Core Data's Searchable pattern, updated in willSave), index it, and compare it with [n] (`nameNormalized BEGINSWITH[n] %@` with the search text normalized the same way) — objc.io, Core Data › Text › Searching"
                findings.append(found)
            } else if verdict.fullScan, let textOperator, fromLog || (g.fullScanSteps + g.count) / max(1, g.count) >= thresholds.smallTable {
                found.kind = .textScan
                let examined = fromLog ? "" : "; \(g.fullScanSteps + g.count) rows examined to match \(g.rows)"
                found.evidence = "\(fetch?.entity ?? table): \(runs) searched text with \(textOperator) on every row (\(verdict.detail)\(examined)\(fetch?.predicate.map { "; predicate \($0)" } ?? ""))"
                found.fix = "\(textOperator) can use no index (only a prefix can): search a normalized, indexed column with BEGINSWITH[n] — for words, keep a table of normalized tokens, indexed, and search it with BEGINSWITH (objc.io, Core Data › Text › Searching); or put an indexed clause first so that fewer rows are searched (Apple's guide, Performance › Fetch Predicates)"
                findings.append(found)
            } else if verdict.scansOrWalksEntity && !verdict.candidates.isEmpty {
                // Rows examined: a full scan counts its steps; an index walk of an entity counts none, so its VM steps
                // estimate them. A Core Data log counts nothing: its plans' filtered scans are reported as they are.
                // (SQLite counts a scan's steps from its first row to the next: one fewer than the rows of each run.)
                let examined = verdict.fullScan ? (g.fullScanSteps > 0 ? g.fullScanSteps + g.count : 0)
                    : PlanVerdict.estimatedRowsVisited(vmSteps: g.vmSteps, returned: g.rows, columns: PlanVerdict.resultColumns(statementSQL))
                let perRun = examined / max(1, g.count)
                // A count returns one row whatever it matched: its fetch's result is the count.
                let matched = statementSQL.hasPrefix("SELECT COUNT(") ? (fetch?.results ?? 0) * g.count : g.rows
                let share = examined > 0 ? Double(matched) / Double(examined) : 0
                if fromLog || (perRun >= thresholds.smallTable && share < thresholds.unselectiveShare) {
                    let index = verdict.suggestedIndex(table: table)
                    let how = verdict.fullScan ? "scanned the whole table (\(verdict.detail))" : "walked every row of the entity through its Z_ENT index (\(verdict.detail))"
                    let counts = fromLog ? "" : String(format: "; examined %@%d rows to match %d (%.1f%%)", verdict.fullScan ? "" : "about ", examined, matched, share * 100)
                    found.kind = .fullScan
                    found.evidence = "\(fetch?.entity ?? table): \(runs) \(how)\(counts)\(fetch?.predicate.map { "; \(fromLog ? "" : "predicate ")\($0)" } ?? "")"
                    found.fix = "index the predicate's attribute(s) in the model (Indexed, or a fetch index\(verdict.fullScan ? "" : " leading with them, Z_ENT after")): \(index) — `faultline explain` proves it on a scratch copy of the store, counting the rows examined before and after"
                    findings.append(found)
                }
            }
            if verdict.sortsInTemporaryBTree, fromLog || g.rows / max(1, g.count) >= thresholds.sortedRows {
                let order = Self.orderColumns(statementSQL)
                let columns = verdict.candidates.equality + verdict.candidates.range.prefix(1)
                let compound = columns + order.filter { !columns.contains($0) }
                if let scan = findings.last, scan.sql == statementSQL, scan.kind == .fullScan, !compound.isEmpty, !order.isEmpty {
                    // The scan and its sort are one problem with one fix. Equality columns then the sort's serve both;
                    // after a range, rows come in the range column's order, so the index serves the filter only.
                    findings[findings.count - 1].evidence += ", and sorted its rows in a temporary B-tree"
                    if verdict.candidates.range.isEmpty {
                        findings[findings.count - 1].fix = "index the predicate's attribute(s), then the sort's, in one fetch index: "
                            + "CREATE INDEX \(table)_\(compound.joined(separator: "_"))_INDEX ON \(table) (\(compound.joined(separator: ", "))) — it serves the filter and the order; `faultline explain` proves it on a scratch copy of the store"
                    } else {
                        findings[findings.count - 1].fix += " (the sort stays: rows a range matches come in the range column's order, not the sort's)"
                    }
                    continue
                }
                found.kind = .tempBTree
                found.evidence = "\(fetch?.entity ?? table): \(runs) sorted their rows in a temporary B-tree\(fetch.map { $0.sort.isEmpty ? "" : " (sort \($0.sort.joined(separator: ", ")))" } ?? "")"
                found.fix = compound.isEmpty ? "a compound index on the predicate's columns followed by the sort's" :
                    "a compound index (\(compound.joined(separator: ", "))) — the predicate's columns, then the sort's — lets SQLite read rows in order: CREATE INDEX \(table)_\(compound.joined(separator: "_"))_INDEX ON \(table) (\(compound.joined(separator: ", ")))"
                findings.append(found)
            }
        }
        return findings
    }

    /// The same fetch (entity, predicate, sort) run many times from one call site; or fetches of one shape whose
    /// constants differ — a fetch in a loop that one `IN` fetch would replace.
    fileprivate func repeatedFetches(_ groups: [Group]) -> [Finding] {
        groups.compactMap { g in
            guard g.count >= thresholds.repeatedFetch else { return nil }
            let e = g.sample
            let distinct = g.predicates.count
            if distinct >= thresholds.repeatedFetch, let predicate = e.predicate {
                let shape = StatementFingerprint.ofPredicate(predicate)
                // Only equality can be asked for a list of values at once; many different ranges or searches are
                // different questions.
                guard Self.comparesByEquality(shape) else { return nil }
                let repeats = g.count > distinct ? String(format: ", each about %.1f times", Double(g.count) / Double(distinct)) : ""
                return g.finding(.fetchInLoop,
                                 evidence: "\(e.entity ?? "?"): \(g.count) fetches of one shape with \(distinct) different constants\(repeats) (predicate \(shape))",
                                 fix: "fetch them all at once — one request whose predicate takes the list (`key IN %@`, or `SELF IN %@` for objects) — and look each up in a dictionary built from the result: one statement instead of \(g.count)")
            }
            return g.finding(.repeatedFetch,
                             evidence: "\(e.entity ?? "?"): the same fetch ran \(g.count) times\(distinct > 1 ? " (\(distinct) different constants)" : "")\(e.predicate.map { " (predicate \(distinct > 1 ? StatementFingerprint.ofPredicate($0) : $0))" } ?? "")",
                             fix: "fetch once and keep the result, or look the objects up among the registered ones (context.registeredObject(for:)) before fetching")
        }
    }

    /// A predicate with a case- or diacritic-insensitive comparison (`[c]`, `[d]`, `[cd]`).
    static func folds(_ predicate: String) -> Bool {
        predicate.range(of: #"\[[cdn]*[cd][cdn]*\]"#, options: .regularExpression) != nil
    }

    /// A predicate shape made of `==` and `IN` comparisons only.
    static func comparesByEquality(_ shape: String) -> Bool {
        let others = ["<", ">", "!=", " BETWEEN ", "BEGINSWITH", "ENDSWITH", "CONTAINS", " LIKE", " MATCHES", "SUBQUERY", " ANY ", " ALL ", " NONE "]
        return (shape.contains("==") || shape.contains(" IN ")) && !others.contains { shape.uppercased().contains($0) }
    }

    /// Fetches whose objects were all registered in the context already: a lookup would have done (no SQL).
    fileprivate func avoidableFetches(_ groups: [Group]) -> [Finding] {
        groups.compactMap { g in
            guard g.count >= thresholds.avoidableFetch else { return nil }
            return g.finding(.avoidableFetch,
                             evidence: "\(g.sample.entity ?? "?"): \(g.count) fetches returned only objects the context had registered already",
                             fix: "look among the registered objects first (context.registeredObject(for:), or a scan of registeredObjects — Core Data's find-or-fetch) and fetch only on a miss")
        }
    }

    /// Prefetches none of whose objects were used before their context reset or went away.
    fileprivate func unusedPrefetches(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            let e = g.sample
            let loaded = g.loaded
            return g.finding(.unusedPrefetch,
                             evidence: "\(e.entity ?? "?").\(e.keyPath ?? "?"): \(g.count == 1 ? "a prefetch" : "\(g.count) prefetches") loaded \(loaded) objects and none was used",
                             fix: "take \"\(e.keyPath ?? "")\" out of relationshipKeyPathsForPrefetching: it costs a statement and memory for nothing",
                             cost: 0, events: [])
        }
    }

    /// Fetches that return many objects with no batch size.
    fileprivate func largeFetches(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            let largest = g.largest
            return g.finding(.largeFetchWithoutBatchSize,
                             evidence: "\(g.sample.entity ?? "?"): \(g.count == 1 ? "a fetch" : "\(g.count) fetches") returned up to \(largest) objects with no batch size, every row read and cached",
                             fix: "set request.fetchBatchSize to about twice the rows on screen (20 for a table view): IDs first, rows as they are shown")
        }
    }

    /// Many saves of a few objects each from one call site (a save in a loop).
    /// The text operator a scanning statement searched with — from its fetch's predicate, or, in a Core Data log,
    /// from its SQL — when it is one that can use no index: CONTAINS, ENDSWITH, LIKE with a leading wildcard, MATCHES.
    static func textOperator(predicate: String?, sql: String) -> String? {
        if let predicate {
            let upper = predicate.uppercased()
            for word in ["CONTAINS", "ENDSWITH", "MATCHES", "LIKE"] where upper.range(of: "\\b\(word)\\b", options: .regularExpression) != nil {
                // LIKE with a prefix and no leading wildcard can use an index's range; the others cannot.
                if word == "LIKE", let like = upper.range(of: #"LIKE(\[[A-Z]*\])?\s*["']"#, options: .regularExpression),
                   let first = upper[like.upperBound...].first, first != "*" && first != "?" { continue }
                return word
            }
            return nil
        }
        let upper = sql.uppercased()
        if upper.contains("NSCOREDATAMATCHES") || upper.contains(" REGEXP ") || upper.contains("FL_MATCHES(") { return "MATCHES" }
        if upper.contains("NSCOREDATALIKE") || upper.contains(" LIKE ") { return "LIKE" }
        if upper.contains("INSTR(") || upper.contains("NSCOREDATASTRINGSEARCH") { return "CONTAINS" }
        return nil
    }

    /// `!=` against an optional attribute with nil left unsaid: the store and memory answer differently.
    fileprivate func optionalInequalities(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            let e = g.sample
            let paths = e.optionalNotEqual.joined(separator: ", ")
            let first = e.optionalNotEqual.first ?? "value"
            return g.finding(.optionalNotEqual,
                             evidence: "\(e.entity ?? "?"): \(g.count) fetch\(g.count == 1 ? "" : "es") compared the optional \(paths) with != (predicate \(e.predicate ?? "?")): the store leaves out the objects where it is nil (SQL's NULL) — in Core Data, NSPredicate's evaluation in memory (pending changes, filtered arrays) keeps them, so the same predicate gives two answers (Faultline leaves them out in both)",
                             fix: "say what nil should do: `\(first) != %@ OR \(first) == nil` to keep them, `\(first) != %@ AND \(first) != nil` to leave them out everywhere — or make \(first) non-optional with a default value (Apple's guide, Performance: prefer mandatory attributes with a default)",
                             cost: 0, events: [])
        }
    }

    /// Object faults that found their row gone.
    fileprivate func missingRows(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            let entity = g.sample.objectEntity ?? "?"
            return g.finding(.missingRow,
                             evidence: "\(entity): \(g.count) fault\(g.count == 1 ? "" : "s") found no row — deleted by another context or process — so the object\(g.count == 1 ? " is" : "s are") inaccessible, \(g.count == 1 ? "its" : "their") values nil (Core Data raises \"could not fulfill a fault\" here)",
                             fix: "merge other contexts' saves into this one (automaticallyMergesChangesFromParent, or mergeChanges(fromContextDidSave:)) so deleted objects leave it; before using an object kept across saves, check it with existingObject(with:) or refetch it")
        }
    }

    /// Fetched results controllers that fetched many objects with no batch size: every object (and, with sections,
    /// its section value) read at launch.
    fileprivate func controllersWithoutBatchSize(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            g.finding(.controllerWithoutBatchSize,
                      evidence: "\(g.sample.entity ?? "?"): \(g.count == 1 ? "a fetched results controller" : "\(g.count) fetched results controllers") fetched up to \(g.largest) objects with no batch size\(g.sample.keyPath.map { ", sectioned by \($0)" } ?? ""): every object read before the first screen",
                      fix: "set the request's fetchBatchSize to about 1.3 to 2 times the rows on screen (objc.io; 20 for a table view): the controller then reads the rows' keys and the batches shown", cost: g.cost, events: [])
        }
    }

    /// Rounds of a fetched results controller's changes with many object changes (a merged import animated row by row).
    fileprivate func changeStorms(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            let most = g.mostChanges
            return g.finding(.changeStorm,
                             evidence: "\(g.sample.entity ?? "?"): \(g.count) round\(g.count == 1 ? "" : "s") of a fetched results controller's changes processed up to \(most) object changes each (\(String(format: "%.1f", g.cost * 1000)) ms in all, the delegate's calls included): every change evaluated, placed and reported one by one",
                             fix: "for a large import, reload the list after the merge (controllerDidChangeContent only, or performFetch and a full reload) instead of animating each change, or merge the import in smaller saves", cost: g.cost, events: [])
        }
    }

    /// Section caches missed for another reason than their absence: a request that changes, or rows that changed.
    fileprivate func rebuiltSectionCaches(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            let reasons = g.reasons.sorted().joined(separator: "; ")
            return g.finding(.sectionCacheRebuilt,
                             evidence: "\(g.sample.entity ?? "?"): the section cache '\(g.sample.object ?? "")' was rebuilt \(g.count == 1 ? "once" : "\(g.count) times") (\(reasons)): its sections were computed again, and written",
                             fix: "give each request its own cacheName and keep it unchanged (a predicate built from the date changes every launch), call deleteCache(withName:) before changing a request; if the rows change at every launch the cache costs a write and saves nothing: drop the cacheName", cost: g.cost, events: [])
        }
    }

    /// Batched controllers whose sections were computed from every object (the store could not count them).
    fileprivate func sectionsReadFromObjects(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            g.finding(.sectionsFromObjects,
                      evidence: "\(g.sample.entity ?? "?"): a fetched results controller with a batch size read all \(g.largest) objects to compute its sections by \(g.sample.keyPath ?? "?"): every batch fetched before the first screen",
                      fix: "sort first by the section key path and make it a string attribute (the store then counts the sections in one GROUP BY), or give the controller a cacheName so that later launches read the sections from the cache", cost: g.cost, events: [])
        }
    }

    /// `12.3 MB`.
    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

    /// Saves that wrote more than `largeSaveBytes`.
    fileprivate func largeSaves(_ groups: [Group]) -> [Finding] {
        groups.map { g in
            g.finding(.largeSave,
                             evidence: "\(g.count) save\(g.count == 1 ? "" : "s") each wrote more than \(Self.megabytes(thresholds.largeSaveBytes)) of values (the first \(Self.megabytes(g.sample.savedBytes))): large commits to the write-ahead log are slow, and the changes are held in memory until they are saved",
                             fix: "save in parts (every few thousand objects, then reset or refresh the context), and keep large binary values in external storage (allowsExternalBinaryDataStorage) or in files")
        }
    }

    /// A single-column index whose column leads a compound index on the same table: every search it serves, the
    /// compound serves, and it costs every insert and update and space in the file.
    fileprivate func redundantIndexes(_ indexes: [(name: String, table: String, columns: [String], event: TraceEvent, index: Int)]) -> [Finding] {
        var found: [Finding] = []
        for single in indexes where single.columns.count == 1 {
            guard let covering = indexes.first(where: { $0.table == single.table && $0.columns.count > 1 && $0.columns[0] == single.columns[0] }) else { continue }
            let e = single.event
            found.append(StoreIndexReview.indexFinding(single.name, Finding(kind: .redundantIndex, segment: e.segment, segments: e.segment.isEmpty ? [] : [e.segment], callSite: nil,
                                 evidence: "\(single.table): the index \(single.name) (\(single.columns[0])) is redundant: \(covering.name) (\(covering.columns.joined(separator: ", "))) begins with the same column and serves every search it serves",
                                 fix: "remove the single-attribute index from the model (the attribute's Indexed box, or its fetch index) and keep the compound one: each index costs every insert and update, and space in the file (`faultline bench index-costs` measures it)",
                                 cost: 0, count: 1, lines: [e.line], events: [])))
        }
        return found
    }

    fileprivate func smallSaves(_ groups: [Group]) -> [Finding] {
        groups.compactMap { g in
            guard g.count >= thresholds.smallSaves, Double(g.savedObjects) / Double(g.count) <= 2 else { return nil }
            return g.finding(.manySmallSaves,
                             evidence: "\(g.count) saves of \(g.savedObjects) objects in all (one transaction each)",
                             fix: "save once after the loop (or every few hundred changes): fewer, larger saves cost far less in total")
        }
    }

    static func orderColumns(_ sql: String) -> [String] {
        guard let order = sql.range(of: " ORDER BY ") else { return [] }
        var found: [String] = []
        var rest = sql[order.upperBound...]
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
