import Foundation

/// An index of the store's file as SQLite has it (`sqlite_master` and `PRAGMA index_xinfo`): the indexes Core
/// Data made for the model (Indexed attributes, fetch indexes, uniqueness constraints, join tables) and any other.
public struct StoreIndex: Sendable, Equatable {
    /// The index's name.
    public let name: String
    /// The table it indexes.
    public let table: String
    /// The indexed columns in order (an expression's place is `<expression>`).
    public let columns: [String]
    /// `UNIQUE`: it enforces a constraint, so it is never redundant.
    public let isUnique: Bool
    /// A partial index (`WHERE …`): it covers some rows only.
    public let isPartial: Bool
}

extension PersistentStoreCoordinator {
    /// The indexes of the store's file, by table and name; SQLite's own automatic indexes (`sqlite_autoindex_…`, for
    /// a PRIMARY KEY or UNIQUE clause) are left out. Read, never written.
    public func storeIndexes() throws -> [StoreIndex] {
        try withLock {
            let store = try requireStore()
            return try store.wrap {
                let connection = store.connection
                let list = try connection.prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY tbl_name, name")
                var found: [(name: String, table: String, sql: String)] = []
                while try list.step() { found.append((list.text(at: 0), list.text(at: 1), list.text(at: 2))) }
                return try found.map { index in
                    // index_xinfo: key columns first (key = 1), then the table's key; cid -2 is an expression.
                    let info = try connection.prepare("SELECT cid, name, key FROM pragma_index_xinfo(?)")
                    info.bind(index.name, at: 1)
                    var columns: [String] = []
                    while try info.step() {
                        guard info.int64(at: 2) == 1 else { continue }
                        columns.append(info.isNull(at: 1) ? "<expression>" : info.text(at: 1))
                    }
                    let upper = index.sql.uppercased()
                    return StoreIndex(name: index.name, table: index.table, columns: columns,
                                      isUnique: upper.hasPrefix("CREATE UNIQUE"), isPartial: upper.range(of: #"\)\s*WHERE\s"#, options: .regularExpression) != nil)
                }
            }
        }
    }
}
