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

    /// Every column of one `ZROW` row, as a program reading rows into structs holds it.
    public struct RowRecord {
        var entity: Int64, key: Int64, version: Int64
        var values: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64)
    }

    /// Every column of one `ZCITY` row (`CityWorkload.rowColumns`), as a program reading rows into structs holds it.
    struct CityRecord {
        var key: Int64, version: Int64, isCapital: Bool, population: Int64, mayor: Int64?
        var name: String, normalizedName: String

        /// The current row of `stmt`, whose columns are `CityWorkload.rowColumns`.
        init(_ stmt: OpaquePointer) {
            func text(_ i: Int32) -> String { sqlite3_column_text(stmt, i).map { String(cString: $0) } ?? "" }
            key = sqlite3_column_int64(stmt, 0)
            version = sqlite3_column_int64(stmt, 1)
            isCapital = sqlite3_column_int64(stmt, 2) != 0
            population = sqlite3_column_int64(stmt, 3)
            mayor = sqlite3_column_type(stmt, 4) == SQLITE_NULL ? nil : sqlite3_column_int64(stmt, 4)
            name = text(5)
            normalizedName = text(6)
        }
    }

    /// The fetch's three phases, as the engine and GRDB run them: every `ZROW` row into an array of structs
    /// (fetch), every value read (use), the array dropped (release); returns a checksum.
    public static func fetchUseRelease(_ connection: Connection, clock: PhaseClock) throws -> Int64 {
        var held: [RowRecord]? = try {
            let stmt = try connection.prepare("SELECT Z_ENT, Z_PK, Z_OPT, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW")
            defer { sqlite3_finalize(stmt) }
            var rows: [RowRecord] = []
            while sqlite3_step(stmt) == SQLITE_ROW {
                func c(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }
                rows.append(RowRecord(entity: c(0), key: c(1), version: c(2), values: (c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12))))
            }
            return rows
        }()
        clock.lap(.fetch)
        var sum: Int64 = 0
        for row in held! {
            let v = row.values
            sum &+= v.0 &+ v.1 &+ v.2 &+ v.3 &+ v.4 &+ v.5 &+ v.6 &+ v.7 &+ v.8 &+ v.9
        }
        clock.lap(.use)
        PhaseClock.release(&held)
        clock.lap(.release)
        return sum
    }

    /// One `ZROW` row by primary key for each of `keys` (one prepared statement), each in its three phases: the
    /// row into a struct, its values read, the struct dropped; returns a checksum.
    public static func pointLookups(_ connection: Connection, keys: [Int64], clock: PhaseClock) throws -> Int64 {
        let stmt = try connection.prepare("SELECT Z_ENT, Z_PK, Z_OPT, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW WHERE Z_PK = ?")
        defer { sqlite3_finalize(stmt) }
        var sum: Int64 = 0
        clock.lap(.fetch)
        for key in keys {
            sqlite3_bind_int64(stmt, 1, key)
            var row: RowRecord?
            if sqlite3_step(stmt) == SQLITE_ROW {
                func c(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }
                row = RowRecord(entity: c(0), key: c(1), version: c(2), values: (c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12)))
            }
            sqlite3_reset(stmt)
            clock.lap(.fetch)
            if let v = row?.values { sum &+= v.0 &+ v.1 &+ v.2 &+ v.3 &+ v.4 &+ v.5 &+ v.6 &+ v.7 &+ v.8 &+ v.9 }
            clock.lap(.use)
            PhaseClock.release(&row)
            clock.lap(.release)
        }
        return sum
    }

    /// `rangeQueries` in three phases per range: the rows into structs, every value read, the structs dropped.
    public static func rangeQueries(_ connection: Connection, sql: String, ranges: [(Int64, Int64)], clock: PhaseClock) throws -> Int {
        let stmt = try connection.prepare(sql)
        defer { sqlite3_finalize(stmt) }
        var count = 0
        clock.lap(.fetch)
        for (low, high) in ranges {
            sqlite3_bind_int64(stmt, 1, low)
            sqlite3_bind_int64(stmt, 2, high)
            var held: [CityRecord]? = []
            while sqlite3_step(stmt) == SQLITE_ROW { held!.append(CityRecord(stmt)) }
            sqlite3_reset(stmt)
            clock.lap(.fetch)
            for city in held! { count += city.name.utf8.count > 0 && city.population >= 0 ? 1 : 0 }
            clock.lap(.use)
            PhaseClock.release(&held)
            clock.lap(.release)
        }
        return count
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

    /// Runs `sql` (two integer parameters, rows of `CityWorkload.rowColumns`) once per range, reading each row into
    /// a struct; returns the rows read.
    public static func rangeQueries(_ connection: Connection, sql: String, ranges: [(Int64, Int64)]) throws -> Int {
        let stmt = try connection.prepare(sql)
        defer { sqlite3_finalize(stmt) }
        var rows: [CityRecord] = []
        for (low, high) in ranges {
            sqlite3_bind_int64(stmt, 1, low)
            sqlite3_bind_int64(stmt, 2, high)
            while sqlite3_step(stmt) == SQLITE_ROW { rows.append(CityRecord(stmt)) }
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
