import CSQLite
import Foundation
import XCTest

/// `faultline migrate` as a user runs it: the plan, the migration, a refusal that changes nothing, and a migration
/// killed at any moment leaving the old store or the new one, never a mixture.
final class MigrateCLITests: CLITestCase {
    /// A two-version bundle: version 2 adds a required Integer 32 with a default and renames `title` to `heading`.
    func shopBundle() throws -> String {
        let bundle = dir.appendingPathComponent("Shop.xcdatamodeld")
        let versions = [("Shop.xcdatamodel", """
            <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Integer 64"/></entity>
            """), ("Shop 2.xcdatamodel", """
            <entity name="Item"><attribute name="heading" optional="YES" attributeType="String" elementID="title"/>
              <attribute name="price" optional="YES" attributeType="Integer 64"/><attribute name="stock" attributeType="Integer 32" defaultValueString="7"/></entity>
            """)]
        for (name, entities) in versions {
            let folder = bundle.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?><model type=\"com.apple.IDECoreDataModeler.DataModel\">\(entities)</model>".utf8)
                .write(to: folder.appendingPathComponent("contents"))
        }
        try Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Shop 2.xcdatamodel</string></dict></plist>"#.utf8)
            .write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle.path
    }

    /// A version-1 store of `count` items (loaded, then multiplied in SQL).
    func shopStore(_ bundle: String, count: Int) throws -> String {
        let store = dir.appendingPathComponent("shop.sqlite").path
        let data = try write("items.json", #"{"Item": [{"title": "seed", "price": 1}]}"#)
        let load = try run(["load", "--model", bundle + "/Shop.xcdatamodel", "--store", store, data])
        XCTAssertEqual(load.status, 0, load.stderr)
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        let sql = """
            WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZPRICE, ZTITLE) SELECT i, 1, 1, i * 3, 'item ' || i FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(count) WHERE Z_ENT = 1;
            PRAGMA wal_checkpoint(TRUNCATE);
            """
        XCTAssertEqual(sqlite3_exec(db, sql, nil, nil, nil), SQLITE_OK)
        return store
    }

    /// A version that adds a derived attribute (`pages.@count`): the new store gets its triggers, which compute the
    /// value for the rows copied (the plan says "derived", not "defaulted").
    func testAnAddedDerivedAttributeIsComputedByTheNewStoresTriggers() throws {
        let bundle = dir.appendingPathComponent("Library.xcdatamodeld")
        let book = #"<attribute name="title" optional="YES" attributeType="String"/>"#
        let rest = #"<relationship name="pages" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Page" inverseName="book" inverseEntity="Page"/></entity><entity name="Page"><attribute name="number" optional="YES" attributeType="Integer 64"/><relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book"/></entity>"#
        let derived = #"<attribute name="pagesCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="pages.@count"/>"#
        for (name, attributes) in [("Library.xcdatamodel", book), ("Library 2.xcdatamodel", book + derived)] {
            let folder = bundle.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(#"<?xml version="1.0" encoding="UTF-8"?><model type="com.apple.IDECoreDataModeler.DataModel"><entity name="Book">\#(attributes)\#(rest)</model>"#.utf8)
                .write(to: folder.appendingPathComponent("contents"))
        }
        try Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Library 2.xcdatamodel</string></dict></plist>"#.utf8)
            .write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let data = try write("books.json", #"{"Book":[{"@id":"a","title":"A","pages":["p1","p2"]},{"title":"B"}],"Page":[{"@id":"p1","number":1},{"@id":"p2","number":2}]}"#)
        XCTAssertEqual(try run(["load", "--model", bundle.path + "/Library.xcdatamodel", "--store", "books.sqlite", data]).status, 0)
        let migrate = try run(["migrate", "--model", bundle.path, "--store", "books.sqlite"])
        XCTAssertEqual(migrate.status, 0, migrate.stderr)
        XCTAssertTrue(migrate.stdout.contains("   values: derived Book.pagesCount 2\n"), migrate.stdout)
        let counts = try run(["query", "--model", bundle.path, "--store", "books.sqlite", "Book", "--sort", "title", "--result", "dictionary", "--properties", "pagesCount"])
        XCTAssertEqual(counts.stdout.filter { !$0.isWhitespace }, #"[{"pagesCount":2},{"pagesCount":0}]"#, counts.stderr)
    }

    /// A row Core Data never writes (an unknown Z_ENT, a negative key) would be left behind or copied: the dry run and
    /// the migration both refuse the store, naming the row, and leave it as it was.
    func testADamagedStoreIsRefusedByTheDryRunAndTheMigration() throws {
        let bundle = try shopBundle()
        for (sql, message) in [("UPDATE ZITEM SET Z_ENT = 9 WHERE Z_PK = 3", "table ZITEM, column Z_ENT, the row with Z_PK 3: 9 — an entity number here must be 1 (Item)"),
                               ("UPDATE ZITEM SET Z_PK = -3 WHERE Z_PK = 3", "table ZITEM, column Z_PK, the row with Z_PK -3: -3"),
                               ("UPDATE ZITEM SET Z_OPT = 2.5 WHERE Z_PK = 3", "table ZITEM, column Z_OPT, the row with Z_PK 3: the real 2.5")] {
            try? FileManager.default.removeItem(at: dir.appendingPathComponent("shop.sqlite"))
            let store = try shopStore(bundle, count: 20)
            var db: OpaquePointer?
            XCTAssertEqual(sqlite3_open(store, &db), SQLITE_OK)
            XCTAssertEqual(sqlite3_exec(db, sql + "; PRAGMA wal_checkpoint(TRUNCATE);", nil, nil, nil), SQLITE_OK)
            sqlite3_close(db)
            let before = try Data(contentsOf: URL(fileURLWithPath: store))
            for arguments in [["--dry-run"], []] {
                let result = try run(["migrate", "--model", bundle, "--store", store] + arguments)
                XCTAssertEqual(result.status, 1, "\(sql) \(arguments): \(result.stdout)")
                XCTAssertTrue(result.stderr.hasPrefix("faultline migrate: the store is damaged: \(message)"), "\(sql): \(result.stderr)")
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "\(sql) \(arguments): the store is left as it was")
            }
        }
    }

    /// A store whose version hashes are no version's (here: a Faultline store made to look like Core Data's, its hashes
    /// changed) is found by its tables alone, a guess: the dry run and the migration refuse it until the user names
    /// the version (`--from`), which must still fit the store.
    func testAVersionFoundByItsLayoutAloneIsNotMigratedFromWithoutFrom() throws {
        let bundle = try shopBundle()
        let store = try shopStore(bundle, count: 10)
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        var select: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, "SELECT Z_PLIST FROM Z_METADATA", -1, &select, nil), SQLITE_OK)
        XCTAssertEqual(sqlite3_step(select), SQLITE_ROW)
        let stored = Data(bytes: sqlite3_column_blob(select, 0), count: Int(sqlite3_column_bytes(select, 0)))
        sqlite3_finalize(select)
        var plist = try XCTUnwrap(PropertyListSerialization.propertyList(from: stored, format: nil) as? [String: Any])
        plist["FaultlineStoreFormat"] = nil
        plist["NSStoreModelVersionHashes"] = (plist["NSStoreModelVersionHashes"] as? [String: Data])?.mapValues { Data($0.reversed()) }
        let rewritten = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        var update: OpaquePointer?
        XCTAssertEqual(sqlite3_prepare_v2(db, "UPDATE Z_METADATA SET Z_PLIST = ?", -1, &update, nil), SQLITE_OK)
        _ = rewritten.withUnsafeBytes { sqlite3_bind_blob(update, 1, $0.baseAddress, Int32($0.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self)) }
        XCTAssertEqual(sqlite3_step(update), SQLITE_DONE)
        sqlite3_finalize(update)
        XCTAssertEqual(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil), SQLITE_OK)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let info = try run(["info", store, "--model", bundle, "--json"])
        XCTAssertTrue(info.stdout.contains(#""identifiedBy" : "layout""#), info.stdout)
        for arguments in [["--dry-run"], []] {
            let refused = try run(["migrate", "--model", bundle, "--store", store] + arguments)
            XCTAssertEqual(refused.status, 1, refused.stdout)
            XCTAssertTrue(refused.stderr.contains("the store's version was found by its tables alone ('Shop' fits them, but the store's NSStoreModelVersionHashes are no version's, and it caches no model whose hashes are): a guess; give the version it was made with (--from VERSION)"), refused.stderr)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "\(arguments): nothing written")
        }
        let wrong = try run(["migrate", "--model", bundle, "--store", store, "--from", "Shop 2"])
        XCTAssertEqual(wrong.status, 1, "the named version must fit the store")
        XCTAssertTrue(wrong.stderr.contains("migration needed") || wrong.stderr.contains("different model"), wrong.stderr)
        let migrated = try run(["migrate", "--model", bundle, "--store", store, "--from", "Shop"])
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(migrated.stdout.hasSuffix("migrated \(store) to 'Shop 2'\n"), migrated.stdout)
    }

    /// A version that removes an attribute holding values: the migration refuses to drop them unless told
    /// (--allow-loss), writing nothing; the dry run says how many and exits 1; with --allow-loss both go.
    func testDroppedValuesAreCountedAndNeedAllowLoss() throws {
        let bundle = try shopBundle()
        let store = try shopStore(bundle, count: 30)
        // Version 3 drops the price every item has.
        let version3 = URL(fileURLWithPath: bundle).appendingPathComponent("Shop 3.xcdatamodel")
        try FileManager.default.createDirectory(at: version3, withIntermediateDirectories: true)
        try Data(#"<?xml version="1.0" encoding="UTF-8"?><model type="com.apple.IDECoreDataModeler.DataModel"><entity name="Item"><attribute name="heading" optional="YES" attributeType="String"/><attribute name="stock" attributeType="Integer 32" defaultValueString="7"/></entity></model>"#.utf8)
            .write(to: version3.appendingPathComponent("contents"))
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let dry = try run(["migrate", "--model", bundle, "--store", store, "--to", "Shop 3", "--dry-run"])
        XCTAssertEqual(dry.status, 1, dry.stderr)
        XCTAssertTrue(dry.stdout.contains("2. 'Shop 2' → 'Shop 3' (inferred)\n   entity Item: - price\n   rows: Item 30\n   values: dropped Item.price 30\n"), dry.stdout)
        XCTAssertTrue(dry.stdout.hasSuffix("(it drops 30 values: the migration runs only with --allow-loss)\n"), dry.stdout)
        let refused = try run(["migrate", "--model", bundle, "--store", store, "--to", "Shop 3"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("from 'Shop 2' to 'Shop 3': the migration would drop values (dropped Item.price 30); nothing was written: migrate with --allow-loss to drop them"), refused.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "nothing written")
        XCTAssertEqual(try run(["migrate", "--model", bundle, "--store", store, "--to", "Shop 3", "--dry-run", "--allow-loss"]).status, 0)
        let migrated = try run(["migrate", "--model", bundle, "--store", store, "--to", "Shop 3", "--allow-loss"])
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(migrated.stdout.contains("values: dropped Item.price 30"), migrated.stdout)
    }

    func testMigrateDryRunThenMigrate() throws {
        let bundle = try shopBundle()
        let store = try shopStore(bundle, count: 500)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let plan = try run(["migrate", "--model", bundle, "--store", store, "--dry-run"])
        XCTAssertEqual(plan.status, 0, plan.stderr)
        XCTAssertEqual(plan.stdout, """
            migration of the store from version 'Shop' to 'Shop 2' in 1 step:
            1. 'Shop' → 'Shop 2' (inferred)
               entity Item: title → heading, + stock
               rows: Item 500
               values: defaulted Item.stock 500
            dry run: the whole migration ran on a scratch copy of the store, which is gone; the store is as it was

            """)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "a dry run writes nothing")
        let trace = dir.appendingPathComponent("migration.jsonl").path
        let migrated = try run(["migrate", "--model", bundle, "--store", store], environment: ["FAULTLINE_MIGRATIONDEBUG": "1", "FAULTLINE_TRACE": trace])
        XCTAssertEqual(migrated.status, 0, migrated.stderr)
        XCTAssertTrue(migrated.stderr.hasPrefix("Faultline: annotation: migration: step 1 of 1: 'Shop' → 'Shop 2' (inferred), writing .shop.sqlite.migrating-1\n"
                                                + "Faultline: annotation: migration: Item: 500 rows copied\n"), migrated.stderr)
        XCTAssertTrue(migrated.stdout.hasSuffix("migrated \(store) to 'Shop 2'\n"), migrated.stdout)
        // The trace has the step's migration event, and the report shows it.
        let events = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains(#""type":"migration""#) }
        XCTAssertEqual(events.count, 1)
        XCTAssertTrue(events[0].contains(#""step":1,"from":"Shop","to":"Shop 2","entity":"Item","rows":500,"statements":501"#), String(events[0]))
        let report = try run(["report", trace, "-o", dir.appendingPathComponent("migration.html").path])
        XCTAssertEqual(report.status, 0, report.stderr)
        let page = try String(contentsOf: dir.appendingPathComponent("migration.html"), encoding: .utf8)
        XCTAssertTrue(page.contains("<h3>Migration</h3>") && page.contains("<td>step 1: &#39;Shop&#39; → &#39;Shop 2&#39;</td><td>Item</td><td class=n>500</td>"), page)
        let query = try run(["query", "--model", bundle, "--store", store, "Item", "heading == 'item 42'"])
        XCTAssertEqual(query.status, 0, query.stderr)
        XCTAssertTrue(query.stdout.contains(#""heading": "item 42", "price": 126, "stock": 7"#), query.stdout)
        let again = try run(["migrate", "--model", bundle, "--store", store])
        XCTAssertEqual(again.stdout, "the store is at version 'Shop 2' already: nothing to migrate\n")
        let bad = try run(["migrate", "--model", bundle + "/Shop.xcdatamodel", "--store", store])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("--model must be an .xcdatamodeld or .momd bundle"), bad.stderr)
    }

    /// kill -9 at moments spread over a migration: each time the store opens, whole, as version 1 or version 2,
    /// with every item; the next migration finishes the job.
    func testAMigrationKilledAtAnyMomentLeavesTheOldStoreOrTheNew() throws {
        let bundle = try shopBundle()
        let count = 200_000
        let store = try shopStore(bundle, count: count)
        var outcomes: [String] = []
        for delay in [0.05, 0.15, 0.3, 0.6, 1.0, 1.6] {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["migrate", "--model", bundle, "--store", store]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            var db: OpaquePointer?
            XCTAssertEqual(sqlite3_open_v2(store, &db, SQLITE_OPEN_READONLY, nil), SQLITE_OK)
            var check: OpaquePointer?
            sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, nil)
            XCTAssertEqual(sqlite3_step(check), SQLITE_ROW)
            XCTAssertEqual(String(cString: sqlite3_column_text(check, 0)), "ok", "after a kill at \(delay) s")
            sqlite3_finalize(check)
            sqlite3_close(db)
            let counted = try run(["query", "--model", bundle, "--store", store, "Item", "--result", "count"])
            XCTAssertEqual(counted.status, 0, "after a kill at \(delay) s: \(counted.stderr)")
            XCTAssertEqual(counted.stdout, "{\"count\": \(count)}\n", "after a kill at \(delay) s")
            outcomes.append(counted.stderr.contains("version 'Shop'") ? "old" : "new")
            if outcomes.last == "new" { break }
        }
        let finished = try run(["migrate", "--model", bundle, "--store", store])
        XCTAssertEqual(finished.status, 0, finished.stderr)
        let counted = try run(["query", "--model", bundle, "--store", store, "Item", "stock == 7", "--result", "count"])
        XCTAssertEqual(counted.stdout, "{\"count\": \(count)}\n", counted.stderr)
        XCTAssertEqual(counted.stderr, "", "version 2 now")
        XCTAssertTrue(outcomes.contains("old"), "some kill came before the swap: \(outcomes)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains("migrating") }
        XCTAssertEqual(left, [], "a finished migration leaves no scratch store, not even those of killed ones")
    }
}
