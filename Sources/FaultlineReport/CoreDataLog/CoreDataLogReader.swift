import Faultline
import Foundation

/// Turns Core Data's SQL debug output (docs/coredata-log.md) into the events a Faultline trace holds, so that the
/// same analyzers read both: statements, fetches, count requests, faults, relationship faults, saves, store
/// openings and level-4 query plans. A log has no call sites, no contexts and no clock: an event's time is its
/// statement times added up.
struct CoreDataLogReader {
    /// Every event, in log order.
    private(set) var events: [TraceEvent] = []
    /// Core Data lines read (`sql:`, `annotation:`, `details:`, … after any prefix).
    private(set) var coreDataLines = 0
    /// Core Data lines no shape matched, and the first of them.
    private(set) var notUnderstood = 0
    private(set) var firstNotUnderstood: Int?
    /// Lines that are not Core Data's (other output of the app).
    private(set) var otherLines = 0

    /// Table → entity, from the model when one is given and from annotations that name both.
    private var entities: [String: String] = [:]
    private var clock = 0.0

    private struct Pending {
        let sql: CoreDataSQL
        let line: Int
        var connectionTime: Double?
        var executionTime: Double?
        var isFetch = false
    }
    private var pending: Pending?
    /// A save read at its COMMIT (or ROLLBACK), emitted after that statement.
    private var closingSave: TraceEvent?
    /// The open transaction's statements (a save is BEGIN EXCLUSIVE … COMMIT with INSERT/UPDATE/DELETE in it).
    private var transaction: (line: Int, time: Double, inserted: [String: Int], updated: [String: Int], deleted: [String: Int])?
    /// The last fetch event, which a fault or relationship-fault annotation may turn out to own.
    private var lastFetch: TraceEvent?
    private var lastFetchStatement: TraceEvent?
    /// The main fetch a prefetch or a batch belongs to, and its SELECT (whose columns name the to-ones it read).
    private var lastMainFetch: TraceEvent?
    private var lastMainFetchSQL: CoreDataSQL?
    /// Entity names the log spells out (object URIs, level-3 lines), by their upper-cased form: how a table or
    /// column name is turned back into the model's spelling when no model is given.
    private var spelledNames: [String: String] = [:]
    /// A level-3 `fetch using NSSQLiteStatement … returned N rows` line not yet followed by its total: it becomes a
    /// fetch of its own unless a `total fetch execution time` line claims it first.
    private var statementFetch: (rows: Int, line: Int)?
    /// Inside the values a level-3 line lists over several lines (`with values: (` … `)`): those lines are skipped.
    private var inValues = false
    /// Faults whose relationship the SQL suggests (no model): the fetched table and the column it read.
    private var inferredFromLog: [(fault: TraceEvent, source: String, column: String)] = []
    /// SELECTs since the last fetch was timed (a fetch's own, then its prefetches'), and prefetched keys seen then.
    private var selectsSinceFetch: [(event: TraceEvent, sql: CoreDataSQL)] = []
    private var prefetchesSinceFetch: [String] = []
    /// True once a `Prefetching with key` line followed the latest SELECT (the prefetch is over).
    private var prefetchAnnounced = false
    /// The plan being read (level 4): its SQL and rows.
    private var plan: (sql: String, line: Int, rows: [String])?

    /// The model, when given: it names the relationship behind an N+1.
    private let model: ManagedObjectModel?

    init(model: ManagedObjectModel? = nil) {
        self.model = model
        for table in model?.tables ?? [] { entities[table.name] = table.root.name }
    }

    /// The model's to-ones of the last fetched entity (its sub-entities' too) that lead to `faulted`, as
    /// "Entity.relationship" (several joined by " or "). Without a model, `foreignKeyColumn(to:)` infers one.
    private func relationshipsLeading(to faulted: String?) -> String? {
        guard let model, let faulted, let target = model.entity(named: faulted), let fetched = lastMainFetch?.entity,
              let source = model.entity(named: fetched) else { return nil }
        let names = source.selfAndDescendants.flatMap { entity in
            entity.relationships.filter { $0.entity === entity && !$0.isToMany && !$0.isTransient && $0.destination.root === target.root }
                .map { "\(entity.name).\($0.name)" }
        }
        return names.isEmpty ? nil : names.joined(separator: " or ")
    }

    /// Without a model: the table fetched before a fault of `table` and the column it read that is named after it.
    private func foreignKeyColumn(to table: String?) -> (source: String, column: String)? {
        guard let sql = lastMainFetchSQL, let fetchedTable = sql.table, fetchedTable.count > 1,
              let table, table.count > 1, table.hasPrefix("Z") else { return nil }
        let column = String(table.dropFirst())
        guard sql.selectedColumns.contains(where: { $0 == "t0.Z" + column }) else { return nil }
        return (fetchedTable, column)
    }

    /// "Order.customer" for a fetch of ZORDER that read ZCUSTOMER, spelled as the whole log spells the entities: the
    /// source's name (else the table's, title-cased) and the faulted entity's name with a lower-case first letter
    /// (else the column's name in lower case).
    private func spelledRelationship(source: String, column: String) -> String {
        let entity = entities[source] ?? spelledNames[String(source.dropFirst())] ?? Self.titleCased(source.dropFirst())
        let relationship = spelledNames[column].map { $0.prefix(1).lowercased() + $0.dropFirst() } ?? column.lowercased()
        return "\(entity).\(relationship)"
    }

    /// Longest entity name remembered for spelling (a longer one is no model's).
    static let longestSpelledName = 1_000

    /// `ORDER` → `Order`: a table's entity when nothing in the log spells it.
    private static func titleCased(_ name: Substring) -> String { name.prefix(1).uppercased() + name.dropFirst().lowercased() }

    /// Remembers how the log spells an entity's name.
    private mutating func learnSpelling(_ entity: String?) {
        guard let entity, !entity.isEmpty, entity.utf8.count <= Self.longestSpelledName else { return }
        spelledNames[entity.uppercased()] = entity
    }

    /// Reads a whole log.
    mutating func read(_ data: Data) {
        var lineNumber = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let text = String(decoding: raw, as: UTF8.self)
            read(Substring(text), at: lineNumber)
        }
        finishPlan()
        flush()
        settleStatementFetch()
        settleFault()
        if model == nil { spellEntities() }
    }

    /// Without a model, the tables the log reads are named by the entities it spells out (`ZCUSTOMER` is `Customer`
    /// when a fault's URI says so), wherever in the log that spelling came.
    private mutating func spellEntities() {
        for (fault, source, column) in inferredFromLog { fault.via = spelledRelationship(source: source, column: column) }
        guard !spelledNames.isEmpty else { return }
        func spelled(_ name: String) -> String {
            guard entities[name] == nil, name.hasPrefix("Z"), let spelling = spelledNames[String(name.dropFirst())] else { return name }
            return spelling
        }
        for event in events {
            if let entity = event.entity { event.entity = spelled(entity) }
            if event.kind == .save {
                event.inserted = Dictionary(event.inserted.map { (spelled($0.key), $0.value) }, uniquingKeysWith: +)
                event.updated = Dictionary(event.updated.map { (spelled($0.key), $0.value) }, uniquingKeysWith: +)
                event.deleted = Dictionary(event.deleted.map { (spelled($0.key), $0.value) }, uniquingKeysWith: +)
            }
        }
    }

    private mutating func read(_ raw: Substring, at line: Int) {
        let parsed = CoreDataLogLine(raw)
        if inValues {
            // A level-3 line's values, one row a line, up to a line that is `)` (or Core Data's next line).
            guard parsed != nil else {
                let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                if trimmed == ")" || trimmed == ")." { inValues = false }
                return
            }
            inValues = false
        }
        guard let parsed else {
            if plan != nil, let row = Self.planRow(raw.trimmingCharacters(in: .whitespacesAndNewlines)) {
                plan?.rows.append(row)
                return
            }
            // The app's own output may come between a plan's rows: the plan stays open.
            if !raw.allSatisfy({ $0.isWhitespace }) { otherLines += 1 }
            return
        }
        coreDataLines += 1
        let understood: Bool
        switch parsed.category {
        case .sql: understood = sql(parsed.text, at: line)
        case .annotation: finishPlan(); understood = annotation(parsed.text, at: line)
        case .details: understood = details(parsed.text, at: line)
        case .debug, .error, .warning, .info, .cloudKit: finishPlan(); understood = true // Core Data's messages: not analysed
        }
        // Values listed over several lines (`… with values: (` then a row a line, then `)`).
        if parsed.text.hasSuffix("values: (") { inValues = true }
        if !understood {
            notUnderstood += 1
            if firstNotUnderstood == nil { firstNotUnderstood = line }
        }
    }

    // MARK: sql:

    private mutating func sql(_ text: String, at line: Int) -> Bool {
        finishPlan()
        flush()
        settleStatementFetch()
        settleFault()
        let statement = CoreDataSQL(text)
        switch statement.kind {
        case .begin:
            transaction = (line, clock, [:], [:], [:])
        case .commit, .rollback:
            if let open = transaction, !(open.inserted.isEmpty && open.updated.isEmpty && open.deleted.isEmpty) {
                let save = TraceEvent(kind: .save, time: clock, line: open.line)
                save.inserted = open.inserted
                save.updated = open.updated
                save.deleted = open.deleted
                save.duration = clock - open.time
                if statement.kind == .rollback { save.error = "rolled back" }
                // After the COMMIT's own statement, whose time is the save's too.
                closingSave = save
            }
            transaction = nil
        default:
            break
        }
        pending = Pending(sql: statement, line: line)
        return !statement.text.isEmpty
    }

    /// Emits the statement read last, once its annotations are in.
    private mutating func flush() {
        guard let statement = pending else { return }
        pending = nil
        let sql = statement.sql
        let event = TraceEvent(kind: .statement, time: 0, line: statement.line)
        event.sql = sql.text
        event.duration = statement.connectionTime ?? statement.executionTime ?? 0
        clock += event.duration
        event.time = clock
        switch sql.kind {
        case .select where sql.isBookkeeping: event.purpose = "schema"
        case .select: event.purpose = sql.isObjectFault ? "fault" : sql.usesIntarray ? "batch" : "fetch"
        case .insert, .update, .delete:
            event.purpose = sql.isBookkeeping ? "keys" : "save"
            if !sql.isBookkeeping, let table = sql.table, transaction != nil {
                let entity = entityName(table)
                switch sql.kind {
                case .insert: transaction?.inserted[entity, default: 0] += 1
                case .update: transaction?.updated[entity, default: 0] += 1
                default: transaction?.deleted[entity, default: 0] += 1
                }
            }
        case .pragma: event.purpose = "schema"
        case .begin, .commit, .rollback: event.purpose = "save"
        default: event.purpose = "other"
        }
        events.append(event)
        if let save = closingSave {
            closingSave = nil
            events.append(save)
        }
        if sql.kind == .select {
            lastFetchStatement = event
            if event.purpose != "schema" {
                selectsSinceFetch.append((event, sql))
                prefetchAnnounced = false
            }
        }
    }

    /// A fault's one-row read by key that no fetch annotation claimed (it had only its `sql execution time`, or
    /// nothing): it is the fault, and its statement's time is the fault's. Without this it would be taken for part
    /// of the next fetch.
    private mutating func settleFault() {
        guard selectsSinceFetch.count == 1, let only = selectsSinceFetch.first, only.sql.isObjectFault, only.event === events.last else { return }
        _ = claimFault(only.event, sql: only.sql)
    }

    /// Turns the fault SELECT just read into its fault event (the statement stays, as a trace's does).
    private mutating func claimFault(_ statement: TraceEvent, sql: CoreDataSQL) -> TraceEvent {
        selectsSinceFetch.removeAll { $0.event === statement }
        statementFetch = nil
        let fault = TraceEvent(kind: .cacheMiss, time: clock, line: statement.line)
        fault.faultKind = "object"
        fault.entity = sql.table.map(entityName)
        fault.duration = statement.duration
        fault.rows = statement.rows
        setVia(fault, faulted: fault.entity, table: sql.table)
        events.append(fault)
        lastFetch = nil
        return fault
    }

    private func entityName(_ table: String) -> String { entities[table] ?? table }

    private mutating func setVia(_ fault: TraceEvent, faulted: String?, table: String?) {
        if model != nil {
            fault.via = relationshipsLeading(to: faulted)
        } else if let found = foreignKeyColumn(to: table ?? faulted.map { "Z" + $0.uppercased() }) {
            // Spelled once the whole log is read (a later line may spell the entities).
            fault.viaFromLog = true
            inferredFromLog.append((fault, found.source, found.column))
        }
    }

    // MARK: annotation:

    private mutating func annotation(_ text: String, at line: Int) -> Bool {
        if let seconds = Self.seconds(after: "sql connection fetch time:", in: text) {
            pending?.connectionTime = seconds
            pending?.isFetch = true
            return true
        }
        if let seconds = Self.seconds(after: "sql execution time:", in: text) {
            pending?.executionTime = seconds
            return true
        }
        if text.hasPrefix("total fetch execution time:") {
            guard let seconds = Self.seconds(after: "total fetch execution time:", in: text),
                  let rows = Self.integer(after: " for ", in: text) else { return false }
            fetchFinished(seconds: seconds, rows: rows, count: false, line: line)
            return true
        }
        if text.hasPrefix("total count request execution time:") {
            guard let seconds = Self.seconds(after: "total count request execution time:", in: text),
                  let rows = Self.integer(after: "count of ", in: text) else { return false }
            fetchFinished(seconds: seconds, rows: rows, count: true, line: line)
            return true
        }
        if text.hasPrefix("fault fulfilled from database for") {
            guard let object = Self.objectURI(in: text) else { return false }
            flush()
            learnSpelling(Self.entity(inURI: object))
            if let fault = events.last, fault.kind == .cacheMiss, fault.faultKind == "object", fault.object == nil {
                // The one-row SELECT just read was this fault.
                fault.object = object
                fault.entity = nil
                return true
            }
            if let only = selectsSinceFetch.last, only.sql.isObjectFault, only.event === events.last {
                // Its SELECT, timed by `sql execution time` alone: the fault's time is that statement's.
                let fault = claimFault(only.event, sql: only.sql)
                fault.object = object
                fault.entity = nil
                return true
            }
            let fault = TraceEvent(kind: .cacheMiss, time: clock, line: line)
            fault.faultKind = "object"
            fault.object = object
            learnSpelling(fault.objectEntity)
            setVia(fault, faulted: fault.objectEntity, table: nil)
            lastFetch = nil
            events.append(fault)
            return true
        }
        if text.hasPrefix("to-many relationship fault") {
            guard let object = Self.objectURI(in: text), let name = Self.quoted(in: text, quote: "\""),
                  let rows = Self.integer(after: "Got ", in: text) else { return false }
            flush()
            let fault = TraceEvent(kind: .cacheMiss, time: clock, line: line)
            fault.faultKind = "relationship"
            fault.object = object
            fault.relationship = name
            fault.rows = rows
            if let fetch = lastFetch, fetch === events.last, let statement = lastFetchStatement {
                events.removeLast()
                statement.purpose = "relationshipFault"
                fault.duration = fetch.duration
                fault.line = statement.line
            } else if let statement = lastFetchStatement, statement === events.last {
                selectsSinceFetch.removeAll { $0.event === statement }
                statement.purpose = "relationshipFault"
                fault.duration = statement.duration
                fault.line = statement.line
            }
            lastFetch = nil
            events.append(fault)
            return true
        }
        if text.hasPrefix("Prefetching with key") {
            guard let key = Self.quoted(in: text, quote: "'") else { return false }
            flush()
            prefetchAnnounced = true
            if !selectsSinceFetch.isEmpty {
                prefetchesSinceFetch.append(key)
            } else if let main = lastMainFetch, !main.prefetch.contains(key) {
                main.prefetch.append(key)
            }
            return true
        }
        if text.hasPrefix("Bound intarray") { return true }
        if text.hasPrefix("Connecting to sqlite database file at") {
            flush()
            let connect = TraceEvent(kind: .connect, time: clock, line: line)
            connect.name = Self.quoted(in: text, quote: "\"")
            events.append(connect)
            return true
        }
        if text.hasPrefix("fetch using NSSQLiteStatement") {
            return statementLine(text, at: line)
        }
        // Read and deliberately not analysed: Core Data's count-request echo, an object ID that a save made
        // permanent, migration and post-save maintenance lines, Faultline's own extra annotations.
        if text.hasPrefix("count request") || text.hasPrefix("fetch on entity") || text.hasPrefix("save execution time")
            || text.hasPrefix("batch ") || text.hasPrefix("merge of") || text.hasPrefix("refresh of") || text.hasPrefix("invalidated ") || text.hasPrefix("fetched results controller")
            || text.hasPrefix("Changing objectID") || text.hasPrefix("(migration)") || text.hasPrefix("PostSaveMaintenance") {
            return true
        }
        return false
    }

    /// Level 3 (iOS 6 era): `fetch using NSSQLiteStatement <0x…> on entity 'E' with sql text '…' returned N rows with
    /// values: (…)`. It names the entity of the SQL's table, and is a fetch with its rows: of the `sql:` line just
    /// read when that is its statement, else of a statement only this line shows. A `total fetch execution time`
    /// that follows times it; without one it is a fetch all the same. The values are skipped, on this line and on
    /// the lines they continue over.
    private mutating func statementLine(_ text: String, at line: Int) -> Bool {
        guard let entityStart = text.range(of: "on entity '"), let sqlStart = text.range(of: "with sql text '") else { return false }
        let entity = text[entityStart.upperBound...].prefix { $0 != "'" }
        // The SQL ends at the first `' returned N row`: values (after it) may hold anything.
        var search = sqlStart.upperBound
        var found: (end: String.Index, rows: Int)?
        while found == nil, let quote = text.range(of: "' returned ", range: search..<text.endIndex) {
            let digits = text[quote.upperBound...].prefix { $0.isNumber }
            if !digits.isEmpty, text[digits.endIndex...].hasPrefix(" row"), let rows = Int(digits), rows <= Int(Limits.traceCount) {
                found = (quote.lowerBound, rows)
            }
            search = quote.upperBound
        }
        guard let found else { return false }
        settleStatementFetch()
        let statement = CoreDataSQL(String(text[sqlStart.upperBound..<found.end]))
        guard statement.kind == .select else { return false }
        if !entity.isEmpty, let table = statement.table, entities[table] == nil { entities[table] = String(entity) }
        learnSpelling(entity.isEmpty ? nil : String(entity))
        let pendingText = pending?.sql.text
        let last = selectsSinceFetch.last
        if pendingText != statement.text && !(pending == nil && last?.sql.text == statement.text && last?.event === events.last) {
            // Its statement was not logged as `sql:` (or another came between): this line stands for it.
            flush()
            settleFault()
            pending = Pending(sql: statement, line: line)
        }
        flush()
        statementFetch = (found.rows, line)
        return true
    }

    /// A level-3 fetch no total claimed: it is a fetch of its rows, timed by its statement.
    private mutating func settleStatementFetch() {
        guard let open = statementFetch else { return }
        statementFetch = nil
        let seconds = selectsSinceFetch.reduce(0) { $0 + $1.event.duration }
        fetchFinished(seconds: seconds, rows: open.rows, count: false, line: open.line)
    }

    /// A fetch's total time: it ran the SELECTs since the last fetch, the first of them its own (prefetches follow).
    private mutating func fetchFinished(seconds: Double, rows: Int, count: Bool, line: Int) {
        flush()
        statementFetch = nil
        let selects = selectsSinceFetch
        let prefetched = prefetchesSinceFetch
        if !count, let last = selects.last, last.sql.isPrefetch, !prefetchAnnounced, selects.contains(where: { !$0.sql.usesIntarray }) {
            // The prefetch's own fetch (its total comes before `Prefetching with key`): its rows are the prefetched
            // objects, not the fetch's, which goes on until its own total.
            last.event.rows = rows
            return
        }
        selectsSinceFetch = []
        prefetchesSinceFetch = []
        let first = selects.first { !$0.sql.usesIntarray } ?? selects.first
        let main = first?.event
        let sql = first?.sql
        let fetch = TraceEvent(kind: .fetch, time: clock, line: main?.line ?? line)
        fetch.duration = seconds
        fetch.statements = selects.count
        fetch.sqlTime = selects.reduce(0) { $0 + $1.event.duration }
        fetch.results = rows
        fetch.rows = rows
        fetch.prefetch = prefetched
        main?.rows = rows
        if let sql, sql.isObjectFault, !count, selects.count == 1 {
            // A one-row read by key is a fault (Core Data's lines for it name the object only at some levels).
            let fault = TraceEvent(kind: .cacheMiss, time: clock, line: fetch.line)
            fault.faultKind = "object"
            fault.entity = sql.table.map(entityName)
            fault.duration = seconds
            fault.rows = rows
            setVia(fault, faulted: fault.entity, table: sql.table)
            events.append(fault)
            lastFetch = nil
            return
        }
        if let sql {
            fetch.entity = sql.table.map(entityName)
            fetch.predicate = sql.filter
            fetch.sort = sql.sortColumns
            if sql.usesIntarray, let previous = lastMainFetch {
                // A batch of a batched fetch: part of the fetch that read the keys, its statements too.
                for select in selects { select.event.owner = previous }
                previous.statements += selects.count
                previous.duration += seconds
                lastFetch = nil
                return
            }
            fetch.resultType = count || sql.isCount ? "count" : sql.selectsKeysOnly ? "objectIDs" : "objects"
            // Keys first, then rows in batches: a batched fetch.
            if sql.selectsKeysOnly { fetch.batchSize = 1 }
        } else {
            fetch.resultType = count ? "count" : "objects"
        }
        events.append(fetch)
        lastFetch = fetch
        lastFetchStatement = main
        if sql?.isObjectFault != true {
            lastMainFetch = fetch
            lastMainFetchSQL = sql
        }
    }

    // MARK: details:

    private mutating func details(_ text: String, at line: Int) -> Bool {
        if text.hasPrefix("SQLite bind[") { return true }
        let body = text.hasPrefix("SQLite: ") ? String(text.dropFirst("SQLite: ".count)) : text
        if body.hasPrefix("EXPLAIN QUERY PLAN ") {
            finishPlan()
            plan = (CoreDataSQL(String(body.dropFirst("EXPLAIN QUERY PLAN ".count))).text, line, [])
            return true
        }
        if plan != nil, let row = Self.planRow(body) {
            plan?.rows.append(row)
            return true
        }
        finishPlan()
        return text.hasPrefix("row values") || text.contains("with values")
    }

    private mutating func finishPlan() {
        guard let finished = plan else { return }
        plan = nil
        let event = TraceEvent(kind: .queryPlan, time: clock, line: finished.line)
        event.sql = finished.sql
        event.planDetails = finished.rows
        events.append(event)
    }

    /// A plan row's detail: `SCAN t0`, from the tree form (`|--SCAN t0`, `` `--SEARCH … ``), the old numbered form
    /// (`0 0 0 SCAN TABLE ZX AS t0`) or Faultline's (`3|0|0|SCAN t0`); nil for anything else.
    static func planRow(_ text: String) -> String? {
        var rest = Substring(text).drop { " |`-".contains($0) }
        if rest.first?.isNumber == true {
            // "0 0 0 SCAN …" or "3|0|0|SCAN …": up to three numbers first.
            var numbers = 0
            while numbers < 3, rest.first?.isNumber == true {
                rest = rest.drop { $0.isNumber }.drop { $0 == " " || $0 == "|" }
                numbers += 1
            }
        }
        let detail = String(rest).trimmingCharacters(in: .whitespaces)
        let starts = ["SCAN", "SEARCH", "USE TEMP B-TREE", "CO-ROUTINE", "MATERIALIZE", "COMPOUND", "MULTI-INDEX", "CORRELATED",
                      "SCALAR SUBQUERY", "LIST SUBQUERY", "EXECUTE", "LEFT-MOST SUBQUERY", "UNION", "USING", "BLOOM FILTER"]
        guard starts.contains(where: { detail.hasPrefix($0) }) else { return nil }
        // SQLite before 3.24 wrote "SCAN TABLE ZX AS t0" and "SEARCH TABLE ZX AS t0 USING …".
        return detail.replacingOccurrences(of: "SCAN TABLE ", with: "SCAN ").replacingOccurrences(of: "SEARCH TABLE ", with: "SEARCH ")
    }

    // MARK: Fields

    /// The number of seconds after `prefix` (`0.0012s`).
    static func seconds(after prefix: String, in text: String) -> Double? {
        guard let range = text.range(of: prefix) else { return nil }
        let number = text[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "." || $0 == "e" || $0 == "-" }
        guard let value = Double(number), value.isFinite, value >= 0, value <= Limits.traceSeconds else { return nil }
        return value
    }

    /// The whole number after `prefix`.
    static func integer(after prefix: String, in text: String) -> Int? {
        guard let range = text.range(of: prefix, options: .backwards) else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        guard let value = Int(digits), value <= Int(Limits.traceCount) else { return nil }
        return value
    }

    /// The object URI in a fault line (`0x… <x-coredata://UUID/Entity/p12>`).
    static func objectURI(in text: String) -> String? {
        guard let start = text.range(of: "x-coredata://") else { return nil }
        let uri = text[start.lowerBound...].prefix { $0 != ">" && $0 != " " && $0 != ")" }
        return uri.split(separator: "/").count >= 3 ? String(uri) : nil
    }

    /// The entity an object URI names (`x-coredata://UUID/Entity/p12` → Entity).
    static func entity(inURI uri: String) -> String? {
        let parts = uri.split(separator: "/")
        return parts.count >= 2 ? String(parts[parts.count - 2]) : nil
    }

    /// The first text between two `quote`s.
    static func quoted(in text: String, quote: Character) -> String? {
        guard let open = text.firstIndex(of: quote) else { return nil }
        let rest = text[text.index(after: open)...]
        guard let close = rest.firstIndex(of: quote) else { return nil }
        return String(rest[..<close])
    }
}
