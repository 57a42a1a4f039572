import CSQLite
import Foundation

/// What SQLite plans for a fetch request, whether the plan reads many more rows than the fetch needs, and the index
/// that would make it cheaper — proven by creating the index on a scratch copy of the store and running the
/// statement there with and without it, counting the rows it examines (as SQLite's `.expert` proposes indexes, but
/// measured rather than planned).
public struct FetchExplanation: Sendable {
    /// Rows a table must have before index advice matters: below it a scan costs microseconds.
    public static let smallTableRows = 1_000
    /// A scan that returns at least this share of the rows it examines is the right plan: an index would read
    /// nearly as many rows, each through a B-tree lookup in the table's key order instead of one pass over its pages.
    public static let unselectiveShare = 0.2
    /// Rows a sort must order before a temporary B-tree is worth an index.
    public static let sortedRows = 100

    /// An index that improves the plan.
    public struct IndexSuggestion: Sendable {
        /// The table to index.
        public let table: String
        /// The index's columns, in order.
        public let columns: [String]
        /// Why it helps (the scan or sort it removes).
        public let reason: String
        /// `CREATE INDEX …` to add it.
        public let sql: String
        /// The plan with the index in place (on the scratch copy).
        public let planWithIndex: QueryPlan
        /// The statement run with the index in place (on the scratch copy).
        public let measurement: StatementMeasurement?
    }

    /// The SELECT the request runs.
    public let sql: String
    /// Bound values, as SQL literals.
    public let bindings: [String]
    /// Its query plan.
    public let plan: QueryPlan
    /// Rows in the fetched table, when the plan scans, walks an entity or sorts.
    public let tableRows: Int?
    /// The statement run on the scratch copy as it is, when the plan scans, walks an entity or sorts.
    public let measurement: StatementMeasurement?
    /// The judgement in a sentence: why the plan is fine, or what it costs.
    public let verdict: String
    /// Indexes that would improve the plan, each proven on the scratch copy.
    public let suggestions: [IndexSuggestion]
}

extension ManagedObjectContext {
    /// The SELECT that fetching `request`'s objects runs, with its bound values as SQL literals, without running
    /// it: the predicate and sort compiled to SQL.
    public func selectStatement<T>(for request: FetchRequest<T>) throws -> (sql: String, bindings: [String]) {
        let (entity, filter) = try compiledFilter(for: request)
        let query = try coordinator.selectQuery(entity: entity, includesSubentities: request.includesSubentities, filter: filter)
        return (query.sql, query.bindings.map(ConnectionProbe.literal))
    }

    /// Explains the SELECT `request` would run: its SQL, its query plan with verdicts, and suggested indexes
    /// checked on a scratch copy of the store.
    public func explain<T>(_ request: FetchRequest<T>) throws -> FetchExplanation {
        let (entity, filter) = try compiledFilter(for: request)
        return try coordinator.explain(entity: entity, includesSubentities: request.includesSubentities, filter: filter,
                                       candidates: IndexCandidates(entity: entity, predicate: request.predicate, sort: request.sortDescriptors))
    }

    /// The request's entity and its predicate and sort compiled to SQL (uncached: these are for tools).
    private func compiledFilter<T>(for request: FetchRequest<T>) throws -> (EntityDescription, FetchFilter) {
        guard let entity = model.entity(named: request.entityName) else { throw FetchError.unknownEntity(request.entityName, known: model.entities.map(\.name)) }
        do {
            return (entity, try FetchFilter.compile(predicate: request.predicate, sortDescriptors: request.sortDescriptors,
                                                    entity: entity, storeIdentifier: coordinator.storeIdentifier))
        } catch let error as ObjectPredicateError {
            throw FetchError.predicate(error)
        }
    }
}

/// Columns an index could serve for a fetch: equality columns first, then one range column, then the order.
public struct IndexCandidates: Sendable {
    /// Columns compared with `=` or `IN`.
    public var equality: [String] = []
    /// Columns compared with `<`, `>`, `BETWEEN`, `BEGINSWITH` or `LIKE`.
    public var range: [String] = []
    /// The sort's plain columns.
    public var order: [String] = []

    /// True when no column could serve.
    public var isEmpty: Bool { equality.isEmpty && range.isEmpty }

    init(entity: EntityDescription, predicate: ObjectPredicate?, sort: [FetchSortDescriptor]) {
        func column(_ e: ObjectExpression) -> String? {
            guard case .keyPath(nil, let components) = e, components.count == 1, let property = entity.property(named: components[0]) else { return nil }
            return property.columnName
        }
        func visit(_ p: ObjectPredicate) {
            switch p {
            case .and(let items): items.forEach(visit)
            case .comparison(let c) where c.quantifier == .direct && !c.options.folds:
                guard let name = column(c.left) ?? column(c.right) else { return }
                switch c.op {
                case .equal, .in: if !equality.contains(name) { equality.append(name) }
                case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual, .between, .beginsWith:
                    if !range.contains(name) { range.append(name) }
                default: break
                }
            default: break
            }
        }
        predicate.map(visit)
        order = sort.filter { $0.comparison == .binary }.compactMap { column(.key($0.keyPath)) }
    }

    /// The candidates of a SELECT's text (a statement read from a log): `t0.<COLUMN> = ?` or `IN` conditions are
    /// equalities; `<`, `>`, `BETWEEN` and `LIKE` ranges; the ORDER BY's plain columns the order.
    public init(sql: String) {
        let whereStart = sql.range(of: " WHERE ")?.upperBound
        let orderStart = sql.range(of: " ORDER BY ")
        if let whereStart {
            var rest = sql[whereStart..<(orderStart?.lowerBound ?? sql.endIndex)]
            while let reference = rest.range(of: "t0.") {
                let name = String(rest[reference.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                let after = rest[reference.upperBound...].dropFirst(name.count).drop { $0 == " " }
                rest = rest[reference.upperBound...]
                guard name.hasPrefix("Z"), name != "Z_PK", name != "Z_ENT", !name.isEmpty else { continue }
                if after.hasPrefix("= ") || after.hasPrefix("=?") || after.hasPrefix("IN ") || after.hasPrefix("IN(") {
                    if !equality.contains(name) { equality.append(name) }
                } else if after.hasPrefix("<") || after.hasPrefix(">") || after.hasPrefix("BETWEEN") || after.hasPrefix("LIKE") {
                    if !range.contains(name) { range.append(name) }
                }
            }
        }
        if let orderStart {
            for term in sql[orderStart.upperBound...].split(separator: ",") {
                let words = term.split(separator: " ")
                guard let first = words.first, first.hasPrefix("t0."), words.count == 1 || (words.count == 2 && (words[1] == "ASC" || words[1] == "DESC")) else { break }
                order.append(String(first.dropFirst(3)))
            }
        }
    }

    /// Index column lists to try, most useful first.
    var proposals: [[String]] {
        var result: [[String]] = []
        func add(_ columns: [String]) {
            var seen: Set<String> = []
            let unique = columns.filter { seen.insert($0).inserted }
            if !unique.isEmpty && !result.contains(unique) { result.append(unique) }
        }
        add(equality + order)
        add(equality + range.prefix(1))
        add(equality)
        add(Array(range.prefix(1)))
        add(order)
        return result
    }
}

extension PersistentStoreCoordinator {
    /// The full-row SELECT of a fetch of `entity` with `filter` (no limit).
    func selectQuery(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter) throws -> SelectQuery {
        try withLock {
            let store = try requireStore()
            let (conditions, bounds) = entityConditions(store.plan(for: entity), includesSubentities: includesSubentities)
            return SelectQuery(select: store.tablePlan(for: entity).selectSQL, conditions: conditions, bounds: bounds,
                               keys: nil, filter: filter, limit: 0, offset: 0)
        }
    }

    /// SQLite's plan for a SELECT given as text (its `?` unbound), on this store.
    public func queryPlan(sql: String) throws -> QueryPlan {
        try withLock {
            let store = try requireStore()
            do { return try Self.queryPlan(sql, bindings: [], on: store.connection.handle) } catch let error as SQLiteError {
                throw StoreError.sqlite(path: store.path, error: error)
            }
        }
    }

    /// Explains a SELECT given as text (one read from Core Data's SQL debug output): SQLite's plan for it on this store
    /// (its `?` unbound, so only the table's size is judged, not what the statement returns), and the index on the
    /// columns it filters and sorts by that removes a full scan or a temporary B-tree, tried on a scratch copy. The
    /// store is not changed.
    public func explain(sql: String) throws -> FetchExplanation {
        try withLock {
            let store = try requireStore()
            let table = sql.range(of: " FROM ").map { String(sql[$0.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }) } ?? ""
            return try explain(sql: sql, bindings: [], table: table, candidates: IndexCandidates(sql: sql), measures: false, store: store)
        }
    }

    func explain(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter, candidates: IndexCandidates) throws -> FetchExplanation {
        try withLock {
            let store = try requireStore()
            let query = try selectQuery(entity: entity, includesSubentities: includesSubentities, filter: filter)
            return try explain(sql: query.sql, bindings: query.bindings, table: entity.table.name, candidates: candidates, measures: true, store: store)
        }
    }

    /// Plans the statement; when the plan scans, walks a whole entity or sorts, judges it by the table's size and, when
    /// `measures`, by the rows it examines against those it returns on a scratch copy; tries the candidate indexes
    /// there when it reads far more than it returns.
    private func explain(sql: String, bindings: [Slot], table: String, candidates: IndexCandidates, measures: Bool,
                         store: SQLiteStore) throws -> FetchExplanation {
        let current: QueryPlan
        do { current = try Self.queryPlan(sql, bindings: bindings, on: store.connection.handle) } catch let error as SQLiteError {
            throw StoreError.sqlite(path: store.path, error: error)
        }
        let reads = !current.fullScans.isEmpty || !current.entityWalks.isEmpty
        func done(_ verdict: String, rows: Int? = nil, measurement: StatementMeasurement? = nil, suggestions: [FetchExplanation.IndexSuggestion] = []) -> FetchExplanation {
            FetchExplanation(sql: sql, bindings: bindings.map(ConnectionProbe.literal), plan: current, tableRows: rows,
                             measurement: measurement, verdict: verdict, suggestions: suggestions)
        }
        guard reads || current.sortsInTemporaryBTree, !table.isEmpty else {
            return done("no full scan, no walk of a whole entity, no temporary B-tree.")
        }
        let rows = (try? store.connection.prepare("SELECT count(*) FROM \(table)")).flatMap { statement -> Int? in
            (try? statement.step()) == true ? Int(statement.int64(at: 0)) : nil
        } ?? 0
        if rows < FetchExplanation.smallTableRows {
            return done("\(table) has \(rows) rows, fewer than \(FetchExplanation.smallTableRows): too small for an index to matter.", rows: rows)
        }
        return try withScratchCopy(of: store) { db in
            let before = measures ? RowsExamined.measure(sql, bindings: bindings, on: db) : nil
            let what = !current.fullScans.isEmpty ? "scans all \(rows) rows of \(table)" : !current.entityWalks.isEmpty ? "walks every row of the entity through the Z_ENT index" : "reads its rows through an index"
            var scanProblem = reads && !candidates.isEmpty
            var sortProblem = current.sortsInTemporaryBTree
            var verdict = ""
            if let before {
                let share = String(format: "%.1f%%", before.share * 100)
                if reads && before.share >= FetchExplanation.unselectiveShare {
                    scanProblem = false
                    verdict = "the statement \(what) and returns \(before.returned) of the \(before.examined) rows it examines (\(share)): for that share a scan is the right plan, an index would not read fewer rows."
                } else if reads {
                    verdict = "the statement \(what): it examines \(before.examined) rows to return \(before.returned) (\(share))."
                }
                if sortProblem && before.returned < FetchExplanation.sortedRows {
                    sortProblem = false
                    verdict += (verdict.isEmpty ? "" : " ") + "It sorts \(before.returned) rows in a temporary B-tree, too few for an index to matter."
                }
            } else if reads {
                verdict = "the statement \(what)."
            }
            if current.sortsInTemporaryBTree && sortProblem { verdict += (verdict.isEmpty ? "" : " ") + "It sorts in a temporary B-tree." }
            guard scanProblem || sortProblem else {
                return done(verdict.isEmpty ? "no full scan, no walk of a whole entity, no temporary B-tree." : verdict, rows: rows, measurement: before)
            }
            let suggestion = try suggest(sql: sql, bindings: bindings, current: current, before: before, table: table, candidates: candidates,
                                         entityWalk: !current.entityWalks.isEmpty, scanProblem: scanProblem, sortProblem: sortProblem, db: db)
            return done(verdict, rows: rows, measurement: before, suggestions: suggestion.map { [$0] } ?? [])
        }
    }

    /// Runs `body` on a scratch copy of the store (`VACUUM INTO`), removed afterwards.
    private func withScratchCopy<R>(of store: SQLiteStore, _ body: (OpaquePointer) throws -> R) throws -> R {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-explain-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: scratch + suffix) } }
        let copy = try store.connection.prepare("VACUUM INTO ?")
        copy.bind(scratch, at: 1)
        do { try copy.execute() } catch let error as SQLiteError { throw StoreError.sqlite(path: store.path, error: error) }
        var db: OpaquePointer?
        guard sqlite3_open_v2(scratch, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw StoreError.sqlite(path: scratch, error: SQLiteError(code: SQLITE_CANTOPEN, message: "cannot open the scratch copy"))
        }
        defer { sqlite3_close_v2(db) }
        SQLFunctions.register(on: db)
        CoreDataSQLFunctions.register(on: db, changes: nil)
        return try body(db)
    }

    /// Tries each candidate index on the scratch copy; keeps the one that examines the fewest rows among those that
    /// at least halve the rows examined (in no more time) or remove the sort.
    private func suggest(sql: String, bindings: [Slot], current: QueryPlan, before: StatementMeasurement?, table: String,
                         candidates: IndexCandidates, entityWalk: Bool, scanProblem: Bool, sortProblem: Bool,
                         db: OpaquePointer) throws -> FetchExplanation.IndexSuggestion? {
        var proposals = candidates.proposals
        if entityWalk {
            // A sub-entity's rows share the table with the rest of the hierarchy: Z_ENT beside the selecting columns
            // lets SQLite reject other entities' rows from the index alone.
            let selecting = candidates.equality + candidates.range.prefix(1)
            if !selecting.isEmpty {
                proposals.insert(selecting + ["Z_ENT"], at: 0)
                proposals.append(["Z_ENT"] + selecting)
            }
        }
        var best: (FetchExplanation.IndexSuggestion, StatementMeasurement?)?
        for columns in proposals {
            let name = ([table] + columns).joined(separator: "_")
            let create = "CREATE INDEX \(name) ON \(table) (\(columns.joined(separator: ", ")))"
            guard sqlite3_exec(db, create, nil, nil, nil) == SQLITE_OK else { continue }
            defer { sqlite3_exec(db, "DROP INDEX \(name)", nil, nil, nil) }
            let improved = try Self.queryPlan(sql, bindings: bindings, on: db)
            let after = before == nil ? nil : RowsExamined.measure(sql, bindings: bindings, on: db)
            let removesSort = sortProblem && !improved.sortsInTemporaryBTree
            let readsLess: Bool
            if let before, let after {
                readsLess = scanProblem && after.examined * 2 <= before.examined && after.seconds <= before.seconds
            } else {
                readsLess = scanProblem && improved.fullScans.count + improved.entityWalks.count < current.fullScans.count + current.entityWalks.count
            }
            guard readsLess || removesSort else { continue }
            var reasons: [String] = []
            if readsLess {
                if let before, let after {
                    reasons.append("examines \(after.examined) rows instead of \(before.examined), in \(Self.duration(after.seconds)) instead of \(Self.duration(before.seconds))")
                } else {
                    reasons.append("no full scan of \(table)")
                }
            }
            if removesSort { reasons.append("no temporary B-tree for ORDER BY") }
            let suggestion = FetchExplanation.IndexSuggestion(table: table, columns: columns, reason: reasons.joined(separator: ", "), sql: create,
                                                              planWithIndex: improved, measurement: after)
            if let (_, bestAfter) = best {
                // Fewer rows examined wins; on a tie the earlier (more useful) proposal stays: times that close are noise.
                guard let after, let bestAfter, after.examined < bestAfter.examined else { continue }
            }
            best = (suggestion, after)
            if after == nil { break }
        }
        return best?.0
    }

    static func duration(_ seconds: Double) -> String {
        seconds >= 1 ? String(format: "%.2f s", seconds) : seconds >= 1e-3 ? String(format: "%.2f ms", seconds * 1e3) : String(format: "%.0f µs", seconds * 1e6)
    }

    /// Binds `bindings` to a statement prepared on a raw handle.
    static func bind(_ bindings: [Slot], to handle: OpaquePointer) {
        for (i, value) in bindings.enumerated() {
            let index = Int32(i + 1)
            switch value {
            case .integer(let n): sqlite3_bind_int64(handle, index, n)
            case .real(let d): sqlite3_bind_double(handle, index, d)
            case .text(let s): sqlite3_bind_text(handle, index, s, -1, SQLITE_TRANSIENT_DESTRUCTOR)
            case .blob(let d): _ = d.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32(d.count), SQLITE_TRANSIENT_DESTRUCTOR) }
            default: sqlite3_bind_null(handle, index)
            }
        }
    }

    static func queryPlan(_ sql: String, bindings: [Slot], on db: OpaquePointer) throws -> QueryPlan {
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN " + sql, -1, &handle, nil)
        guard rc == SQLITE_OK, let handle else { throw SQLiteError(connection: db, code: rc, sql: sql) }
        defer { sqlite3_finalize(handle) }
        bind(bindings, to: handle)
        var nodes: [QueryPlanEvent.Node] = []
        while sqlite3_step(handle) == SQLITE_ROW {
            nodes.append(QueryPlanEvent.Node(id: Int(sqlite3_column_int(handle, 0)), parent: Int(sqlite3_column_int(handle, 1)),
                                             detail: sqlite3_column_text(handle, 3).map { String(cString: $0) } ?? ""))
        }
        return QueryPlan(nodes: nodes)
    }
}
