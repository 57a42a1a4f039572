import Foundation

/// Whether a store that Core Data wrote has the layout a model needs. Core Data's version hashes are not
/// Faultline's, so such a store is checked by its schema: the entities of `Z_PRIMARYKEY` by number and name (or the
/// name an entity had before a rename, its `renamingIdentifier`), and every table and column the model reads and
/// writes. Each difference is one line naming the entity or table.
enum StoreSchemaCheck {
    /// The first `Z_ENT` of Core Data's private entities (persistent history, CloudKit mirroring).
    static let firstPrivateEntityNumber = 16_000

    static func differences(between model: ManagedObjectModel, and connection: SQLiteConnection) throws -> [String] {
        var storeColumns: [String: [String]] = [:]
        let tables = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        var tableNames: [String] = []
        while try tables.step() { tableNames.append(tables.text(at: 0)) }
        let info = try connection.prepare("SELECT name FROM pragma_table_info(?)")
        for name in tableNames {
            info.reset()
            info.bind(name, at: 1)
            var columns: [String] = []
            while try info.step() { columns.append(info.text(at: 0)) }
            storeColumns[name] = columns
        }

        var result: [String] = []
        // Core Data's own bookkeeping entities (persistent history's CHANGE, TRANSACTION, TRANSACTIONSTRING, …) are
        // numbered from 16001 in Z_PRIMARYKEY: they belong to no model.
        let keys = try connection.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < \(Self.firstPrivateEntityNumber) ORDER BY Z_ENT")
        var storeEntities: [(number: Int64, name: String)] = []
        while try keys.step() { storeEntities.append((keys.int64(at: 0), keys.text(at: 1))) }
        for entity in model.entities {
            guard let stored = storeEntities.first(where: { $0.number == Int64(entity.entityNumber) }) else {
                result.append("entity '\(entity.name)' (Z_ENT \(entity.entityNumber)) is not in the store's Z_PRIMARYKEY")
                continue
            }
            if stored.name != entity.name && stored.name != entity.renamingIdentifier {
                result.append("Z_ENT \(entity.entityNumber) is '\(stored.name)' in the store and '\(entity.name)' in the model")
            }
        }
        for stored in storeEntities where model.entity(number: Int(stored.number)) == nil {
            result.append("entity '\(stored.name)' (Z_ENT \(stored.number)) is in the store but not in the model")
        }

        func compare(table: String, expected: [String], owner: String) {
            guard let found = storeColumns[table] else {
                result.append("table \(table) (\(owner)) is not in the store")
                return
            }
            let missing = expected.filter { !found.contains($0) }
            let extra = found.filter { !expected.contains($0) }
            if !missing.isEmpty { result.append("table \(table) (\(owner)) lacks \(missing.joined(separator: ", "))") }
            if !extra.isEmpty { result.append("table \(table) (\(owner)) has \(extra.joined(separator: ", ")), which the model does not") }
        }
        for table in model.tables {
            compare(table: table.name, expected: ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name), owner: "entity \(table.root.name)")
        }
        for join in model.joinTables {
            let columns = [join.sourceColumn, join.destinationColumn] + [join.orderColumn, join.inverseOrderColumn].compactMap { $0 }
            compare(table: join.name, expected: columns, owner: "a many-to-many relationship")
        }
        return result
    }
}
