import CSQLite

/// The keys a store's rows hold — `Z_PK`, `Z_ENT`, `Z_OPT`, foreign keys, join-table columns — checked as SQLite hands
/// them back. Core Data writes only whole numbers from 1 up; a damaged, hand-edited or hostile file can hold any
/// value SQLite can (negative, zero, `Int64.min`/`max`, NULL, text, a real, a blob). Each is read as what it is or
/// refused with `StoreError.invalidStoredValue`, naming the table, the column and the row: the engine's own keys
/// give 0 and negative numbers other meanings (no key yet, temporary IDs), so such a row must never become an object.
extension Statement {
    /// The primary key in `column`: a whole number in `Limits.primaryKeys`, else an error naming `table`, `name` and
    /// the row (`row` describes it, called only on error).
    @inline(__always) func storedKey(at column: Int32, table: @autoclosure () -> String, column name: @autoclosure () -> String,
                                     row: @autoclosure () -> String) throws -> Int64 {
        let key = sqlite3_column_int64(handle, column)
        // One comparison on the hot path: keys below 1 wrap to the top of the unsigned range.
        if UInt64(bitPattern: key &- 1) < UInt64(Limits.primaryKeys.upperBound), sqlite3_column_type(handle, column) == SQLITE_INTEGER {
            return key
        }
        throw invalid(at: column, table: table(), column: name(), row: row(), expected: StoredKeyRule.key)
    }

    /// A foreign key in `column`: nil for NULL (no destination), else as `storedKey(at:…)`.
    @inline(__always) func storedForeignKey(at column: Int32, table: @autoclosure () -> String, column name: @autoclosure () -> String,
                                            row: @autoclosure () -> String) throws -> Int64? {
        if sqlite3_column_type(handle, column) == SQLITE_NULL { return nil }
        return try storedKey(at: column, table: table(), column: name(), row: row())
    }

    /// The entity number in `column` (a `Z_ENT`), which must name `entity` or one of its sub-entities.
    @inline(__always) func storedEntity(at column: Int32, of entity: EntityDescription, table: @autoclosure () -> String,
                                        column name: @autoclosure () -> String, row: @autoclosure () -> String) throws -> EntityDescription {
        let number = sqlite3_column_int64(handle, column)
        if number >= Int64(entity.entityNumber), number <= Int64(entity.lastDescendantNumber),
           sqlite3_column_type(handle, column) == SQLITE_INTEGER, let found = entity.model.entity(number: Int(number)) {
            return found
        }
        throw invalid(at: column, table: table(), column: name(), row: row(), expected: .entity(entity))
    }

    /// A row's version (`Z_OPT`): any whole number; NULL reads as 0, the version of a row never saved.
    @inline(__always) func storedVersion(at column: Int32, table: @autoclosure () -> String, row: @autoclosure () -> String) throws -> Int64 {
        let version = sqlite3_column_int64(handle, column)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER, SQLITE_NULL: return version
        default: throw invalid(at: column, table: table(), column: "Z_OPT", row: row(), expected: .version)
        }
    }

    private func invalid(at column: Int32, table: String, column name: String, row: String, expected: StoredKeyRule) -> StoreError {
        .invalidStoredValue(table: table, column: name, row: row, value: StoredKeyRule.describe(slot(at: column)), expected: expected.description)
    }
}

/// What a key column must hold, for the error that refuses another value.
enum StoredKeyRule {
    case key
    case entity(EntityDescription)
    case version

    var description: String {
        switch self {
        case .key:
            return "a key must be a whole number from 1 to \(Limits.primaryKeys.upperBound) (Limits.primaryKeys)"
        case .entity(let entity):
            let low = entity.entityNumber, high = entity.lastDescendantNumber
            let range = low == high ? "\(low)" : "one of \(low) to \(high)"
            return "an entity number here must be \(range) (\(entity.name)\(low == high ? "" : " or a sub-entity"))"
        case .version:
            return "a version (Z_OPT) must be a whole number"
        }
    }

    /// A stored value as an error shows it: digits, a quoted string (its first 40 characters), a real, a blob's size.
    static func describe(_ value: Slot) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let n): return String(n)
        case .real(let x): return "the real \(x)"
        case .text(let s): return "the text '\(s.count > 40 ? String(s.prefix(40)) + "…" : s)'"
        case .blob(let d): return "a blob of \(d.count) byte\(d.count == 1 ? "" : "s")"
        default: return "\(value)"
        }
    }

    /// The row with primary key `key`, as errors name it.
    static func row(_ key: Int64) -> String { "the row with Z_PK \(key)" }
}

/// A to-one relationship's columns in its source's table: the destination's key, and its entity number when the
/// destination has sub-entities.
struct ForeignKeyColumn {
    let column: Int32
    let name: String
    /// The destination entity's column, or -1.
    let entityColumn: Int32
    let entityColumnName: String
    unowned let destination: EntityDescription
}

extension EntityPlan {
    /// Checks the to-one keys of the current row (`TablePlan.selectSQL`) of `table`: each NULL or a key, with a
    /// destination entity of the relationship's hierarchy where it has sub-entities.
    @inline(__always) func checkForeignKeys(_ statement: Statement, table: String, key: Int64) throws {
        for foreignKey in foreignKeys {
            // The entity column goes with the key: NULL beside a key is refused too.
            guard try statement.storedForeignKey(at: foreignKey.column, table: table, column: foreignKey.name, row: StoredKeyRule.row(key)) != nil,
                  foreignKey.entityColumn >= 0 else { continue }
            _ = try statement.storedEntity(at: foreignKey.entityColumn, of: foreignKey.destination, table: table,
                                           column: foreignKey.entityColumnName, row: StoredKeyRule.row(key))
        }
    }
}

extension StoreError {
    /// A row whose `Z_ENT` says `rowEntity` where the store referred to it as `expected` (a to-one's entity column, an
    /// object ID): its values have another shape than the object's, so it is refused.
    static func entityMismatch(table: String, key: Int64, rowEntity: EntityDescription, expected: EntityDescription) -> StoreError {
        .invalidStoredValue(table: table, column: "Z_ENT", row: StoredKeyRule.row(key), value: "\(rowEntity.entityNumber) (\(rowEntity.name))",
                            expected: "the store refers to this row as \(expected.name) (entity \(expected.entityNumber)) elsewhere")
    }
}

/// A whole store's key columns checked at once, for what reads every row (migration): one statement per table finds
/// the first row with a value `Statement.storedKey` and its kin would refuse, and those then name it.
enum StoredKeyScan {
    /// Throws `StoreError.invalidStoredValue` for the first bad key of `model`'s tables in `connection`'s store.
    static func check(_ connection: SQLiteConnection, model: ManagedObjectModel) throws {
        let maximum = Limits.primaryKeys.upperBound
        for root in model.entities where root.superentity == nil {
            guard let table = root.table else { continue }
            // Z_PK, Z_ENT, Z_OPT, then each to-one's key and entity columns, once per column of the table.
            var conditions = ["typeof(Z_PK) = 'integer' AND Z_PK BETWEEN 1 AND ?", "typeof(Z_ENT) = 'integer' AND Z_ENT BETWEEN ? AND ?",
                              "typeof(Z_OPT) IN ('integer', 'null')"]
            var bindings: [Int64] = [maximum, Int64(root.entityNumber), Int64(root.lastDescendantNumber)]
            var foreignKeys: [(column: String, entityColumn: String?, destination: EntityDescription)] = []
            var seen: Set<String> = []
            for entity in root.selfAndDescendants {
                for relationship in entity.relationships where !relationship.isToMany {
                    guard let column = relationship.columnName, let destination = relationship.destination, seen.insert(column).inserted else { continue }
                    foreignKeys.append((column, relationship.entityColumnName, destination))
                    conditions.append("(\(column) IS NULL OR (typeof(\(column)) = 'integer' AND \(column) BETWEEN 1 AND ?))")
                    bindings.append(maximum)
                    if let entityColumn = relationship.entityColumnName {
                        conditions.append("(\(column) IS NULL OR (typeof(\(entityColumn)) = 'integer' AND \(entityColumn) BETWEEN ? AND ?))")
                        bindings += [Int64(destination.entityNumber), Int64(destination.lastDescendantNumber)]
                    }
                }
            }
            let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + foreignKeys.flatMap { [$0.column] + ($0.entityColumn.map { [$0] } ?? []) }
            let statement = try connection.prepare("SELECT \(columns.joined(separator: ", ")) FROM \(table.name) WHERE NOT ("
                                                   + conditions.map { "(\($0))" }.joined(separator: " AND ") + ") LIMIT 1")
            for (i, value) in bindings.enumerated() { statement.bind(value, at: Int32(i + 1)) }
            guard try statement.step() else { continue }
            let key = try statement.storedKey(at: 0, table: table.name, column: "Z_PK", row: StoredKeyRule.row(statement.int64(at: 0)))
            _ = try statement.storedEntity(at: 1, of: root, table: table.name, column: "Z_ENT", row: StoredKeyRule.row(key))
            _ = try statement.storedVersion(at: 2, table: table.name, row: StoredKeyRule.row(key))
            var column: Int32 = 3
            for foreignKey in foreignKeys {
                let present = try statement.storedForeignKey(at: column, table: table.name, column: foreignKey.column, row: StoredKeyRule.row(key)) != nil
                column += 1
                guard let entityColumn = foreignKey.entityColumn else { continue }
                if present {
                    _ = try statement.storedEntity(at: column, of: foreignKey.destination, table: table.name, column: entityColumn, row: StoredKeyRule.row(key))
                }
                column += 1
            }
            // SQL found the row bad; the checks above say why. Should they ever disagree, the row is still refused.
            throw StoreError.invalidStoredValue(table: table.name, column: "Z_PK", row: StoredKeyRule.row(key), value: String(key),
                                                expected: "a row whose keys all hold (Z_ENT, Z_OPT, to-one keys)")
        }
        var joinTables: Set<String> = []
        for entity in model.entities {
            for relationship in entity.relationships {
                guard let join = relationship.joinTable, joinTables.insert(join.name + "." + join.sourceColumn).inserted else { continue }
                // In the destination's table (a to-many without an inverse) a row may belong to no source.
                let unlinked = join.isDestinationTable ? "\(join.sourceColumn) IS NULL OR " : ""
                let statement = try connection.prepare("SELECT \(join.sourceColumn), \(join.destinationColumn) FROM \(join.name) WHERE NOT (\(unlinked)("
                    + "typeof(\(join.sourceColumn)) = 'integer' AND \(join.sourceColumn) BETWEEN 1 AND ? AND "
                    + "typeof(\(join.destinationColumn)) = 'integer' AND \(join.destinationColumn) BETWEEN 1 AND ?)) LIMIT 1")
                statement.bind(maximum, at: 1)
                statement.bind(maximum, at: 2)
                guard try statement.step() else { continue }
                let row = "a row with \(join.sourceColumn) \(StoredKeyRule.describe(statement.slot(at: 0)))"
                _ = try statement.storedKey(at: 0, table: join.name, column: join.sourceColumn, row: row)
                _ = try statement.storedKey(at: 1, table: join.name, column: join.destinationColumn, row: row)
                throw StoreError.invalidStoredValue(table: join.name, column: join.destinationColumn, row: row,
                                                    value: StoredKeyRule.describe(statement.slot(at: 1)), expected: StoredKeyRule.key.description)
            }
        }
    }
}
