import CSQLite
import Foundation
import XCTest

/// `faultline info`: what a store holds and how its version was found, never writing the store.
final class InfoCLITests: CLITestCase {
    var fixtures: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("shared/fixtures/coredata-stores")
    }

    /// A copy of a fixture store (with its -wal and -shm) in the test's folder, and its files' bytes.
    func copy(_ name: String) throws -> (String, [String: Data]) { try copyFixtureStore(name) }

    func json(_ result: Run) throws -> [String: Any] {
        XCTAssertEqual(result.status, 0, result.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// A store no version of the bundle wrote, but whose cached model did (SampleModel version 1's store, a bundle
    /// holding only version 2): `info` and `migrate` identify it the same way — through the model it caches, which
    /// has the store's hashes — and `info` says no version of the bundle wrote it.
    func testInfoAndMigrateIdentifyAStoreWrittenByItsCachedModelAlike() throws {
        let (store, files) = try copy("coredataplus-samplemodel/SampleModel_V1.sqlite")
        let bundle = dir.appendingPathComponent("Only.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent("coredataplus-samplemodel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"),
                                         to: bundle.appendingPathComponent("SampleModel2.xcdatamodel"))
        let found = try json(run(["info", store, "--model", bundle.path, "--json"]))
        XCTAssertEqual(found["identifiedBy"] as? String, "cache")
        XCTAssertTrue(found["version"] is NSNull, "\(found["version"] ?? "none")")
        XCTAssertEqual(found["model"] as? String, "the model the store caches (Z_MODELCACHE), which wrote it: no version of bundle \(bundle.path) did")
        let text = try run(["info", store, "--model", bundle.path])
        XCTAssertTrue(text.stdout.contains("identified from the model the store caches, the one that wrote it"), text.stdout)
        XCTAssertFalse(text.stdout.contains("no model could be used"), text.stdout)
        for (suffix, data) in files { XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), data, "info writes nothing") }
        let migrate = try run(["migrate", "--model", bundle.path, "--store", store, "--dry-run", "--allow-loss"])
        XCTAssertEqual(migrate.status, 0, migrate.stderr)
        XCTAssertTrue(migrate.stdout.contains("the model the store caches"), migrate.stdout)
    }

    func testTheVersionAndHowItWasFoundWithEveryKindOfModel() throws {
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked") }
        let folder = fixtures.appendingPathComponent("coredataplus-samplemodel").path
        for (name, version) in [("SampleModel_V1.sqlite", "SampleModel"), ("SampleModel_V2.sqlite", "SampleModel2")] {
            let (store, files) = try copy("coredataplus-samplemodel/" + name)
            // A compiled bundle (its VersionInfo.plist) and the source bundle (hashed here): Core Data's hashes.
            for bundle in ["SampleModel.momd", "SampleModel.xcdatamodeld"] {
                let found = try json(run(["info", store, "--model", folder + "/" + bundle, "--json"]))
                XCTAssertEqual(found["version"] as? String, version, bundle)
                XCTAssertEqual(found["identifiedBy"] as? String, "hashes", bundle)
            }
            // Version 1's model file: V1's store by its hashes; V2's store is not its version, and says so.
            let text = try run(["info", store, "--model", folder + "/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"])
            XCTAssertEqual(text.status, 0, text.stderr)
            XCTAssertTrue(text.stdout.contains(version == "SampleModel" ? "identified by its version hashes: the store's are the model's" : "version: not identified: no model could be used"), text.stdout)
            let cached = try json(run(["info", store, "--json"]))
            XCTAssertEqual(cached["identifiedBy"] as? String, "cache")
            // Whether the cached model's Core Data hashes are the store's is said, in JSON and in words.
            let agree = try XCTUnwrap(cached["hashesAgree"] as? Bool)
            let cachedText = try run(["info", store]).stdout
            XCTAssertEqual(cachedText.contains("note: Core Data's hashes computed from the cached model are not the store's"), !agree, cachedText)
            // Rows per entity, as SQLite counts them.
            let entities = try XCTUnwrap(cached["entities"] as? [[String: Any]])
            let car = try XCTUnwrap(entities.first { $0["name"] as? String == "Car" })
            XCTAssertEqual(car["rows"] as? Int, 115)
            XCTAssertEqual(car["rowsWithSubentities"] as? Int, 125)
            XCTAssertEqual(entities.first { $0["name"] as? String == "Person" }?["rows"] as? Int, 20)
            XCTAssertEqual((cached["metadata"] as? [String: Any])?["NSStoreType"] as? String, "SQLite")
            for (suffix, data) in files {
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), data, "\(name)\(suffix) is left as it was")
            }
        }
        let (wibosco, _) = try copy("wibosco-migration/CoreDataMigration_Example_3.sqlite")
        XCTAssertEqual(try json(run(["info", wibosco, "--json"]))["hashesAgree"] as? Bool, true)
        // Persistent history and a WAL store.
        let (history, files) = try copy("coredataplus-samplemodel2/SampleModel2_V1.sqlite")
        let info = try run(["info", history])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("persistent history: ATRANSACTION 1 row, ACHANGE 5468 rows, ATRANSACTIONSTRING 2 rows"), info.stdout)
        XCTAssertTrue(info.stdout.contains("journal mode wal"), info.stdout)
        XCTAssertTrue(info.stdout.contains("    Author        Z_ENT 6  2 rows"), info.stdout)
        for (suffix, data) in files { XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: history + suffix)), data) }
        // A derived attribute, a to-many built in code (max count -1), SwiftData's composite attributes: the cached
        // models hash as Core Data hashed them.
        XCTAssertEqual(try json(run(["info", history, "--json"]))["hashesAgree"] as? Bool, true)
        let (swiftData, _) = try copy("swiftdata-metacocktails/PreloadedCocktails.store")
        let cocktails = try json(run(["info", swiftData, "--json"]))
        XCTAssertEqual(cocktails["hashesAgree"] as? Bool, true)
        XCTAssertEqual(cocktails["identifiedBy"] as? String, "cache")
        XCTAssertEqual(cocktails["entitiesWithOtherHashes"] as? [String], [])
        // A store that caches no model (rows all in the -wal): what it holds, from Z_PRIMARYKEY.
        for (name, line) in [("flickrsearcher/starter_database.sqlite", "  Photo  Z_ENT 1  109 rows\n")] {
            let (store, files) = try copy(name)
            let result = try run(["info", store])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.contains(line) && result.stdout.contains("version: not identified"), result.stdout)
            for (suffix, data) in files { XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), data, "\(name)\(suffix)") }
        }
    }

    func testRowsOfNoEntityAndTheStoresOwnFacts() throws {
        let model = try write("shop.json", #"{"entities": [{"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "photo", "type": "binary", "allowsExternalStorage": true}]}]}"#)
        let load = try run(["load", "--model", model, "--store", "shop.sqlite", try write("items.json", #"{"Item": [{"title": "a"}, {"title": "b"}, {"title": "c"}]}"#)])
        XCTAssertEqual(load.status, 0, load.stderr)
        let store = dir.appendingPathComponent("shop.sqlite").path
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store, &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, "UPDATE ZITEM SET Z_ENT = 7 WHERE Z_PK = 3; PRAGMA wal_checkpoint(TRUNCATE);", nil, nil, nil), SQLITE_OK)
        sqlite3_close(db)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let text = try run(["info", store, "--model", model])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("  Item  Z_ENT 1  2 rows\n  ZITEM: 1 row with Z_ENT 7, which names no entity of the model\n"), text.stdout)
        // Faultline's own store: its Faultline hashes, compared on opening, are the model's.
        XCTAssertTrue(text.stdout.contains("identified by its version hashes: the store's are the model's"), text.stdout)
        XCTAssertTrue(text.stdout.contains("persistent history: none\nexternal storage: none\n"), text.stdout)
        let object = try json(run(["info", store, "--model", model, "--json"]))
        XCTAssertEqual((object["unknownRows"] as? [[String: Any]])?.first?["entityNumber"] as? Int, 7)
        XCTAssertEqual(object["fileBytes"] as? Int, before.count)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "info never writes")
        // Without a model (Faultline's stores cache none): the entities and rows from Z_PRIMARYKEY, and why.
        let bare = try run(["info", store])
        XCTAssertEqual(bare.status, 0, bare.stderr)
        XCTAssertTrue(bare.stdout.contains("model: none: the store caches no model"), bare.stdout)
        XCTAssertTrue(bare.stdout.contains("version: not identified: no model could be used; the entities are Z_PRIMARYKEY's\n"), bare.stdout)
        XCTAssertTrue(bare.stdout.contains("  Item  Z_ENT 1  2 rows\n  ZITEM: 1 row with Z_ENT 7"), bare.stdout)
        let bareJSON = try json(run(["info", store, "--json"]))
        XCTAssertTrue(bareJSON["identifiedBy"] is NSNull)
        XCTAssertTrue((bareJSON["modelProblem"] as? String)?.hasPrefix("the store caches no model") == true)
        // A Z_PRIMARYKEY name that is not an identifier (a hostile store's) is counted as a name, never run as SQL.
        let odd = dir.appendingPathComponent("odd.sqlite").path
        try FileManager.default.copyItem(atPath: store, toPath: odd)
        var oddDB: OpaquePointer?
        XCTAssertEqual(sqlite3_open(odd, &oddDB), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(oddDB, #"INSERT INTO Z_PRIMARYKEY VALUES (9, 'Q" UNION SELECT 5, 5 --', 0, 0); CREATE TABLE "ZQ"" UNION SELECT 5, 5 --" (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER); INSERT INTO "ZQ"" UNION SELECT 5, 5 --" VALUES (1, 9, 1);"#, nil, nil, nil), SQLITE_OK)
        sqlite3_close(oddDB)
        let oddInfo = try run(["info", odd])
        XCTAssertEqual(oddInfo.status, 0, oddInfo.stderr)
        XCTAssertTrue(oddInfo.stdout.contains(#"  Q" UNION SELECT 5, 5 --  Z_ENT 9  1 row"#), oddInfo.stdout)
        // Parents that loop (an entity its own parent, two each other's) and a repeated name: each listed once.
        XCTAssertEqual(sqlite3_open(odd, &oddDB), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(oddDB, "INSERT INTO Z_PRIMARYKEY VALUES (10, 'Loop', 10, 0), (11, 'Ping', 12, 0), (12, 'Pong', 11, 0), (13, 'Item', 1, 0)", nil, nil, nil), SQLITE_OK)
        sqlite3_close(oddDB)
        let loops = try run(["info", odd, "--json"])
        let listed = try XCTUnwrap(try json(loops)["entities"] as? [[String: Any]]).compactMap { $0["number"] as? Int }
        XCTAssertEqual(listed.sorted(), [1, 9, 10, 11, 12, 13])
        // A model that does not fit: the same, saying what differs.
        let other = try write("other.json", #"{"entities": [{"name": "Item", "attributes": [{"name": "label", "type": "string"}]}]}"#)
        let misfit = try run(["info", store, "--model", other])
        XCTAssertEqual(misfit.status, 0, misfit.stderr)
        XCTAssertTrue(misfit.stdout.contains("was made with a different model (migration needed)"), misfit.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "info never writes")
        let missing = try run(["info", "absent.sqlite"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr, "faultline info: no store at 'absent.sqlite'\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("absent.sqlite").path))
    }
}
