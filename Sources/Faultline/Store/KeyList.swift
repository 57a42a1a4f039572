import CSQLite

/// Lists of primary keys in SQL. Bound as one parameter — a JSON array that `json_each` reads — a list of any length
/// is one statement with one SQL text: one prepared statement, one query plan, and a constant number of statements
/// for a prefetch or a batch fault whatever their size. Where SQLite lacks the JSON functions, lists are
/// `IN (?, …)` of at most 500 keys.
enum KeyList {
    /// Whether this SQLite has `json_each` (checked once, on an in-memory database).
    static let usesJSON: Bool = {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { return false }
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        return sqlite3_prepare_v2(db, "SELECT value FROM json_each('[1]')", -1, &statement, nil) == SQLITE_OK
            && sqlite3_step(statement) == SQLITE_ROW
    }()

    private static let chunkSize = 500

    /// The pieces `keys` is queried in: all at once with JSON lists, else chunks of 500.
    static func chunks(_ keys: [Int64]) -> [ArraySlice<Int64>] {
        if usesJSON || keys.count <= chunkSize { return [keys[...]] }
        return stride(from: 0, to: keys.count, by: chunkSize).map { keys[$0..<min($0 + chunkSize, keys.count)] }
    }

    /// `column IN (…)` for a list of `count` keys.
    static func condition(_ column: String, count: Int) -> String {
        usesJSON ? "\(column) IN (SELECT value FROM json_each(?))" : "\(column) IN (" + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
    }

    /// The values `condition` binds for `keys`.
    static func bindings<Keys: Collection<Int64>>(_ keys: Keys) -> [Slot] {
        guard usesJSON else { return keys.map(Slot.integer) }
        var text = "["
        text.reserveCapacity(keys.count * 8 + 2)
        for (i, key) in keys.enumerated() {
            if i > 0 { text += "," }
            text += String(key)
        }
        text += "]"
        return [.text(text)]
    }
}
