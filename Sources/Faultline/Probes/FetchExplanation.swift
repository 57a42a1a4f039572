import CSQLite
import Foundation

/// What SQLite plans for a fetch request, and the index that would make it cheaper — proven by creating the
/// index on a scratch copy of the store and planning again (as SQLite's `.expert` does).
public struct FetchExplanation: Sendable {
    /// An index that improves the plan.
    public struct IndexSuggestion: Sendable {
        public let table: String
        public let columns: [String]
        public let reason: String
        /// `CREATE INDEX …` to add it.
        public let sql: String
        /// The plan with the index in place (on the scratch copy).
        public let planWithIndex: QueryPlan
    }

    public let sql: String
    /// Bound values, as SQL literals.
    public let bindings: [String]
    public let plan: QueryPlan
    public let suggestions: [IndexSuggestion]
}

extension ManagedObjectContext {
    /// The SELECT that fetching `request`'s objects runs, with its bound values as SQL literals, without running
    /// it: the predicate and sort compiled to SQL.
    public func selectStatement<T: ManagedObject>(for request: FetchRequest<T>) throws -> (sql: String, bindings: [String]) {
        let (entity, filter) = try compiledFilter(for: request)
        let query = try coordinator.selectQuery(entity: entity, includesSubentities: request.includesSubentities, filter: filter)
        return (query.sql, query.bindings.map(ConnectionProbe.literal))
    }

    /// Explains the SELECT `request` would run: its SQL, its query plan with verdicts, and suggested indexes
    /// checked on a scratch copy of the store.
    public func explain<T: ManagedObject>(_ request: FetchRequest<T>) throws -> FetchExplanation {
        let (entity, filter) = try compiledFilter(for: request)
        return try coordinator.explain(entity: entity, includesSubentities: request.includesSubentities, filter: filter,
                                       candidates: IndexCandidates(entity: entity, predicate: request.predicate, sort: request.sortDescriptors))
    }

    /// The request's entity and its predicate and sort compiled to SQL (uncached: these are for tools).
    private func compiledFilter<T: ManagedObject>(for request: FetchRequest<T>) throws -> (EntityDescription, FetchFilter) {
        guard let entity = model.entity(named: request.entityName) else { throw FetchError.unknownEntity(request.entityName) }
        do {
            return (entity, try FetchFilter.compile(predicate: request.predicate, sortDescriptors: request.sortDescriptors,
                                                    entity: entity, storeIdentifier: coordinator.storeIdentifier))
        } catch let error as ObjectPredicateError {
            throw FetchError.predicate(error)
        }
    }
}

/// Columns an index could serve for a fetch: equality columns first, then one range column, then the order.
struct IndexCandidates {
    var equality: [String] = []
    var range: [String] = []
    var order: [String] = []

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
    init(sql: String) {
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

    /// Explains a SELECT given as text (one read from Core Data's SQL debug output): SQLite's plan for it on this store
    /// (its `?` unbound), and the index on the columns it filters and sorts by that removes a full scan or a temporary
    /// B-tree, tried on a scratch copy. The store is not changed.
    public func explain(sql: String) throws -> FetchExplanation {
        try withLock {
            let store = try requireStore()
            let current: QueryPlan
            do { current = try Self.queryPlan(sql, bindings: [], on: store.connection.handle) } catch let error as SQLiteError {
                throw StoreError.sqlite(path: store.path, error: error)
            }
            var suggestions: [FetchExplanation.IndexSuggestion] = []
            let table = sql.range(of: " FROM ").map { String(sql[$0.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }) }
            if let table, !table.isEmpty, !current.fullScans.isEmpty || current.sortsInTemporaryBTree {
                suggestions = try suggest(sql: sql, bindings: [], current: current, table: table, candidates: IndexCandidates(sql: sql), store: store)
            }
            return FetchExplanation(sql: sql, bindings: [], plan: current, suggestions: suggestions)
        }
    }

    func explain(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter, candidates: IndexCandidates) throws -> FetchExplanation {
        try withLock {
            let store = try requireStore()
            let query = try selectQuery(entity: entity, includesSubentities: includesSubentities, filter: filter)
            let (sql, bindings) = (query.sql, query.bindings)
            let current = try Self.queryPlan(sql, bindings: bindings, on: store.connection.handle)
            var suggestions: [FetchExplanation.IndexSuggestion] = []
            if !current.fullScans.isEmpty || current.sortsInTemporaryBTree {
                suggestions = try suggest(sql: sql, bindings: bindings, current: current, table: entity.table.name, candidates: candidates, store: store)
            }
            return FetchExplanation(sql: sql, bindings: bindings.map(ConnectionProbe.literal), plan: current, suggestions: suggestions)
        }
    }

    /// Tries each candidate index on a scratch copy of the store; keeps the first that removes a full scan or a
    /// temporary B-tree.
    private func suggest(sql: String, bindings: [Slot], current: QueryPlan, table: String, candidates: IndexCandidates,
                         store: SQLiteStore) throws -> [FetchExplanation.IndexSuggestion] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-explain-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: scratch + suffix) } }
        let copy = try store.connection.prepare("VACUUM INTO ?")
        copy.bind(scratch, at: 1)
        do { try copy.execute() } catch let error as SQLiteError { throw StoreError.sqlite(path: store.path, error: error) }
        var db: OpaquePointer?
        guard sqlite3_open_v2(scratch, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            return []
        }
        defer { sqlite3_close_v2(db) }
        SQLFunctions.register(on: db)
        for columns in candidates.proposals {
            let name = ([table] + columns).joined(separator: "_")
            let create = "CREATE INDEX \(name) ON \(table) (\(columns.joined(separator: ", ")))"
            guard sqlite3_exec(db, create, nil, nil, nil) == SQLITE_OK else { continue }
            let improved = try Self.queryPlan(sql, bindings: bindings, on: db)
            sqlite3_exec(db, "DROP INDEX \(name)", nil, nil, nil)
            let removesScan = improved.fullScans.count < current.fullScans.count
            let removesSort = current.sortsInTemporaryBTree && !improved.sortsInTemporaryBTree
            guard removesScan || removesSort else { continue }
            let reason = [removesScan ? "no full scan of \(table)" : nil, removesSort ? "no temporary B-tree for ORDER BY" : nil]
                .compactMap { $0 }.joined(separator: ", ")
            return [FetchExplanation.IndexSuggestion(table: table, columns: columns, reason: reason, sql: create, planWithIndex: improved)]
        }
        return []
    }

    static func queryPlan(_ sql: String, bindings: [Slot], on db: OpaquePointer) throws -> QueryPlan {
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN " + sql, -1, &handle, nil)
        guard rc == SQLITE_OK, let handle else { throw SQLiteError(connection: db, code: rc, sql: sql) }
        defer { sqlite3_finalize(handle) }
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
        var nodes: [QueryPlanEvent.Node] = []
        while sqlite3_step(handle) == SQLITE_ROW {
            nodes.append(QueryPlanEvent.Node(id: Int(sqlite3_column_int(handle, 0)), parent: Int(sqlite3_column_int(handle, 1)),
                                             detail: sqlite3_column_text(handle, 3).map { String(cString: $0) } ?? ""))
        }
        return QueryPlan(nodes: nodes)
    }
}
