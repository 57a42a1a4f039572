import CSQLite
import Faultline
import Foundation

/// The engine's speed targets measured against a raw SQLite C-API loop doing the same work, in one run:
/// fetching N objects of 10 integer attributes fully materialized, inserting M such objects with one save, and
/// fulfilling faults from the row cache.
public struct SpeedCheck {
    /// One measured comparison.
    public struct Result: Sendable {
        public var name: String
        public var engineSeconds: Double
        public var peerSeconds: Double?
        public var target: String
        public var ratio: Double? { peerSeconds.map { engineSeconds / $0 } }
    }

    public let folder: URL
    public let fetchCount: Int
    public let insertCount: Int
    public let repetitions: Int

    public init(folder: URL, fetchCount: Int = 200_000, insertCount: Int = 50_000, repetitions: Int = 5) {
        self.folder = folder
        self.fetchCount = fetchCount
        self.insertCount = insertCount
        self.repetitions = repetitions
    }

    public func run(progress: (String) -> Void = { _ in }) throws -> [Result] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = try RowWorkload.model()
        let keys = RowWorkload.keys
        var results: [Result] = []

        // Insert M objects with one save, versus a prepared INSERT loop in one transaction.
        progress("insert \(insertCount) objects, one save")
        let insertStore = folder.appendingPathComponent("insert.sqlite")
        // As for fetches below, tearing the context down (releasing its objects) is outside the measurement.
        var inserted: ManagedObjectContext?
        let engineInsert = try Stopwatch.median(repetitions: repetitions, setUp: {
            inserted = nil
            RowWorkload.removeStore(at: insertStore)
        }) {
            inserted = try RowWorkload.insert(count: insertCount, into: insertStore, model: model)
        }
        precondition(inserted?.hasChanges == false, "the insert's context was saved")
        inserted = nil
        let rawInsertStore = folder.appendingPathComponent("insert-raw.sqlite")
        let rawInsert = try Stopwatch.median(repetitions: repetitions, setUp: { RowWorkload.removeStore(at: rawInsertStore) }) {
            try RawSQLite.insertRows(path: rawInsertStore.path, count: insertCount)
        }
        results.append(Result(name: "insert \(insertCount) × 10 ints, one save", engineSeconds: engineInsert, peerSeconds: rawInsert, target: "≤ 2×"))

        // Fetch N objects fully materialized, versus a C loop reading the same columns.
        progress("fetch \(fetchCount) objects, fully materialized")
        let fetchStore = folder.appendingPathComponent("fetch.sqlite")
        RowWorkload.removeStore(at: fetchStore)
        try RowWorkload.insert(count: fetchCount, into: fetchStore, model: model)
        var checksum: Int64 = 0
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: fetchStore)
        // Each repetition uses a new context; the previous one is torn down before the clock starts, since
        // tearing down 200,000 objects is not part of fetching them.
        var context: ManagedObjectContext?
        let engineFetch = try Stopwatch.median(repetitions: repetitions, setUp: {
            context = nil
            context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        }) {
            checksum &+= try RowWorkload.fetchMaterialized(context!)
        }
        // What the measurement left out, shown on its own: releasing a context that holds every row.
        let teardown = Stopwatch.time { context = nil }
        // Warm: the same context fetches again; its objects are registered and the row cache is current.
        let warmContext = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        checksum &+= try RowWorkload.fetchMaterialized(warmContext)
        let warmFetch = try Stopwatch.median(repetitions: repetitions) {
            checksum &+= try RowWorkload.fetchMaterialized(warmContext)
        }
        let rawFetch = try Stopwatch.median(repetitions: repetitions) {
            checksum &+= try RawSQLite.selectRows(path: fetchStore.path)
        }
        results.append(Result(name: "fetch \(fetchCount) × 10 ints, materialized, new context", engineSeconds: engineFetch, peerSeconds: rawFetch, target: "≤ 1.5×"))
        results.append(Result(name: "fetch \(fetchCount) × 10 ints, registered objects", engineSeconds: warmFetch, peerSeconds: rawFetch, target: "≤ 1.5×"))
        results.append(Result(name: "release a context of \(fetchCount) objects", engineSeconds: teardown, peerSeconds: nil, target: "(not in the fetch times)"))

        // Fault fulfilment from the row cache: fetch as faults (rows into the cache), then fire each fault.
        progress("fire \(fetchCount) faults from the row cache")
        var perFault = 0.0
        let faultContext = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try faultContext.performAndWait {
            let rows = try faultContext.fetch(FetchRequest<ManagedObject>(entityName: "Row"))
            let before = coordinator.statistics.statementsExecuted
            perFault = Stopwatch.time {
                for row in rows { checksum &+= row[keys[3]] }
            } / Double(rows.count)
            precondition(coordinator.statistics.statementsExecuted == before, "row-cache faults must issue no SQL")
        }
        results.append(Result(name: "fault fulfilled from the row cache (per fault)", engineSeconds: perFault, peerSeconds: nil, target: "≪ 1 µs"))

        // The probes' cost: the same work with a JSON Lines trace on, compared with probes off.
        progress("the same fetches with the trace on")
        let tracePath = folder.appendingPathComponent("probe-cost-trace.jsonl").path
        let traced = PersistentStoreCoordinator(managedObjectModel: model,
                                                probes: Probes(configuration: ProbeConfiguration(tracePath: tracePath)))
        try traced.addPersistentStore(at: fetchStore)
        let plain = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try plain.addPersistentStore(at: fetchStore)
        func bulk(_ coordinator: PersistentStoreCoordinator) throws -> Double {
            var context: ManagedObjectContext?
            defer { context = nil }
            return try Stopwatch.median(repetitions: repetitions, setUp: {
                context = nil
                context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            }) {
                checksum &+= try RowWorkload.fetchMaterialized(context!)
            }
        }
        func small(_ coordinator: PersistentStoreCoordinator) throws -> Double {
            try Stopwatch.median(repetitions: repetitions) {
                let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                checksum &+= Int64(try RowWorkload.smallFetches(context, count: 5_000))
            }
        }
        let bulkOff = try bulk(plain), bulkOn = try bulk(traced)
        let smallOff = try small(plain), smallOn = try small(traced)
        traced.probes.flush()
        results.append(Result(name: "trace on: fetch \(fetchCount) rows (vs probes off)", engineSeconds: bulkOn, peerSeconds: bulkOff, target: "≤ 1.05×"))
        results.append(Result(name: "trace on: 5,000 one-row fetches (vs probes off)", engineSeconds: smallOn, peerSeconds: smallOff, target: "≤ 1.05×"))
        if checksum == 42 { print("") } // keep the work observable
        return results
    }

    /// Formats results as a text table.
    public static func table(_ results: [Result]) -> String {
        var lines = ["measure                                              engine        peer          ratio   target"]
        for r in results {
            let engine = r.engineSeconds < 0.001 ? String(format: "%9.1f ns", r.engineSeconds * 1e9) : String(format: "%9.1f ms", r.engineSeconds * 1e3)
            let peer = r.peerSeconds.map { String(format: "%9.1f ms", $0 * 1e3) } ?? "            "
            let ratio = r.ratio.map { String(format: "%5.2f×", $0) } ?? "      "
            lines.append(r.name.padding(toLength: 52, withPad: " ", startingAt: 0) + " " + engine + "   " + peer + "   " + ratio + "  " + r.target)
        }
        lines.append("(peer: a raw SQLite C-API loop doing the same work; for the trace lines, the engine with probes off)")
        return lines.joined(separator: "\n") + "\n"
    }
}

struct PeerError: Error, CustomStringConvertible {
    let message: String
    var description: String { "raw SQLite peer: \(message)" }
}

/// The peer: the same work as `RowWorkload`, written directly against SQLite's C API as efficiently as possible
/// (GRDB's performance suite's shape: prepared statements, positional columns, no error checking in the loop).
public enum RawSQLite {
    static func open(_ path: String) throws -> OpaquePointer {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            throw PeerError(message: "cannot open \(path)")
        }
        sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nil, nil, nil)
        return db
    }

    /// Creates the `ZROW` table at `path` and inserts `count` rows in one transaction.
    public static func insertRows(path: String, count: Int) throws {
        let db = try open(path)
        defer { sqlite3_close_v2(db) }
        sqlite3_exec(db, "CREATE TABLE ZROW (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZA0 INTEGER, ZA1 INTEGER, ZA2 INTEGER, ZA3 INTEGER, ZA4 INTEGER, ZA5 INTEGER, ZA6 INTEGER, ZA7 INTEGER, ZA8 INTEGER, ZA9 INTEGER)", nil, nil, nil)
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT INTO ZROW VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &stmt, nil)
        defer { sqlite3_finalize(stmt) }
        sqlite3_exec(db, "BEGIN EXCLUSIVE", nil, nil, nil)
        for i in 0..<count {
            sqlite3_bind_int64(stmt, 1, Int64(i + 1))
            for j in 0..<10 { sqlite3_bind_int64(stmt, Int32(j + 2), Int64(i * 10 + j)) }
            guard sqlite3_step(stmt) == SQLITE_DONE else { throw PeerError(message: String(cString: sqlite3_errmsg(db))) }
            sqlite3_reset(stmt)
        }
        sqlite3_exec(db, "COMMIT", nil, nil, nil)
    }

    /// Reads every column of every `ZROW` row into an array of structs; returns a checksum.
    public static func selectRows(path: String) throws -> Int64 {
        let db = try open(path)
        defer { sqlite3_close_v2(db) }
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT Z_ENT, Z_PK, Z_OPT, ZA0, ZA1, ZA2, ZA3, ZA4, ZA5, ZA6, ZA7, ZA8, ZA9 FROM ZROW", -1, &stmt, nil)
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
}
