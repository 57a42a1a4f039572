import Foundation

/// Persistent history through a migration: the old store's `ATRANSACTION`, `ACHANGE` and `ATRANSACTIONSTRING`
/// tables go into the new store as they are (their own columns and indexes, every row), each change's `ZENTITY`
/// renumbered to its entity's number in the new model. Core Data's documentation does not say what a migration does
/// with history; keeping it loses nothing (docs/migration.md).
public struct HistoryKept: Sendable, Equatable, CustomStringConvertible {
    /// Transactions (`ATRANSACTION` rows) kept.
    public var transactions = 0
    /// Changes (`ACHANGE` rows) kept.
    public var changes = 0
    /// Changes of entities the new model does not have: kept with their old entity number, which names no entity
    /// of the new model or another one.
    public var changesOfRemovedEntities = 0

    /// `1 transaction, 5468 changes kept`.
    public var description: String {
        var text = "\(transactions) transaction\(transactions == 1 ? "" : "s"), \(changes) change\(changes == 1 ? "" : "s") kept"
        if changesOfRemovedEntities > 0 {
            text += "; \(changesOfRemovedEntities) of them of entities the new version lacks (their old entity numbers kept)"
        }
        return text
    }
}

extension MigrationStep {
    /// Copies the history tables `reader`'s store has into `writer`'s (in the writer's open transaction); nil when
    /// the old store keeps no history.
    func copyHistory(from reader: SQLiteConnection, to writer: SQLiteConnection) throws -> HistoryKept? {
        let schema = try reader.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name IN ('ATRANSACTION', 'ACHANGE', 'ATRANSACTIONSTRING') AND sql IS NOT NULL")
        var tables: [String: String] = [:], indexes: [String] = []
        while try schema.step() {
            if schema.text(at: 0) == "table" { tables[schema.text(at: 1)] = schema.text(at: 3) } else { indexes.append(schema.text(at: 3)) }
        }
        guard Set(tables.keys) == Set(StoreInfo.historyTables) else { return nil }
        // The new store may have made its own (history tracking on): the old store's rows replace them.
        for name in StoreInfo.historyTables { try writer.execute("DROP TABLE IF EXISTS \(name)") }
        for name in StoreInfo.historyTables.sorted() { try writer.execute(tables[name]!) }
        for index in indexes { try writer.execute(index) }
        // Old entity number → new, by the step's mapping (a renamed entity keeps its changes).
        var renumbered: [Int64: Int64] = [:]
        for entityMapping in mapping.entityMappings {
            guard let from = entityMapping.source.flatMap(source.entity(named:)), let to = destination.entity(named: entityMapping.destination) else { continue }
            renumbered[Int64(from.entityNumber)] = Int64(to.entityNumber)
        }
        var kept = HistoryKept()
        for name in StoreInfo.historyTables {
            let select = try reader.prepare("SELECT * FROM \(name)")
            let columns = select.columnCount
            let entityColumn = name == "ACHANGE" ? (0..<columns).first { select.columnName(at: $0) == "ZENTITY" } : nil
            let insert = try writer.prepare("INSERT INTO \(name) VALUES (\((0..<columns).map { _ in "?" }.joined(separator: ", ")))")
            while try select.step() {
                insert.reset()
                for column in 0..<columns {
                    var value = select.slot(at: column)
                    if column == entityColumn, case .integer(let old) = value {
                        if let new = renumbered[old] { value = .integer(new) } else { kept.changesOfRemovedEntities += 1 }
                    }
                    insert.bind(value, at: column + 1)
                }
                while try insert.step() {}
                if name == "ATRANSACTION" { kept.transactions += 1 } else if name == "ACHANGE" { kept.changes += 1 }
            }
        }
        // Their keys' rows in Z_PRIMARYKEY, as the old store had them.
        let keys = try reader.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT >= ?")
        keys.bind(SQLiteStore.changeEntity, at: 1)
        let setKey = try writer.prepare("INSERT OR REPLACE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)")
        while try keys.step() {
            setKey.reset()
            for column in Int32(0)..<4 { setKey.bind(keys.slot(at: column), at: column + 1) }
            while try setKey.step() {}
        }
        return kept
    }
}
