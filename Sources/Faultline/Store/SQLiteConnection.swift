import CSQLite
import Foundation

/// One SQLite connection with a cache of prepared statements keyed by SQL text.
///
/// Not thread-safe by itself; its owner (the persistent store) serializes access.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    private var statements: [String: Statement] = [:]
    /// The last few statements found, compared with before the dictionary is asked: a program runs the same few
    /// statements over and over, and comparing a text with a few others (often the very same string, whose storage
    /// decides) costs far less than hashing it, which for a fetch's SQL is about 1,100 instructions.
    private var recent: [(sql: String, statement: Statement)] = []
    private var recentNext = 0
    private static let recentCount = 4
    /// Statements run on this connection (each use of a prepared statement, and each `execute`).
    @exclusivity(unchecked) private(set) var statementCount = 0

    /// Rows Core Data's derived-attribute triggers recomputed during the current write.
    let derivedValueChanges = DerivedValueChanges()

    /// A folder removed once the connection is closed (a scratch copy the connection reads).
    private let scratchFolder: URL?

    /// Opens (or creates, when `create` is true) the database file at `path`; read only (and `path` may be a
    /// `file:` URI) when `readOnly` is true. `scratchFolder` is removed when the connection closes.
    init(path: String, create: Bool, readOnly: Bool = false, scratchFolder: URL? = nil, busyTimeout: Int32 = 5_000) throws {
        self.scratchFolder = scratchFolder
        var db: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError(connection: db, code: rc)
            sqlite3_close_v2(db)
            throw error
        }
        self.handle = db
        self.path = path
        sqlite3_busy_timeout(db, busyTimeout)
        sqlite3_extended_result_codes(db, 1)
        SQLFunctions.register(on: db)
        CoreDataSQLFunctions.register(on: db, changes: derivedValueChanges)
    }

    deinit {
        recent.removeAll()
        statements.removeAll()
        sqlite3_close_v2(handle)
        if let scratchFolder { try? FileManager.default.removeItem(at: scratchFolder) }
    }

    /// A cached prepared statement for `sql`, reset (to run from its start; its bound values stay until bound again).
    func cachedStatement(_ sql: String) throws -> Statement {
        statementCount += 1
        for i in recent.indices where recent[i].sql == sql {
            let statement = recent[i].statement
            statement.reset()
            return statement
        }
        let statement: Statement
        if let cached = statements[sql] {
            statement = cached
            statement.reset()
        } else {
            statement = try Statement(connection: self, sql: sql)
            statements[sql] = statement
        }
        if recent.count < Self.recentCount {
            recent.append((sql, statement))
        } else {
            recent[recentNext] = (sql, statement)
            recentNext = (recentNext + 1) % Self.recentCount
        }
        return statement
    }

    /// Counts one run of a statement the caller keeps prepared itself.
    @inline(__always) func countStatement() { statementCount += 1 }

    /// A fresh statement that is not cached (for one-off SQL such as DDL).
    func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// The statement probe, when probes are on: set once, right after opening, before any statement is prepared
    /// (statements keep an unowned reference to it).
    var probe: ConnectionProbe?

    /// Executes one or more SQL statements without parameters (DDL, pragmas, transactions).
    func execute(_ sql: String) throws {
        statementCount += 1
        let start = probe != nil ? ProbeClock.now() : 0
        defer { if start != 0 { probe?.executed(sql, start: start) } }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The linked SQLite library's version string.
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
