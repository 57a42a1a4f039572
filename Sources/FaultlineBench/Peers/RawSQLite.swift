import CSQLite
import Foundation

struct PeerError: Error, CustomStringConvertible {
    let message: String
    var description: String { "raw SQLite peer: \(message)" }
}

/// The floor: the same work as the engine's scenarios, written directly against SQLite's C API as efficiently as
/// possible (GRDB's performance suite's shape: prepared statements, positional columns, no error checking in the
/// loop). Connections are opened before the clock starts, as the engine's stores are.
public enum RawSQLite {
    /// An open connection (WAL, `synchronous=NORMAL`, as the engine's stores), closed when released.
    public final class Connection {
        let db: OpaquePointer

        public init(path: String) throws {
            var db: OpaquePointer?
            guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
                sqlite3_close_v2(db)
                throw PeerError(message: "cannot open \(path)")
            }
            self.db = db
            sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nil, nil, nil)
        }

        deinit { sqlite3_close_v2(db) }

        func prepare(_ sql: String) throws -> OpaquePointer {
            var stmt: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else { throw error() }
            return stmt
        }

        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw error() }
        }

        func error() -> PeerError { PeerError(message: String(cString: sqlite3_errmsg(db))) }
    }

    static let createRows = "CREATE TABLE ZROW (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZA0 INTEGER, ZA1 INTEGER, ZA2 INTEGER, ZA3 INTEGER, ZA4 INTEGER, ZA5 INTEGER, ZA6 INTEGER, ZA7 INTEGER, ZA8 INTEGER, ZA9 INTEGER)"

    /// A new store at `path` with an empty `ZROW` table (set-up, untimed).
    public static func emptyRowStore(path: String) throws -> Connection {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let connection = try Connection(path: path)
        try connection.exec(createRows)
        return connection
    }

    /// Inserts `count` rows into `ZROW` in one transaction.
    public static func insertRows(_ connection: Connection, count: Int) throws {
        let stmt = try connection.prepare("INSERT INTO ZROW VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(stmt) }
        try connection.exec("BEGIN IMMEDIATE")
        for i in 0..<count {
            sqlite3_bind_int64(stmt, 1, Int64(i + 1))
            for j in 0..<10 { sqlite3_bind_int64(stmt, Int32(j + 2), Int64(i * 10 + j)) }
            guard sqlite3_step(stmt) == SQLITE_DONE else { throw connection.error() }
            sqlite3_reset(stmt)
        }
        try connection.exec("COMMIT")
    }

    /// Creates the `ZROW` table at `path` and inserts `count` rows in one transaction.
    public static func insertRows(path: String, count: Int) throws {
        try insertRows(emptyRowStore(path: path), count: count)
    }

    /// Reads every column of every `ZROW` row into an array of structs; returns a checksum.
    public static func selectRows(_ connection: Connection) throws -> Int64 {
        let stmt = try connection.prepare("SELECT Z_ENT, Z_PK, Z_OPT, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW")
        defer { sqlite3_finalize(stmt) }
        var sum: Int64 = 0
        var rows: [(Int64, Int64)] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            var values = (Int64(0), Int64(0))
            for column in 0..<13 {
                let v = sqlite3_column_int64(stmt, Int32(column))
                if column == 3 { values.0 = v } else if column == 12 { values.1 = v }
                sum &+= v
            }
            rows.append(values)
        }
        return sum &+ Int64(rows.count)
    }

    /// `selectRows` on a connection of its own.
    public static func selectRows(path: String) throws -> Int64 { try selectRows(Connection(path: path)) }

    /// `SELECT` of one `ZROW` row by primary key for each of `keys` (one prepared statement); returns a checksum.
    public static func pointLookups(_ connection: Connection, keys: [Int64]) throws -> Int64 {
        let stmt = try connection.prepare("SELECT Z_ENT, Z_PK, Z_OPT, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW WHERE Z_PK = ?")
        defer { sqlite3_finalize(stmt) }
        var sum: Int64 = 0
        for key in keys {
            sqlite3_bind_int64(stmt, 1, key)
            if sqlite3_step(stmt) == SQLITE_ROW {
                for column in 0..<13 { sum &+= sqlite3_column_int64(stmt, Int32(column)) }
            }
            sqlite3_reset(stmt)
        }
        return sum
    }

    /// Runs `sql` (two integer parameters, rows of text and integer) once per range, reading each row into a
    /// struct; returns the rows read.
    public static func rangeQueries(_ connection: Connection, sql: String, ranges: [(Int64, Int64)]) throws -> Int {
        let stmt = try connection.prepare(sql)
        defer { sqlite3_finalize(stmt) }
        var rows: [(String, Int64)] = []
        for (low, high) in ranges {
            sqlite3_bind_int64(stmt, 1, low)
            sqlite3_bind_int64(stmt, 2, high)
            while sqlite3_step(stmt) == SQLITE_ROW {
                let name = sqlite3_column_text(stmt, 0).map { String(cString: $0) } ?? ""
                rows.append((name, sqlite3_column_int64(stmt, 1)))
            }
            sqlite3_reset(stmt)
        }
        return rows.count
    }

    /// Runs an aggregate query returning (integer, double) rows.
    public static func aggregate(_ connection: Connection, sql: String) throws -> [(Int64, Double)] {
        let stmt = try connection.prepare(sql)
        defer { sqlite3_finalize(stmt) }
        var rows: [(Int64, Double)] = []
        while sqlite3_step(stmt) == SQLITE_ROW { rows.append((sqlite3_column_int64(stmt, 0), sqlite3_column_double(stmt, 1))) }
        return rows
    }

    /// Runs `sql` (one integer parameter) for each key in one transaction.
    public static func updateRows(_ connection: Connection, sql: String, keys: ClosedRange<Int64>) throws {
        let stmt = try connection.prepare(sql)
        defer { sqlite3_finalize(stmt) }
        try connection.exec("BEGIN IMMEDIATE")
        for key in keys {
            sqlite3_bind_int64(stmt, 1, key)
            guard sqlite3_step(stmt) == SQLITE_DONE else { throw connection.error() }
            sqlite3_reset(stmt)
        }
        try connection.exec("COMMIT")
    }
}
