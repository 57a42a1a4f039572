import Foundation
import GRDB

/// The Swift peer: the same work done with GRDB.swift records (`FetchableRecord` decoding by column position,
/// `PersistableRecord` inserts and updates, cached statements), as GRDB's own performance suite writes them.
/// Database queues are opened before the clock starts, as the engine's stores are.
public enum GRDBPeer {
    /// One `ZROW` row as a GRDB record.
    struct Item: FetchableRecord, PersistableRecord {
        static let databaseTableName = "ZROW"
        var pk: Int64
        var values: (Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64, Int64)

        init(pk: Int64, base: Int64) {
            self.pk = pk
            values = (base, base + 1, base + 2, base + 3, base + 4, base + 5, base + 6, base + 7, base + 8, base + 9)
        }

        init(row: GRDB.Row) throws {
            pk = row[0]
            values = (row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10])
        }

        func encode(to container: inout PersistenceContainer) throws {
            container["Z_PK"] = pk
            container["Z_ENT"] = 1
            container["Z_OPT"] = 1
            container["ZA0"] = values.0
            container["ZA1"] = values.1
            container["ZA2"] = values.2
            container["ZA3"] = values.3
            container["ZA4"] = values.4
            container["ZA5"] = values.5
            container["ZA6"] = values.6
            container["ZA7"] = values.7
            container["ZA8"] = values.8
            container["ZA9"] = values.9
        }
    }

    /// A city, every column of its row (`CityWorkload.rowColumns`), as a GRDB user's `City` record holds it: the
    /// same values a fetched object holds.
    struct City: FetchableRecord {
        var pk: Int64
        var version: Int64
        var isCapital: Bool
        var population: Int64
        var mayor: Int64?
        var name: String
        var normalizedName: String

        init(row: GRDB.Row) throws {
            pk = row[0]
            version = row[1]
            isCapital = row[2]
            population = row[3]
            mayor = row[4]
            name = row[5]
            normalizedName = row[6]
        }
    }

    /// A database queue on `path` (WAL, `synchronous=NORMAL`, as the engine's stores).
    public static func open(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        }
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// A new store at `path` with an empty `ZROW` table (set-up, untimed).
    public static func emptyRowStore(path: String) throws -> DatabaseQueue {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let queue = try open(path)
        try queue.write { try $0.execute(sql: RawSQLite.createRows) }
        return queue
    }

    /// Inserts `count` records in one transaction.
    public static func insertRows(_ queue: DatabaseQueue, count: Int) throws {
        try queue.write { db in
            for i in 0..<count { try Item(pk: Int64(i + 1), base: Int64(i * 10)).insert(db) }
        }
    }

    /// Fetches every `ZROW` row as a record; returns a checksum.
    public static func selectRows(_ queue: DatabaseQueue) throws -> Int64 {
        let items = try queue.read { db in
            try Item.fetchAll(db, sql: "SELECT Z_PK, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW")
        }
        var sum: Int64 = 0
        for item in items { sum &+= item.values.0 &+ item.values.9 }
        return sum &+ Int64(items.count)
    }

    /// The fetch's three phases: every `ZROW` row as a record (fetch), every value read (use), the records
    /// dropped (release); returns a checksum.
    public static func fetchUseRelease(_ queue: DatabaseQueue, clock: PhaseClock) throws -> Int64 {
        var held: [Item]? = try queue.read { db in
            try Item.fetchAll(db, sql: "SELECT Z_PK, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW")
        }
        clock.lap(.fetch)
        var sum: Int64 = 0
        for item in held! {
            let v = item.values
            sum &+= v.0 &+ v.1 &+ v.2 &+ v.3 &+ v.4 &+ v.5 &+ v.6 &+ v.7 &+ v.8 &+ v.9
        }
        clock.lap(.use)
        PhaseClock.release(&held)
        clock.lap(.release)
        return sum
    }

    /// `pointLookups` in three phases per key, in one read transaction as GRDB's suite runs them.
    public static func pointLookups(_ queue: DatabaseQueue, keys: [Int64], clock: PhaseClock) throws -> Int64 {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: "SELECT Z_PK, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW WHERE Z_PK = ?")
            var sum: Int64 = 0
            clock.lap(.fetch)
            for key in keys {
                var item = try Item.fetchOne(statement, arguments: [key])
                clock.lap(.fetch)
                if let v = item?.values { sum &+= v.0 &+ v.1 &+ v.2 &+ v.3 &+ v.4 &+ v.5 &+ v.6 &+ v.7 &+ v.8 &+ v.9 }
                clock.lap(.use)
                PhaseClock.release(&item)
                clock.lap(.release)
            }
            return sum
        }
    }

    /// `rangeQueries` in three phases per range: records, every value read, records dropped.
    public static func rangeQueries(_ queue: DatabaseQueue, sql: String, ranges: [(Int64, Int64)], clock: PhaseClock) throws -> Int {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: sql)
            var count = 0
            clock.lap(.fetch)
            for (low, high) in ranges {
                var held: [City]? = try City.fetchAll(statement, arguments: [low, high])
                clock.lap(.fetch)
                for city in held! { count += city.name.utf8.count > 0 && city.population >= 0 ? 1 : 0 }
                clock.lap(.use)
                PhaseClock.release(&held)
                clock.lap(.release)
            }
            return count
        }
    }

    /// One `ZROW` row by primary key for each of `keys`, through a cached statement; returns a checksum.
    public static func pointLookups(_ queue: DatabaseQueue, keys: [Int64]) throws -> Int64 {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: "SELECT Z_PK, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW WHERE Z_PK = ?")
            var sum: Int64 = 0
            for key in keys {
                if let item = try Item.fetchOne(statement, arguments: [key]) { sum &+= item.pk &+ item.values.0 &+ item.values.9 }
            }
            return sum
        }
    }

    /// Runs `sql` (two integer parameters) once per range, decoding records; returns the rows read.
    public static func rangeQueries(_ queue: DatabaseQueue, sql: String, ranges: [(Int64, Int64)]) throws -> Int {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: sql)
            var count = 0
            for (low, high) in ranges { count += try City.fetchAll(statement, arguments: [low, high]).count }
            return count
        }
    }

    /// Runs an aggregate query returning (integer, double) rows.
    public static func aggregate(_ queue: DatabaseQueue, sql: String) throws -> [(Int64, Double)] {
        try queue.read { db in
            try GRDB.Row.fetchAll(db, sql: sql).map { (($0[0] as Int64), ($0[1] as Double)) }
        }
    }

    /// Fetches the first `count` records (untimed) and returns the timed work: change one value of each and update
    /// them in one transaction.
    public static func updater(path: String, count: Int) throws -> () throws -> Void {
        let queue = try open(path)
        var items = try queue.read { db in
            try Item.fetchAll(db, sql: "SELECT Z_PK, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW ORDER BY Z_PK LIMIT ?", arguments: [count])
        }
        return {
            try queue.write { db in
                for i in items.indices {
                    items[i].values.1 += 1
                    try items[i].update(db)
                }
            }
        }
    }
}

extension BenchVariant {
    /// The GRDB peer on the store at `path`.
    static func grdb(_ name: String = "GRDB records", path: String, operations: Int = 1,
                     _ work: @escaping (DatabaseQueue) throws -> Void) -> BenchVariant {
        peer(name, role: .grdb, operations: operations, open: { try GRDBPeer.open(path) }, work)
    }
}
