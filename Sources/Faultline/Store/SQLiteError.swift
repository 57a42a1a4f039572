import Foundation
import CSQLite

/// An error reported by SQLite, with its result code and message, and the SQL that caused it when known.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The (extended) SQLite result code.
    public let code: Int32
    /// SQLite's message.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?

    init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    init(connection: OpaquePointer?, code: Int32, sql: String? = nil) {
        let text = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(code: sqlite3_extended_errcode(connection) == 0 ? code : sqlite3_extended_errcode(connection),
                  message: text, sql: sql)
    }

    /// The primary result code (the low byte of the extended code).
    public var primaryCode: Int32 { code & 0xff }

    /// A `UNIQUE` index refused a row (`SQLITE_CONSTRAINT_UNIQUE`).
    public var isUniqueConstraint: Bool { code == SQLITE_CONSTRAINT | (8 << 8) }

    /// For a unique-constraint failure, the columns SQLite names ("UNIQUE constraint failed: T.A, T.B").
    var failedUniqueColumns: [String] {
        guard isUniqueConstraint, let list = message.split(separator: ":", maxSplits: 1).last else { return [] }
        return list.split(separator: ",").map { String($0.split(separator: ".").last ?? $0).trimmingCharacters(in: .whitespaces) }
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }
}
