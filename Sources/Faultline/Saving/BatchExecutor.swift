import Foundation

/// Batch requests in SQL (see `BatchUpdateRequest`, `BatchDeleteRequest`, `BatchInsertRequest`): each in one
/// exclusive transaction, under the coordinator's lock. The rows they change leave the row cache, so a fault fired
/// afterwards reads the new state; objects already materialized keep their values until the IDs are merged.
extension PersistentStoreCoordinator {
    /// Sets `assignments` (column, value) on the rows `filter` selects; returns how many, and which when `keys`
    /// (without them, one UPDATE with the selection as a subquery, and the table's cached rows are all dropped).
    func batchUpdate(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter?,
                     assignments: [(column: String, value: Slot)], keys: Bool, updating names: [String] = [],
                     history: HistoryAttribution = HistoryAttribution()) throws -> (count: Int, rows: [(EntityDescription, Int64)]) {
        try withLock {
            let store = try requireStore()
            // History records each row: its keys are needed then.
            let wantsKeys = keys || store.tracksHistory
            // Rows Core Data's derived-attribute triggers recomputed leave the row cache, whatever the outcome.
            defer { dropRowsDerivedValuesChanged(store) }
            store.purpose(.batch)
            defer { store.purpose(.other) }
            let sets = assignments.map { "\($0.column) = ?" } + ["Z_OPT = Z_OPT + 1"]
            if !wantsKeys {
                let (conditions, bounds) = entityConditions(store.plan(for: entity), includesSubentities: includesSubentities)
                var unordered = filter
                unordered?.orderBy = []
                let selection = SelectQuery(select: "SELECT t0.Z_PK FROM \(entity.table.name) t0", conditions: conditions, bounds: bounds,
                                            keys: nil, filter: unordered, limit: 0, offset: 0)
                let count = try store.inTransaction { () throws -> Int in
                    let statement = try store.statement("UPDATE \(entity.table.name) SET \(sets.joined(separator: ", ")) WHERE Z_PK IN (\(selection.sql))")
                    var index: Int32 = 1
                    for (_, value) in assignments { statement.bind(value, at: index); index += 1 }
                    for value in selection.bindings { statement.bind(value, at: index); index += 1 }
                    try run(statement, store)
                    return store.connection.changes
                }
                rowCacheRemoveTable(entity.root)
                return (count, [])
            }
            let rows = try store.inTransaction { () throws -> [(EntityDescription, Int64)] in
                let rows = try selectKeys(store, entity: entity, includesSubentities: includesSubentities, filter: filter)
                guard !rows.isEmpty else { return rows }
                let statement = try store.statement("UPDATE \(entity.table.name) SET \(sets.joined(separator: ", ")) WHERE \(KeyList.condition("Z_PK", count: rows.count))")
                var index: Int32 = 1
                for (_, value) in assignments { statement.bind(value, at: index); index += 1 }
                for value in KeyList.bindings(rows.map(\.1)) { statement.bind(value, at: index); index += 1 }
                try run(statement, store)
                try store.writeBatchHistory(author: history.author, contextName: history.contextName, rows: rows, type: 1, updated: names)
                return rows
            }
            forget(rows, root: entity.root)
            return (rows.count, rows)
        }
    }

    /// Deletes the rows `filter` selects, applying delete rules in SQL; returns every row deleted (cascades included).
    func batchDelete(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter?,
                     history: HistoryAttribution = HistoryAttribution()) throws -> [(EntityDescription, Int64)] {
        try withLock {
            let store = try requireStore()
            // Rows Core Data's derived-attribute triggers recomputed leave the row cache, whatever the outcome.
            defer { dropRowsDerivedValuesChanged(store) }
            store.purpose(.batch)
            defer { store.purpose(.other) }
            let deleted = try store.inTransaction { () throws -> [(EntityDescription, Int64)] in
                var pending = try selectKeys(store, entity: entity, includesSubentities: includesSubentities, filter: filter)
                var deleted: [(EntityDescription, Int64)] = []
                var seen: Set<ObjectKey> = []
                // Cascades first, breadth first, so that Deny is checked on every row before anything is deleted.
                while !pending.isEmpty {
                    let fresh = pending.filter { seen.insert(ObjectKey(table: Int32($0.0.root.entityNumber), key: $0.1)).inserted }
                    deleted += fresh
                    pending = []
                    for (rowEntity, keys) in Self.grouped(fresh) {
                        for relationship in rowEntity.relationships where !relationship.isTransient {
                            let destinations = try destinationKeys(store, relationship, of: keys)
                            switch relationship.deleteRule {
                            case .deny where !destinations.isEmpty:
                                throw BatchRequestError.denied(entity: rowEntity.name, relationship: relationship.name, destinations: destinations.count)
                            case .cascade where !destinations.isEmpty:
                                pending += try rowEntities(store, relationship.destination, keys: destinations)
                            default:
                                break
                            }
                        }
                    }
                }
                for (rowEntity, keys) in Self.grouped(deleted) {
                    for relationship in rowEntity.relationships where !relationship.isTransient {
                        if let join = relationship.joinTable, join.isDestinationTable {
                            try run(store, "UPDATE \(join.name) SET \(join.sourceColumn) = NULL WHERE \(KeyList.condition(join.sourceColumn, count: keys.count))", KeyList.bindings(keys))
                        } else if let join = relationship.joinTable {
                            try run(store, "DELETE FROM \(join.name) WHERE \(KeyList.condition(join.sourceColumn, count: keys.count))", KeyList.bindings(keys))
                        } else if relationship.deleteRule == .nullify, let inverse = relationship.inverse, !inverse.isToMany,
                                  let column = inverse.columnName {
                            // Foreign keys on the destinations' rows that point at deleted rows.
                            var sets = ["\(column) = NULL"]
                            if let entityColumn = inverse.entityColumnName { sets.append("\(entityColumn) = NULL") }
                            sets.append("Z_OPT = Z_OPT + 1")
                            try run(store, "UPDATE \(inverse.entity.table.name) SET \(sets.joined(separator: ", ")) WHERE \(KeyList.condition(column, count: keys.count))", KeyList.bindings(keys))
                        }
                    }
                    try run(store, "DELETE FROM \(rowEntity.table.name) WHERE \(KeyList.condition("Z_PK", count: keys.count))", KeyList.bindings(keys))
                }
                try store.writeBatchHistory(author: history.author, contextName: history.contextName, rows: deleted, type: 2)
                return deleted
            }
            for (rowEntity, keys) in Self.grouped(deleted) { forget(keys.map { (rowEntity, $0) }, root: rowEntity.root) }
            return deleted
        }
    }

    /// Inserts rows of stored attribute values (already converted, in `columns` order); returns their keys.
    func batchInsert(entity: EntityDescription, columns: [String], rows: [[Slot]],
                     uniquenessColumns: [[String]], history: HistoryAttribution = HistoryAttribution()) throws -> [Int64] {
        try withLock {
            let store = try requireStore()
            // Rows Core Data's derived-attribute triggers recomputed leave the row cache, whatever the outcome.
            defer { dropRowsDerivedValuesChanged(store) }
            guard !rows.isEmpty else { return [] }
            store.purpose(.batch)
            defer { store.purpose(.other) }
            let keys = try store.allocatePrimaryKeys(root: entity.root, count: rows.count)
            store.purpose(.batch)
            let external = ExternalBinaryStorage(storePath: store.filePath)
            let externalColumns = Set(entity.attributes.filter(\.storesExternally).compactMap { $0.columnName.flatMap(columns.firstIndex(of:)) })
            var written: [URL] = []
            do {
                try store.inTransaction {
                    let names = ["Z_PK", "Z_ENT", "Z_OPT"] + columns
                    let statement = try store.statement("INSERT INTO \(entity.table.name) (\(names.joined(separator: ", "))) VALUES (\(names.map { _ in "?" }.joined(separator: ", ")))")
                    for (key, row) in zip(keys, rows) {
                        statement.bind(key, at: 1)
                        statement.bind(Int64(entity.entityNumber), at: 2)
                        statement.bind(Int64(1), at: 3)
                        for (i, value) in row.enumerated() {
                            if externalColumns.contains(i) {
                                let (stored, file) = try external.write(value)
                                if let file { written.append(file) }
                                statement.bind(stored, at: Int32(i + 4))
                            } else {
                                statement.bind(value, at: Int32(i + 4))
                            }
                        }
                        do {
                            try run(statement, store)
                        } catch StoreError.sqlite(_, let error) where error.isUniqueConstraint {
                            let failed = error.failedUniqueColumns
                            let columns = uniquenessColumns.first { Set($0) == Set(failed) } ?? failed
                            throw BatchRequestError.uniquenessViolation(entity: entity.name, columns: columns)
                        }
                    }
                    for constraint in uniquenessColumns {
                        let list = constraint.joined(separator: ", ")
                        let check = try store.statement("SELECT 1 FROM \(entity.table.name) GROUP BY \(list) HAVING COUNT(*) > 1 LIMIT 1")
                        defer { check.reset() }
                        if try wrapped(store, { try check.step() }) {
                            throw BatchRequestError.uniquenessViolation(entity: entity.name, columns: constraint)
                        }
                    }
                    try store.writeBatchHistory(author: history.author, contextName: history.contextName, rows: keys.map { (entity, $0) }, type: 0)
                }
            } catch {
                for file in written { try? FileManager.default.removeItem(at: file) }
                throw error
            }
            return Array(keys)
        }
    }

    // MARK: Helpers (under the lock)

    /// The rows `filter` selects (the fetch layer's key query, unordered, labelled as the batch's).
    private func selectKeys(_ store: SQLiteStore, entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter?) throws -> [(EntityDescription, Int64)] {
        var unordered = filter
        unordered?.orderBy = []
        return try wrapped(store) { try fetchKeys(entity: entity, includesSubentities: includesSubentities, filter: unordered, limit: 0, offset: 0, purpose: .batch) }
    }

    /// The keys a relationship of the rows `keys` leads to.
    private func destinationKeys(_ store: SQLiteStore, _ relationship: RelationshipDescription, of keys: [Int64]) throws -> [Int64] {
        let sql: String, table: String, column: String
        if let join = relationship.joinTable {
            (table, column) = (join.name, join.destinationColumn)
            sql = "SELECT \(column) FROM \(table) WHERE \(KeyList.condition(join.sourceColumn, count: keys.count))"
        } else if !relationship.isToMany, let name = relationship.columnName {
            (table, column) = (relationship.entity.table.name, name)
            sql = "SELECT \(column) FROM \(table) WHERE \(KeyList.condition("Z_PK", count: keys.count)) AND \(column) IS NOT NULL"
        } else if let inverse = relationship.inverse, let name = inverse.columnName {
            (table, column) = (relationship.destination.table.name, "Z_PK")
            sql = "SELECT Z_PK FROM \(table) WHERE \(KeyList.condition(name, count: keys.count))"
        } else {
            return []
        }
        return try query(store, sql, KeyList.bindings(keys), table: table, column: column)
    }

    /// The row entity of each key of `entity`'s table.
    private func rowEntities(_ store: SQLiteStore, _ entity: EntityDescription, keys: [Int64]) throws -> [(EntityDescription, Int64)] {
        let statement = try store.statement("SELECT Z_ENT, Z_PK FROM \(entity.table.name) WHERE \(KeyList.condition("Z_PK", count: keys.count))")
        defer { statement.reset() }
        for (i, value) in KeyList.bindings(keys).enumerated() { statement.bind(value, at: Int32(i + 1)) }
        var rows: [(EntityDescription, Int64)] = []
        let table = entity.table.name
        while try wrapped(store, { try statement.step() }) {
            let key = try statement.storedKey(at: 1, table: table, column: "Z_PK", row: StoredKeyRule.row(statement.int64(at: 1)))
            rows.append((try statement.storedEntity(at: 0, of: entity.root, table: table, column: "Z_ENT", row: StoredKeyRule.row(key)), key))
        }
        return rows
    }

    /// The keys `sql` selects from `table`'s `column`, each checked as a key.
    private func query(_ store: SQLiteStore, _ sql: String, _ bindings: [Slot], table: String, column: String) throws -> [Int64] {
        let statement = try store.statement(sql)
        defer { statement.reset() }
        for (i, value) in bindings.enumerated() { statement.bind(value, at: Int32(i + 1)) }
        var keys: [Int64] = []
        while try wrapped(store, { try statement.step() }) {
            keys.append(try statement.storedKey(at: 0, table: table, column: column, row: "row \(keys.count + 1) of the relationship's keys"))
        }
        return keys
    }

    private func run(_ store: SQLiteStore, _ sql: String, _ bindings: [Slot]) throws {
        let statement = try store.statement(sql)
        for (i, value) in bindings.enumerated() { statement.bind(value, at: Int32(i + 1)) }
        try run(statement, store)
    }

    private func run(_ statement: Statement, _ store: SQLiteStore) throws {
        defer { statement.reset() }
        try wrapped(store) { while try statement.step() {} }
    }

    private func wrapped<T>(_ store: SQLiteStore, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SQLiteError { throw StoreError.sqlite(path: store.path, error: error) }
    }

    /// Drops the rows' snapshots from the row cache: a fault fired later reads what the batch wrote.
    private func forget(_ rows: [(EntityDescription, Int64)], root: EntityDescription) {
        for (_, key) in rows { rowCacheRemove(ObjectKey(table: Int32(root.entityNumber), key: key)) }
    }

    static func grouped(_ rows: [(EntityDescription, Int64)]) -> [(EntityDescription, [Int64])] {
        var order: [ObjectIdentifier] = []
        var groups: [ObjectIdentifier: (EntityDescription, [Int64])] = [:]
        for (entity, key) in rows {
            let id = ObjectIdentifier(entity)
            if groups[id] == nil { order.append(id) }
            groups[id, default: (entity, [])].1.append(key)
        }
        return order.map { groups[$0]! }
    }
}

/// Who a batch request's history transaction names (the context's `transactionAuthor` and `name`).
struct HistoryAttribution {
    var author: String?
    var contextName: String?
}
