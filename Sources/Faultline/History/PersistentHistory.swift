import Foundation

/// Core Data's persistent history as a store holds it (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`:
/// docs/store-format.md, "Persistent history"): which context and author changed what, and when. Read-only.
public struct PersistentHistory: Sendable {
    /// One transaction: a save that recorded history.
    public struct Transaction: Sendable {
        /// The transaction's `Z_PK` (Core Data's token for it).
        public var number: Int64
        /// When it was recorded.
        public var timestamp: Date
        /// The context's `transactionAuthor`, if it set one.
        public var author: String?
        /// The saving context's `name`, if it had one.
        public var contextName: String?
        /// The saving app's bundle identifier (`ZBUNDLEID`, Core Data's `bundleID`).
        public var bundleID: String?
        /// The saving process's ID as Core Data records it (`ZPROCESSID`, Core Data's `processID`).
        public var process: String?
        /// Its changes, in the store's order.
        public var changes: [Change] = []
    }

    /// One object inserted, updated or deleted by a transaction.
    public struct Change: Sendable {
        /// What happened to the object.
        public enum Kind: String, Sendable {
            /// The object was inserted.
            case insert
            /// Some of its properties changed.
            case update
            /// It was deleted.
            case delete
        }
        /// What happened.
        public var kind: Kind
        /// The entity's name (from `Z_PRIMARYKEY`), or its number when the store does not name it.
        public var entity: String
        /// The object's `Z_PK`.
        public var key: Int64
        /// The object's URI.
        public var object: String
        /// For updates: the properties the bit mask `ZCOLUMNS` names, by Core Data's order (to-ones, their entity
        /// columns, order keys, attributes, to-manys, many-to-manys; by name within each). A bit past the entity's
        /// properties is given as `#bit`. Nil without a model, or when the mask is absent.
        public var updatedProperties: [String]?
        /// The change's row in `ACHANGE` (`Z_PK`; Core Data's `changeID`).
        public var changeID: Int64 = 0
    }

    /// Transactions oldest first, each with its changes.
    public var transactions: [Transaction]
    /// Whether the store has history tables at all.
    public var isTracked: Bool
    /// Changes whose transaction is not in `ATRANSACTION` (history pruned in between, or a damaged store).
    public var orphanChanges: Int

    /// Reads the history of the store at `url`; `model` (the store's, for updated properties) is optional.
    public static func read(storeAt url: URL, model: ManagedObjectModel?) throws -> PersistentHistory {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError.noSuchStore(path: path) }
        let connection = try ReadOnlyOpening(path: path).connect(reportingAs: path)
        do {
            var tables = Set<String>()
            let names = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            while try names.step() { tables.insert(names.text(at: 0)) }
            guard tables.isSuperset(of: StoreInfo.historyTables) else { return PersistentHistory(transactions: [], isTracked: false, orphanChanges: 0) }
            var uuid = ""
            if tables.contains("Z_METADATA") {
                let row = try connection.prepare("SELECT Z_UUID FROM Z_METADATA LIMIT 1")
                if try row.step(), !row.isNull(at: 0) { uuid = row.text(at: 0) }
            }
            var entityNames: [Int64: String] = [:]
            if tables.contains("Z_PRIMARYKEY") {
                let rows = try connection.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 LIMIT ?")
                rows.bind(Int64(Limits.storeEntities), at: 1)
                while try rows.step() { entityNames[rows.int64(at: 0)] = rows.text(at: 1) }
            }
            var strings: [Int64: String] = [:]
            let interned = try connection.prepare("SELECT Z_PK, ZNAME FROM ATRANSACTIONSTRING")
            while try interned.step() {
                if !interned.isNull(at: 1) { strings[interned.int64(at: 0)] = interned.text(at: 1) }
            }

            var transactions: [Transaction] = []
            var position: [Int64: Int] = [:]
            let rows = try connection.prepare("""
                SELECT Z_PK, ZTIMESTAMP, ZAUTHORTS, ZAUTHOR, ZCONTEXTNAMETS, ZCONTEXTNAME, ZBUNDLEIDTS, ZBUNDLEID, ZPROCESSIDTS, ZPROCESSID
                FROM ATRANSACTION ORDER BY Z_PK
                """)
            // A `…TS` column points into ATRANSACTIONSTRING; old stores keep the text in the plain column.
            func text(_ interned: Int32, _ plain: Int32) -> String? {
                if !rows.isNull(at: interned), let value = strings[rows.int64(at: interned)] { return value }
                return rows.isNull(at: plain) ? nil : rows.text(at: plain)
            }
            while try rows.step() {
                position[rows.int64(at: 0)] = transactions.count
                transactions.append(Transaction(number: rows.int64(at: 0), timestamp: Date(timeIntervalSinceReferenceDate: rows.double(at: 1)),
                                                author: text(2, 3), contextName: text(4, 5), bundleID: text(6, 7), process: text(8, 9)))
            }
            var orders: [String: [String]] = [:]
            var orphans = 0
            let changes = try connection.prepare("SELECT ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS, Z_PK FROM ACHANGE ORDER BY Z_PK")
            while try changes.step() {
                guard let at = position[changes.int64(at: 3)] else { orphans += 1; continue }
                let number = changes.int64(at: 1)
                let name = entityNames[number] ?? String(number)
                let kind: Change.Kind = switch changes.int64(at: 0) { case 0: .insert; case 1: .update; default: .delete }
                var updated: [String]?
                if kind == .update, !changes.isNull(at: 4), let entity = model?.entity(named: name) {
                    let order = orders[name] ?? Self.columnOrder(of: entity)
                    orders[name] = order
                    updated = Self.properties(in: changes.data(at: 4), order: order)
                }
                let key = changes.int64(at: 2)
                transactions[at].changes.append(Change(kind: kind, entity: name, key: key, object: "x-coredata://\(uuid)/\(name)/p\(key)", updatedProperties: updated,
                                                       changeID: changes.int64(at: 5)))
            }
            return PersistentHistory(transactions: transactions, isTracked: true, orphanChanges: orphans)
        } catch let error as SQLiteError {
            throw StoreError.sqlite(path: path, error: error)
        }
    }

    /// The properties a change's bit mask stands for, in Core Data's order (the reference's, verified on a SwiftData
    /// store for a many-to-many after an attribute; the order within a group is by name, likely): a to-one appears
    /// for its key, again for its entity column when its destination has sub-entities, and again for its order key.
    static func columnOrder(of entity: EntityDescription) -> [String] {
        let stored = entity.properties.filter { !$0.isTransient }.sorted { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }
        let relationships = stored.compactMap { $0 as? RelationshipDescription }
        let toOnes = relationships.filter { !$0.isToMany }
        var order = toOnes.map(\.name)
        order += toOnes.filter { ($0.destination?.subentities.isEmpty == false) }.map(\.name)
        order += toOnes.filter { $0.inverse?.isOrdered == true && $0.inverse?.isToMany == true }.map(\.name)
        order += stored.compactMap { $0 as? AttributeDescription }.map(\.name)
        order += relationships.filter { $0.isToMany && $0.inverse?.isToMany != true }.map(\.name)
        order += relationships.filter { $0.isToMany && $0.inverse?.isToMany == true }.map(\.name)
        return order
    }

    /// Bit i in byte i/8 with mask `0x80 >> (i mod 8)`. A damaged store's mask may be any length: bits past
    /// `Limits.historyMaskBits` are said as one `#more`, not listed one by one.
    static func properties(in mask: Data, order: [String]) -> [String] {
        var names: [String] = [], seen = Set<String>()
        for (byte, bits) in mask.enumerated() where bits != 0 {
            guard byte * 8 < Limits.historyMaskBits else { names.append("#more"); break }
            for bit in 0..<8 where bits & (0x80 >> bit) != 0 {
                let i = byte * 8 + bit
                let name = i < order.count ? order[i] : "#\(i)"
                if seen.insert(name).inserted { names.append(name) }
            }
        }
        return names
    }
}
