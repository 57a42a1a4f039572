import CSQLite
import Foundation

/// Persistent history for Faultline's own saves (`PersistentStoreOptions.persistentHistoryTracking`), in Core Data's
/// layout: the three tables and their indexes as Core Data creates them, a transaction row per save and a change row
/// per object, written in the save's own transaction (docs/store-format.md, "Persistent history").
extension SQLiteStore {
    static let historyTableStatements = [
        "CREATE TABLE IF NOT EXISTS ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
        "CREATE TABLE IF NOT EXISTS ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE IF NOT EXISTS ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
        "CREATE INDEX IF NOT EXISTS ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
        "CREATE INDEX IF NOT EXISTS ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
        "CREATE UNIQUE INDEX IF NOT EXISTS Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
        "CREATE INDEX IF NOT EXISTS Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
    ]
    /// Core Data's entity numbers of history's own rows.
    static let changeEntity: Int64 = 16001, transactionEntity: Int64 = 16002, stringEntity: Int64 = 16003

    /// Creates the history tables (when absent) and their `Z_PRIMARYKEY` rows; saves record history from now on.
    func startHistoryTracking() throws {
        try inTransaction {
            for statement in Self.historyTableStatements { try wrap { try connection.execute(statement) } }
            for (number, name) in [(Self.changeEntity, "CHANGE"), (Self.transactionEntity, "TRANSACTION"), (Self.stringEntity, "TRANSACTIONSTRING")] {
                let insert = try statement("INSERT OR IGNORE INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)")
                insert.bind(number, at: 1)
                insert.bind(name, at: 2)
                try wrap { try insert.execute() }
            }
        }
        tracksHistory = true
    }

    /// The next `count` keys of a history entity (inside the save's transaction).
    private func historyKeys(_ entity: Int64, count: Int) throws -> Int64 {
        let select = try statement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
        select.bind(entity, at: 1)
        guard try wrap({ try select.step() }) else {
            select.reset()
            throw StoreError.notAStore(path: path, detail: "Z_PRIMARYKEY has no row for persistent history's entity \(entity)")
        }
        let current = select.int64(at: 0)
        select.reset()
        guard current >= 0, current <= Limits.primaryKeys.upperBound - Int64(count) else {
            throw StoreError.invalidStoredValue(table: "Z_PRIMARYKEY", column: "Z_MAX", row: "the row with Z_ENT \(entity)", value: String(current),
                                                expected: "a whole number from 0 with room for \(count) more keys (Limits.primaryKeys)")
        }
        let update = try statement("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
        update.bind(current + Int64(count), at: 1)
        update.bind(entity, at: 2)
        try wrap { try update.execute() }
        return current + 1
    }

    /// The key of `text` in ATRANSACTIONSTRING, added when new; nil for nil.
    private func internedString(_ text: String?) throws -> Int64? {
        guard let text else { return nil }
        let select = try statement("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?")
        select.bind(text, at: 1)
        if try wrap({ try select.step() }) {
            defer { select.reset() }
            return select.int64(at: 0)
        }
        select.reset()
        let key = try historyKeys(Self.stringEntity, count: 1)
        let insert = try statement("INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)")
        insert.bind(key, at: 1)
        insert.bind(Self.stringEntity, at: 2)
        insert.bind(text, at: 3)
        try wrap { try insert.execute() }
        return key
    }

    /// A transaction row for the save and a change row per object (updates with the mask of their changed
    /// properties); inside the save's transaction, after its rows.
    func writeHistory(_ changes: SaveChanges) throws {
        let count = changes.inserted.count + changes.updated.count + changes.deleted.count
        guard count > 0 else { return }
        let transaction = try insertHistoryTransaction(author: changes.author, contextName: changes.contextName)
        var key = try historyKeys(Self.changeEntity, count: count)
        let change = try statement("INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES (?, ?, 1, ?, ?, ?, ?, ?)")
        func record(_ object: ManagedObject, type: Int64, objectKey: Int64, mask: Data?) throws {
            change.bind(key, at: 1)
            change.bind(Self.changeEntity, at: 2)
            change.bind(type, at: 3)
            change.bind(Int64(object.entity.entityNumber), at: 4)
            change.bind(objectKey, at: 5)
            change.bind(transaction, at: 6)
            if let mask { change.bind(mask, at: 7) } else { change.bindNull(at: 7) }
            try wrap { try change.execute() }
            key += 1
        }
        for object in changes.inserted { try record(object, type: 0, objectKey: object.pendingKey, mask: nil) }
        // Each entity's bits by property index, worked out once per save: no names are hashed per object.
        var bitsByEntity: [ObjectIdentifier: (bytes: Int, bits: [[Int]])] = [:]
        for object in changes.updated {
            let entity = object.entity
            let layout = bitsByEntity[ObjectIdentifier(entity)] ?? Self.columnBits(of: entity)
            bitsByEntity[ObjectIdentifier(entity)] = layout
            var bytes = [UInt8](repeating: 0, count: layout.bytes)
            for property in entity.properties where object.changes.contains(property.index) && property.index < layout.bits.count {
                for bit in layout.bits[property.index] { bytes[bit / 8] |= 0x80 >> UInt8(bit % 8) }
            }
            try record(object, type: 1, objectKey: object.key, mask: Data(bytes))
        }
        for object in changes.deleted { try record(object, type: 2, objectKey: object.key, mask: nil) }
    }

    /// Writes a transaction row (who, where, when) and returns its key.
    private func insertHistoryTransaction(author: String?, contextName: String?) throws -> Int64 {
        let strings = try [author, Bundle.main.bundleIdentifier, contextName, ProcessInfo.processInfo.processName].map(internedString)
        let transaction = try historyKeys(Self.transactionEntity, count: 1)
        let insert = try statement("""
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP) VALUES (?, ?, 1, ?, ?, ?, ?, ?)
            """)
        insert.bind(transaction, at: 1)
        insert.bind(Self.transactionEntity, at: 2)
        for (i, key) in strings.enumerated() {
            if let key { insert.bind(key, at: Int32(3 + i)) } else { insert.bindNull(at: Int32(3 + i)) }
        }
        insert.bind(Date().timeIntervalSinceReferenceDate, at: 7)
        try wrap { try insert.execute() }
        return transaction
    }

    /// Records a batch request's rows as one transaction, as Core Data records batch inserts, updates and deletes:
    /// `type` 0 insert, 1 update (of the properties named `updated`), 2 delete. Runs inside the batch's transaction.
    func writeBatchHistory(author: String?, contextName: String?, rows: [(EntityDescription, Int64)], type: Int64, updated: [String] = []) throws {
        guard tracksHistory, !rows.isEmpty else { return }
        let transaction = try insertHistoryTransaction(author: author, contextName: contextName)
        var key = try historyKeys(Self.changeEntity, count: rows.count)
        let change = try statement("INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES (?, ?, 1, ?, ?, ?, ?, ?)")
        var masks: [ObjectIdentifier: Data] = [:]
        for (entity, objectKey) in rows {
            change.bind(key, at: 1)
            change.bind(Self.changeEntity, at: 2)
            change.bind(type, at: 3)
            change.bind(Int64(entity.entityNumber), at: 4)
            change.bind(objectKey, at: 5)
            change.bind(transaction, at: 6)
            if type == 1 {
                let mask = masks[ObjectIdentifier(entity)] ?? {
                    let layout = Self.columnBits(of: entity)
                    var bytes = [UInt8](repeating: 0, count: layout.bytes)
                    for name in updated {
                        guard let property = entity.property(named: name), property.index < layout.bits.count else { continue }
                        for bit in layout.bits[property.index] { bytes[bit / 8] |= 0x80 >> UInt8(bit % 8) }
                    }
                    return Data(bytes)
                }()
                masks[ObjectIdentifier(entity)] = mask
                change.bind(mask, at: 7)
            } else {
                change.bindNull(at: 7)
            }
            try wrap { try change.execute() }
            key += 1
        }
    }

    /// The bits of each of `entity`'s properties (by property index) in Core Data's column mask
    /// (`PersistentHistory.columnOrder`), and the mask's length in bytes.
    static func columnBits(of entity: EntityDescription) -> (bytes: Int, bits: [[Int]]) {
        let order = PersistentHistory.columnOrder(of: entity)
        var bits = [[Int]](repeating: [], count: (entity.properties.map(\.index).max() ?? -1) + 1)
        for property in entity.properties where !property.isTransient {
            bits[property.index] = order.indices.filter { order[$0] == property.name }
        }
        return ((order.count + 7) / 8, bits)
    }

    /// Removes the transactions numbered below `number` (those before a token's), and their changes; returns how
    /// many transactions went.
    func deleteHistory(beforeTransaction number: Int64) throws -> Int {
        try inTransaction {
            let changes = try statement("DELETE FROM ACHANGE WHERE ZTRANSACTIONID < ?")
            changes.bind(number, at: 1)
            try wrap { try changes.execute() }
            let transactions = try statement("DELETE FROM ATRANSACTION WHERE Z_PK < ?")
            transactions.bind(number, at: 1)
            try wrap { try transactions.execute() }
            return Int(sqlite3_changes(connection.handle))
        }
    }

    /// Deletes the transactions (and their changes) recorded before `date`; returns how many went.
    func deleteHistory(before date: Date) throws -> Int {
        try inTransaction {
            let changes = try statement("DELETE FROM ACHANGE WHERE ZTRANSACTIONID IN (SELECT Z_PK FROM ATRANSACTION WHERE ZTIMESTAMP < ?)")
            changes.bind(date.timeIntervalSinceReferenceDate, at: 1)
            try wrap { try changes.execute() }
            let transactions = try statement("DELETE FROM ATRANSACTION WHERE ZTIMESTAMP < ?")
            transactions.bind(date.timeIntervalSinceReferenceDate, at: 1)
            try wrap { try transactions.execute() }
            return Int(sqlite3_changes(connection.handle))
        }
    }
}
