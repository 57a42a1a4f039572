import CSQLite
import Foundation
import XCTest

/// The commands on stores Apple's Core Data wrote (../shared/fixtures/coredata-stores), each from a temporary copy:
/// the model bundle's version that wrote the store is found, and no read command changes a byte of the store, its
/// `-wal` or its `-shm`.
final class CoreDataStoreCLITests: CLITestCase {
    struct Case {
        let store: String
        let bundle: String
        let version: String?
        let entity: String
        let count: Int
    }

    static let cases: [Case] = [
        Case(store: "bnr-coredatastack/TestModel.sqlite", bundle: "bnr-coredatastack/Sample.xcdatamodeld", version: "TestModel", entity: "Author", count: 0),
        Case(store: "coredataplus-samplemodel/SampleModel_V1.sqlite", bundle: "coredataplus-samplemodel/SampleModel.xcdatamodeld", version: nil, entity: "Car", count: 125),
        Case(store: "coredataplus-samplemodel/SampleModel_V2.sqlite", bundle: "coredataplus-samplemodel/SampleModel.xcdatamodeld", version: "SampleModel2", entity: "Person", count: 20),
        Case(store: "flickrsearcher/starter_database.sqlite", bundle: "flickrsearcher/FlickrSearcher.xcdatamodeld", version: "FlickrSearcher", entity: "Photo", count: 109),
        Case(store: "wibosco-migration/CoreDataMigration_Example_1.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: "CoreDataMigration_Example", entity: "Post", count: 1_001),
        Case(store: "wibosco-migration/CoreDataMigration_Example_2.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: "CoreDataMigration_Example 2", entity: "Post", count: 5_979),
        Case(store: "wibosco-migration/CoreDataMigration_Example_3.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: "CoreDataMigration_Example 3", entity: "Color", count: 7_995),
        Case(store: "wibosco-migration/CoreDataMigration_Example_WAL.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: nil, entity: "Post", count: 84),
    ]

    func testEveryFixtureStoreIsReadWithItsVersionAndLeftByteIdentical() throws {
        var fixtures = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { fixtures.deleteLastPathComponent() }
        fixtures = fixtures.appendingPathComponent("shared/fixtures/coredata-stores")
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked") }
        for testCase in Self.cases {
            let source = fixtures.appendingPathComponent(testCase.store)
            let store = dir.appendingPathComponent(source.lastPathComponent).path
            var files: [String: Data] = [:]
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
                try FileManager.default.copyItem(atPath: source.path + suffix, toPath: store + suffix)
                files[suffix] = try Data(contentsOf: URL(fileURLWithPath: store + suffix))
            }
            let bundle = fixtures.appendingPathComponent(testCase.bundle).path
            let count = try run(["query", "--model", bundle, "--store", store, testCase.entity, "--result", "count"])
            XCTAssertEqual(count.status, 0, "\(testCase.store): \(count.stderr)")
            XCTAssertEqual(count.stdout, "{\"count\": \(testCase.count)}\n", testCase.store)
            if let version = testCase.version {
                XCTAssertTrue(count.stderr.hasPrefix("faultline: the store was made with model version '\(version)'"), "\(testCase.store): \(count.stderr)")
            } else {
                XCTAssertEqual(count.stderr, "", "the bundle's current version fits \(testCase.store)")
            }
            var commands = [["query", "--model", bundle, "--store", store, testCase.entity, "--limit", "3"],
                            ["explain", "--model", bundle, "--store", store, testCase.entity],
                            ["diagram", bundle, "--store", store, "--limit", "30", "-o", "graph.svg"]]
            if testCase.store.hasPrefix("flickrsearcher") {
                let result = try run(["query", "--store", store, testCase.entity])
                XCTAssertEqual(result.status, 1)
                XCTAssertTrue(result.stderr.contains("carries no model: its Z_MODELCACHE is absent or empty"), result.stderr)
            } else {
                // The model the store caches: no --model at all.
                commands += [["query", "--store", store, testCase.entity, "--limit", "3"],
                             ["explain", "--store", store, testCase.entity],
                             ["diagram", "--store", store, "--limit", "30", "-o", "graph.svg"],
                             ["diagram", store, "-o", "model.svg"],
                             ["schema", store]]
            }
            for arguments in commands {
                let result = try run(arguments)
                XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
            }
            for (suffix, bytes) in files {
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), bytes, "\(testCase.store)\(suffix) is unchanged")
            }
            for suffix in ["-wal", "-shm", "-journal"] where files[suffix] == nil {
                XCTAssertFalse(FileManager.default.fileExists(atPath: store + suffix), "no \(suffix) was created beside \(testCase.store)")
            }
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).filter { $0.hasPrefix("faultline-readonly-") }
        XCTAssertEqual(leftovers, [], "scratch copies are removed")
    }

    /// `bench --store` runs the model's scenarios on a scratch copy of a real store's data (its cached model, or the
    /// bundle version that fits), and `explain` proves a suggested index on a scratch copy: the store is unchanged.
    /// Every fixture store migrated to its bundle's current version: the dry run and the migration agree — the same
    /// exit status, the same plan and account (or the same error), the dry run writing nothing.
    func testTheDryRunAndTheMigrationAgreeOnEveryFixture() throws {
        var fixtures = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { fixtures.deleteLastPathComponent() }
        fixtures = fixtures.appendingPathComponent("shared/fixtures/coredata-stores")
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked") }
        var migrated = 0, refused = 0
        for testCase in Self.cases {
            let source = fixtures.appendingPathComponent(testCase.store)
            let store = dir.appendingPathComponent(source.lastPathComponent).path
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
                try? FileManager.default.removeItem(atPath: store + suffix)
                try FileManager.default.copyItem(atPath: source.path + suffix, toPath: store + suffix)
            }
            let bundle = fixtures.appendingPathComponent(testCase.bundle).path
            let before = try Data(contentsOf: URL(fileURLWithPath: store))
            let dry = try run(["migrate", "--model", bundle, "--store", store, "--dry-run", "--allow-loss"])
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "\(testCase.store): the dry run writes nothing")
            let real = try run(["migrate", "--model", bundle, "--store", store, "--allow-loss"])
            XCTAssertEqual(dry.status, real.status, "\(testCase.store): \(dry.stderr) / \(real.stderr)")
            if real.status == 0 {
                let plan = dry.stdout.components(separatedBy: "dry run: ")[0]
                XCTAssertTrue(real.stdout.hasPrefix(plan), "\(testCase.store):\n\(dry.stdout)\n---\n\(real.stdout)")
                migrated += real.stdout.contains("migrated ") ? 1 : 0
            } else {
                XCTAssertEqual(dry.stderr, real.stderr, testCase.store)
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "\(testCase.store): a failed migration writes nothing")
                refused += 1
            }
        }
        XCTAssertGreaterThanOrEqual(migrated, 3)
        XCTAssertGreaterThanOrEqual(refused, 1, "wibosco's version 3 requires a relationship the old posts lack")
    }

    func testBenchAndExplainWorkOnARealStoresData() throws {
        let fixtures = fixturesFolder
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked") }
        let source = fixtures.appendingPathComponent("wibosco-migration/CoreDataMigration_Example_3.sqlite")
        let store = dir.appendingPathComponent(source.lastPathComponent).path
        try FileManager.default.copyItem(atPath: source.path, toPath: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let bundle = fixtures.appendingPathComponent("wibosco-migration/CoreDataMigration_Example.xcdatamodeld").path
        for options in [["--model", bundle], []] {
            let out = dir.appendingPathComponent("bench-\(options.count)").path
            let bench = try run(["bench", "--store", store, "--scale", "small", "--repetitions", "1", "--out", out, "model-fetch-all", "model-traverse"] + options)
            XCTAssertEqual(bench.status, 0, bench.stderr)
            let results = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/results.json"))) as? [String: Any])
            let scenarios = try XCTUnwrap(results["scenarios"] as? [[String: Any]])
            XCTAssertEqual(scenarios.map { $0["status"] as? String }, ["ran", "ran"], bench.stdout)
            XCTAssertTrue(bench.stdout.contains("fetch all Post"), bench.stdout)
            // The real store's 7,995 colours: each traversal without prefetching faults every one.
            XCTAssertTrue(bench.stdout.contains("7995 faults"), bench.stdout)
        }
        let explain = try run(["explain", "--store", store, "Post", "postID == 'x'"])
        XCTAssertEqual(explain.status, 0, explain.stderr)
        XCTAssertTrue(explain.stdout.contains("suggestion: CREATE INDEX ZPOST_ZPOSTID ON ZPOST (ZPOSTID)"), explain.stdout)
        XCTAssertTrue(explain.stdout.contains("SEARCH t0 USING INDEX ZPOST_ZPOSTID"), explain.stdout)
        // A trace of fetches on the real store, reported with the store alone: its full scan is proven on a copy.
        let trace = dir.appendingPathComponent("app.jsonl").path
        let traced = try run(["query", "--store", store, "Post", "postID == 'x'", "--result", "count"], environment: ["FAULTLINE_TRACE": trace])
        XCTAssertEqual(traced.status, 0, traced.stderr)
        let report = try run(["report", trace, "--store", store, "--small-table", "1", "-o", dir.appendingPathComponent("report.html").path])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.contains("CREATE INDEX ZPOST_ZPOSTID ON ZPOST (ZPOSTID) — proven on a scratch copy"), report.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "the store is unchanged")
        for suffix in ["-wal", "-shm", "-journal"] { XCTAssertFalse(FileManager.default.fileExists(atPath: store + suffix)) }
    }

    /// `faultline report` on a copied Xcode console: the HTML report, `--json` findings, and with `--store` (the
    /// model the store caches) plans for a level-1 log's statements and proven indexes; `compare` on two logs.
    func testReportOnACoreDataConsoleLog() throws {
        let log = try write("console.txt", """
        2023-10-12 18:22:01.004512+0200 Posts[812:40455] CoreData: annotation: Connecting to sqlite database file at "/data/Posts.sqlite"
        CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZDATE, t0.ZPOSTID, t0.ZCOLOR FROM ZPOST t0 WHERE  t0.ZPOSTID = ? 
        CoreData: annotation: sql connection fetch time: 0.0040s
        CoreData: annotation: total fetch execution time: 0.0042s for 1 rows.
        user tapped a row
        """ + (1...12).map { """

        CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZHEX, t0.ZPOST FROM ZCOLOR t0 WHERE  t0.Z_PK = ? 
        CoreData: annotation: sql connection fetch time: 0.0003s
        CoreData: annotation: total fetch execution time: 0.0004s for 1 rows.
        CoreData: annotation: fault fulfilled from database for : 0x8f1c2d0a <x-coredata://95E4B0A1-CBFB-4257-B10B-EE64F7558656/Color/p\($0)>
        """ }.joined() + "\n")
        let html = dir.appendingPathComponent("log.html").path
        let report = try run(["report", log, "-o", html])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.contains("N+1 faults: Color: 12 faults fulfilled one at a time"), report.stdout)
        XCTAssertTrue(report.stdout.contains("a Core Data SQL debug log: 52 Core Data lines, 1 other line"), report.stdout)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        XCTAssertTrue(page.contains("Findings") && page.contains("Statements by fingerprint") && page.contains("Core Data SQL debug log"))

        let json = try run(["report", log, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let findings = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let storm = try XCTUnwrap(findings.first { $0["kind"] as? String == "N+1 faults" })
        XCTAssertEqual(storm["entity"] as? String, "Color")
        XCTAssertEqual(storm["count"] as? Int, 12)
        XCTAssertEqual(storm["severity"] as? String, "high")
        XCTAssertEqual((storm["lines"] as? [Int])?.first, 6, "the first fault's SELECT")
        XCTAssertTrue(storm["callSite"] is NSNull)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("report.html").path), "--json alone writes no page")

        let fixtures = fixturesFolder
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent: the store part is not checked") }
        let store = dir.appendingPathComponent("Posts.sqlite").path
        try FileManager.default.copyItem(atPath: fixtures.appendingPathComponent("wibosco-migration/CoreDataMigration_Example_3.sqlite").path, toPath: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let planned = try run(["report", log, "--store", store, "--json"])
        XCTAssertEqual(planned.status, 0, planned.stderr)
        let proven = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(planned.stdout.utf8)) as? [[String: Any]])
        let scan = try XCTUnwrap(proven.first { $0["kind"] as? String == "full table scan" }, planned.stdout)
        XCTAssertTrue((scan["fix"] as? String)?.hasPrefix("CREATE INDEX ZPOST_ZPOSTID ON ZPOST (ZPOSTID) — proven on a scratch copy of Posts.sqlite") == true, "\(scan)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before)

        // The CI gate: --fail-on exits 1 while a finding of the kinds remains; an allow file can name the statement.
        let gate = try run(["report", log, "--store", store, "--json", "--fail-on", "full-scan,n-plus-one"])
        XCTAssertEqual(gate.status, 1)
        XCTAssertTrue(gate.stderr.hasPrefix("faultline report: 2 findings of the kinds --fail-on names (full-scan, n-plus-one)"), gate.stderr)
        let allowFile = try write("allow.txt", """
            # known and accepted
            fingerprint SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZDATE, t0.ZPOSTID, t0.ZCOLOR FROM ZPOST t0 WHERE t0.ZPOSTID = ?

            """)
        let allowed = try run(["report", log, "--store", store, "--json", "--fail-on", "full-scan", "--allow-file", allowFile])
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        let unknown = try run(["report", log, "--fail-on", "slow"])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("--fail-on: unknown kind 'slow'"), unknown.stderr)

        let compare = try run(["compare", log, log])
        XCTAssertEqual(compare.status, 0, compare.stderr + compare.stdout)
    }

    /// `faultline query` prints every object of every entity of every fixture store with the values SQLite holds
    /// for its row: text and integers as stored, booleans as 0/1, dates as the stored seconds since 2001, UUIDs as
    /// their 16 bytes, binary data as its bytes, to-ones as the stored key. Once with the model bundle, once with the
    /// model the store caches.
    func testEveryObjectPrintsTheValuesSQLiteHolds() throws {
        let fixtures = fixturesFolder
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked") }
        var compared = 0
        for testCase in Self.cases {
            let source = fixtures.appendingPathComponent(testCase.store)
            let store = dir.appendingPathComponent(source.lastPathComponent).path
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
                try FileManager.default.copyItem(atPath: source.path + suffix, toPath: store + suffix)
            }
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) } }
            let database = try SQLiteReader(path: store)
            let entities = try database.rows("SELECT Z_NAME, Z_ENT, Z_SUPER FROM Z_PRIMARYKEY")
            func root(_ number: Int64) -> String {
                var current = entities.first { $0[1] as? Int64 == number }!
                while let parent = current[2] as? Int64, parent != 0 { current = entities.first { $0[1] as? Int64 == parent }! }
                return current[0] as! String
            }
            let hasCache = !(try database.rows("SELECT name FROM sqlite_master WHERE name = 'Z_MODELCACHE'")).isEmpty
            for entity in entities {
                let storedName = entity[0] as! String
                let table = "Z" + root(entity[1] as! Int64).uppercased()
                let columns = Set(try database.rows("SELECT name FROM pragma_table_info('\(table)')").map { $0[0] as! String })
                // A renamed entity keeps its old name in Z_PRIMARYKEY; the query names the model's entity.
                var modelOptions = [["--model", fixtures.appendingPathComponent(testCase.bundle).path]]
                if hasCache { modelOptions.append([]) }
                for options in modelOptions {
                    var name = storedName
                    if testCase.store.hasSuffix("SampleModel_V2.sqlite") && name == "ExpensiveSportCar" { name = "LuxuryCar" }
                    let result = try run(["query", "--store", store, name, "--format", "json"] + options)
                    XCTAssertEqual(result.status, 0, "\(testCase.store) \(name): \(result.stderr)")
                    let objects = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
                    let expected = try database.rows("SELECT count(*) FROM \(table) WHERE Z_ENT = ?", [entity[1]!])[0][0] as! Int64
                    XCTAssertEqual(objects.filter { $0["@entity"] as? String == name }.count, Int(expected), "\(testCase.store) \(name)")
                    for object in objects where object["@entity"] as? String == name {
                        let id = object["@id"] as! String
                        let key = Int64(id.split(separator: "/").last!.dropFirst())!
                        let row = try database.rows("SELECT * FROM \(table) WHERE Z_PK = ?", [key])
                        let names = try database.columnNames("SELECT * FROM \(table)")
                        XCTAssertEqual(row.count, 1, id)
                        for (property, printed) in object where !property.hasPrefix("@") {
                            let column = "Z" + property.uppercased()
                            guard columns.contains(column), let index = names.firstIndex(of: column) else { continue } // to-many or transient
                            try assertSame(printed, row[0][index], "\(testCase.store) \(id) \(property)")
                            compared += 1
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(compared, 50_000, "values compared")
    }

    private func assertSame(_ printed: Any, _ stored: Any?, _ what: String) throws {
        switch stored {
        case nil:
            XCTAssertTrue(printed is NSNull, "\(what): \(printed) where SQLite holds NULL")
        case let text as String:
            XCTAssertEqual(printed as? String, text, what)
        case let integer as Int64:
            if let uri = printed as? String, uri.hasPrefix("x-coredata://") {
                XCTAssertTrue(uri.hasSuffix("/p\(integer)"), "\(what): \(uri) for key \(integer)")
            } else {
                XCTAssertEqual((printed as? NSNumber)?.int64Value, integer, what)
            }
        case let real as Double:
            if let text = printed as? String {
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                let date = try XCTUnwrap(formatter.date(from: text), what)
                XCTAssertEqual(date.timeIntervalSinceReferenceDate, real, accuracy: 0.001, what)
            } else {
                XCTAssertEqual((printed as? NSNumber)?.doubleValue, real, what)
            }
        case let bytes as Data:
            let text = try XCTUnwrap(printed as? String, what)
            if bytes.count == 16, let uuid = UUID(uuidString: text) {
                XCTAssertEqual(withUnsafeBytes(of: uuid.uuid) { Data($0) }, bytes, what)
            } else {
                XCTAssertEqual(Data(base64Encoded: text), bytes, what)
            }
        default:
            XCTFail("\(what): unexpected stored value \(String(describing: stored))")
        }
    }
}

/// Reads a store with SQLite's C API directly, as `sqlite3` shows it.
final class SQLiteReader {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw CocoaError(.fileReadCorruptFile) }
    }

    deinit { sqlite3_close_v2(handle) }

    func rows(_ sql: String, _ bindings: [Any] = []) throws -> [[Any?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw CocoaError(.fileReadCorruptFile) }
        defer { sqlite3_finalize(statement) }
        for (i, value) in bindings.enumerated() { sqlite3_bind_int64(statement, Int32(i + 1), value as! Int64) }
        var result: [[Any?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append((0..<sqlite3_column_count(statement)).map { column -> Any? in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: return sqlite3_column_int64(statement, column)
                case SQLITE_FLOAT: return sqlite3_column_double(statement, column)
                case SQLITE_TEXT: return String(cString: sqlite3_column_text(statement, column))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    return count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, column), count: count)
                default: return nil
                }
            })
        }
        return result
    }

    func columnNames(_ sql: String) throws -> [String] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw CocoaError(.fileReadCorruptFile) }
        defer { sqlite3_finalize(statement) }
        return (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
    }
}
