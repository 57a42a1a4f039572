import Foundation
import XCTest
@testable import Faultline

/// Stores that Apple's Core Data wrote (../shared/fixtures/coredata-stores), each opened from a temporary copy with
/// the model version that wrote it.
final class CoreDataStoreTests: XCTestCase {
    struct Case {
        let store: String
        let model: String
        let counts: [String: Int]
    }

    /// Row counts as the fixtures' SUMMARY.txt gives them (sqlite3 on the store, its `-wal` included).
    static let cases: [Case] = [
        Case(store: "bnr-coredatastack/TestModel.sqlite", model: "bnr-coredatastack/Sample.xcdatamodeld/TestModel.xcdatamodel",
             counts: ["Author": 0, "Book": 0]),
        Case(store: "coredataplus-samplemodel/SampleModel_V1.sqlite", model: "coredataplus-samplemodel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel",
             counts: ["Car": 125, "Person": 20]),
        Case(store: "coredataplus-samplemodel/SampleModel_V2.sqlite", model: "coredataplus-samplemodel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel",
             counts: ["Car": 125, "Person": 20]),
        Case(store: "flickrsearcher/starter_database.sqlite", model: "flickrsearcher/FlickrSearcher.xcdatamodeld/FlickrSearcher.xcdatamodel",
             counts: ["Photo": 109, "User": 22]),
        Case(store: "wibosco-migration/CoreDataMigration_Example_1.sqlite",
             model: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example.xcdatamodel", counts: ["Post": 1_001]),
        Case(store: "wibosco-migration/CoreDataMigration_Example_2.sqlite",
             model: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 2.xcdatamodel", counts: ["Post": 5_979]),
        Case(store: "wibosco-migration/CoreDataMigration_Example_3.sqlite",
             model: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 3.xcdatamodel", counts: ["Post": 7_995, "Color": 7_995]),
        Case(store: "wibosco-migration/CoreDataMigration_Example_WAL.sqlite",
             model: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 4.xcdatamodel", counts: ["Post": 84, "Color": 84]),
    ]

    func storesFolder() throws -> URL {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked") }
        return fixtures.appendingPathComponent("coredata-stores")
    }

    /// A copy of `store` (with its `-wal` and `-shm`) in `dir`: the originals are never opened.
    func copy(_ store: URL, into dir: TemporaryDirectory) throws -> URL { try copyStore(store, into: dir) }

    func testEveryFixtureStoreOpensWithItsModelVersionAndCountsItsRows() throws {
        let folder = try storesFolder()
        for testCase in Self.cases {
            let dir = TemporaryDirectory()
            let store = try copy(folder.appendingPathComponent(testCase.store), into: dir)
            let model = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent(testCase.model))
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
            XCTAssertNoThrow(try coordinator.addPersistentStore(at: store, options: .readOnly), testCase.store)
            guard coordinator.storeIdentifier != nil else { continue }
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            for (entity, count) in testCase.counts {
                XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: entity)) }, count,
                               "\(testCase.store): \(entity)")
                // Every object reads: its values decode and its relationships resolve.
                let objects = try context.performAndWait { () -> Int in
                    let request = FetchRequest<ManagedObject>(entityName: entity)
                    request.returnsObjectsAsFaults = false
                    let objects = try context.fetch(request)
                    for object in objects {
                        for property in object.entity.properties { _ = object.value(forKey: property.name) }
                    }
                    return objects.count
                }
                XCTAssertEqual(objects, count, "\(testCase.store): \(entity)")
            }
        }
    }

    /// The store's UUID is the one Core Data kept in `Z_METADATA.Z_UUID`; its object URIs use it.
    func testObjectIDsUseTheStoresUUID() throws {
        let folder = try storesFolder()
        let dir = TemporaryDirectory()
        let store = try copy(folder.appendingPathComponent("coredataplus-samplemodel/SampleModel_V2.sqlite"), into: dir)
        let model = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent("coredataplus-samplemodel/SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: store, options: .readOnly)
        XCTAssertEqual(coordinator.storeIdentifier, "753753D3-A961-4901-AB05-8CC48B1D3853")
        // LuxuryCar was ExpensiveSportCar before a rename: the store keeps that name, the model says so (elementID).
        XCTAssertEqual(model.entity(named: "LuxuryCar")?.renamingIdentifier, "ExpensiveSportCar")
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "LuxuryCar")) }, 5)
    }

    /// A store opened with another version of its model is refused with what differs, entity by entity.
    func testAStoreOpenedWithAnotherVersionNamesTheDifferences() throws {
        let folder = try storesFolder()
        let dir = TemporaryDirectory()
        let store = try copy(folder.appendingPathComponent("coredataplus-samplemodel/SampleModel_V2.sqlite"), into: dir)
        let before = try Data(contentsOf: store)
        let model = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent("coredataplus-samplemodel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"))
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled).addPersistentStore(at: store, options: .readOnly)) { error in
            XCTAssertEqual("\(error)", "the store '\(store.path)' was made with a different model (migration needed): table ZCAR (entity Car) lacks ZCOLOR; table ZPERSON (entity Person) lacks ZID")
        }
        let wibosco = try copy(folder.appendingPathComponent("wibosco-migration/CoreDataMigration_Example_1.sqlite"), into: dir)
        let v3 = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent("wibosco-migration/CoreDataMigration_Example.xcdatamodeld/CoreDataMigration_Example 3.xcdatamodel"))
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: v3, probes: .disabled).addPersistentStore(at: wibosco, options: .readOnly)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("entity 'Color' (Z_ENT 1) is not in the store's Z_PRIMARYKEY") || text.contains("table ZCOLOR (entity Color) is not in the store"), text)
        }
        XCTAssertEqual(try Data(contentsOf: store), before, "a refused store is left as it was")
    }

    /// New stores keep their metadata as Core Data does, a binary property list, with Faultline's own hashes marked
    /// as such; a store with the JSON metadata of earlier builds still opens.
    func testMetadataIsABinaryPropertyListAndOldJSONStillOpens() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let url = dir.file("new.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: url)
        let identifier = try XCTUnwrap(coordinator.storeIdentifier)
        let connection = try SQLiteConnection(path: url.path, create: false)
        let row = try connection.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA")
        XCTAssertTrue(try row.step())
        let plistData = row.data(at: 1)
        XCTAssertEqual(Array(plistData.prefix(8)), Array("bplist00".utf8))
        let plist = try XCTUnwrap(try PropertyListSerialization.propertyList(from: plistData, options: [], format: nil) as? [String: Any])
        XCTAssertEqual(plist["NSStoreType"] as? String, "SQLite")
        XCTAssertEqual(plist["NSStoreUUID"] as? String, identifier)
        XCTAssertEqual(plist["NSStoreModelVersionHashesVersion"] as? Int, 3)
        let hashes = try XCTUnwrap(plist["NSStoreModelVersionHashes"] as? [String: Data])
        XCTAssertEqual(Set(hashes.keys), Set(model.entities.map(\.name)))
        XCTAssertEqual(hashes["Dog"], model.entity(named: "Dog")?.coreDataVersionHash, "Core Data's hashes")
        XCTAssertNotNil(plist["FaultlineStoreFormat"])

        // The JSON an earlier build wrote.
        let json = try JSONSerialization.data(withJSONObject: ["NSStoreType": "SQLite", "NSStoreUUID": identifier, "FaultlineStoreFormat": 1,
                                                               "NSStoreModelVersionHashes": model.versionHashes])
        let update = try connection.prepare("UPDATE Z_METADATA SET Z_PLIST = ?")
        update.bind(json, at: 1)
        try update.execute()
        let reopened = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        XCTAssertNoThrow(try reopened.addPersistentStore(at: url))
        XCTAssertEqual(reopened.storeIdentifier, identifier)
    }

    /// Metadata read without opening the store, as Core Data's `metadataForPersistentStore` does, from a Core Data
    /// store (its own keys and hash bytes) and a Faultline store (custom keys set and read back).
    func testMetadataIsReadAndSetWithoutOpeningTheStore() throws {
        let folder = try storesFolder()
        let dir = TemporaryDirectory()
        let store = try copy(folder.appendingPathComponent("bnr-coredatastack/TestModel.sqlite"), into: dir)
        let before = try Data(contentsOf: store)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(at: store)
        XCTAssertEqual(metadata["NSStoreUUID"] as? String, "E7350B5D-5058-46F7-90B9-DCA517BBAF92")
        XCTAssertEqual(metadata["NSStoreType"] as? String, "SQLite")
        XCTAssertEqual(metadata["NSPersistenceFrameworkVersion"] as? Int, 637)
        XCTAssertEqual(metadata["NSStoreModelVersionHashesVersion"] as? Int, 3)
        let hashes = try XCTUnwrap(metadata["NSStoreModelVersionHashes"] as? [String: Data])
        XCTAssertEqual(hashes["Author"].map { $0.map { String(format: "%02x", $0) }.joined() }, "cbc1f5c274ebf414474c4e350f73b14b1dd356c22782ae7488810d597188c46d")
        XCTAssertEqual(try Data(contentsOf: store), before, "reading metadata changes nothing")
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path + "-shm"))

        let url = dir.file("own.sqlite")
        let model = try makeTestModel()
        try PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled).addPersistentStore(at: url)
        var own = try PersistentStoreCoordinator.metadataForPersistentStore(at: url)
        own["com.example.importedAt"] = Date(timeIntervalSinceReferenceDate: 700_000_000)
        own["com.example.batches"] = [1, 2, 3]
        own.removeValue(forKey: "NSStoreModelVersionHashes")
        try PersistentStoreCoordinator.setMetadata(own, forPersistentStoreAt: url)
        let read = try PersistentStoreCoordinator.metadataForPersistentStore(at: url)
        XCTAssertEqual(read["com.example.importedAt"] as? Date, Date(timeIntervalSinceReferenceDate: 700_000_000))
        XCTAssertEqual(read["com.example.batches"] as? [Int], [1, 2, 3])
        XCTAssertNotNil(read["NSStoreModelVersionHashes"], "the store's own keys are kept")
        XCTAssertNoThrow(try PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled).addPersistentStore(at: url), "the store still opens")
        XCTAssertThrowsError(try PersistentStoreCoordinator.setMetadata(["bad": NSObject()], forPersistentStoreAt: url)) { error in
            XCTAssertEqual("\(error)", "'\(url.path)' is not a Faultline store: the metadata holds a value that is not a property-list value")
        }
        XCTAssertThrowsError(try PersistentStoreCoordinator.metadataForPersistentStore(at: dir.file("none.sqlite")))
    }

    /// Faultline's DDL for a store's model version is the store's own: the same tables with the same columns, types
    /// and order (Core Data's grouping by type), and the same indexes (relationship keys, `Z_ENT`, unique constraints'
    /// `Z_<Entity>_UNIQUE_<attrs>` and named fetch indexes `Z_<Entity>_<name>`), statement for statement.
    func testEachFixtureStoresTablesAndIndexesAreFaultlinesDDLForItsModel() throws {
        let folder = try storesFolder()
        for testCase in Self.cases {
            let dir = TemporaryDirectory()
            let store = try copy(folder.appendingPathComponent(testCase.store), into: dir)
            let model = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent(testCase.model))
            let storeStatements = try Self.schema(of: store, where: "1")
            var ours = Self.statementsByName(SchemaGenerator.statements(for: model))
            // Core Data before macOS 10.12 (framework 519 and older) wrote no Z_MODELCACHE.
            if storeStatements["table Z_MODELCACHE"] == nil { ours["table Z_MODELCACHE"] = nil }
            XCTAssertEqual(storeStatements.keys.sorted(), ours.keys.sorted(), testCase.store)
            for (name, statement) in storeStatements where !name.hasPrefix("table Z_METADATA") && !name.hasPrefix("table Z_MODELCACHE") {
                XCTAssertEqual(ours[name], statement, "\(testCase.store): \(name)")
            }
        }
    }

    /// Stores whose model is only in their `Z_MODELCACHE` (a model built in code, a SwiftData model): Faultline's
    /// DDL for the cached model is the store's, statement for statement, for every table and index of the model's
    /// entities and join tables (persistent history's tables and the derived attribute's triggers are Core Data's
    /// own, beside the model).
    func testCachedModelStoresTablesAndIndexesAreFaultlinesDDL() throws {
        let folder = try storesFolder()
        for name in ["coredataplus-samplemodel2/SampleModel2_V1.sqlite", "coredataplus-samplemodel2/SampleModel2_V2.sqlite",
                     "swiftdata-metacocktails/PreloadedCocktails.store"] {
            let dir = TemporaryDirectory()
            let store = try copy(folder.appendingPathComponent(name), into: dir)
            let model = try XCTUnwrap(ManagedObjectModel.cachedInStore(at: store), name)
            let storeStatements = try Self.schema(of: store, where: "type IN ('table', 'index', 'trigger') AND tbl_name NOT IN ('ATRANSACTION', 'ACHANGE', 'ATRANSACTIONSTRING', 'Z_METADATA', 'Z_MODELCACHE')")
            var ours = Self.statementsByName(SchemaGenerator.statements(for: model))
            ours["table Z_METADATA"] = nil
            ours["table Z_MODELCACHE"] = nil
            XCTAssertEqual(storeStatements.keys.sorted(), ours.keys.sorted(), name)
            for (key, statement) in storeStatements {
                XCTAssertEqual(ours[key], statement, "\(name): \(key)")
            }
        }
    }

    /// The store's `CREATE` statements by "type name", those `condition` selects.
    static func schema(of store: URL, where condition: String) throws -> [String: String] {
        let connection = try SQLiteConnection(path: store.path, create: false, readOnly: true)
        let rows = try connection.prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND (\(condition))")
        var statements: [String: String] = [:]
        while try rows.step() { statements["\(rows.text(at: 0)) \(rows.text(at: 1))"] = rows.text(at: 2) }
        return statements
    }

    /// Faultline's statements by "type name", as `schema(of:where:)` keys them.
    static func statementsByName(_ statements: [String]) -> [String: String] {
        var result: [String: String] = [:]
        for statement in statements {
            if statement.hasPrefix("CREATE TRIGGER IF NOT EXISTS ") {
                // SQLite keeps a trigger's text without IF NOT EXISTS.
                let text = statement.replacingOccurrences(of: "CREATE TRIGGER IF NOT EXISTS ", with: "CREATE TRIGGER ")
                result["trigger \(text.split(separator: " ")[2])"] = text
                continue
            }
            let words = statement.split(separator: " ")
            let isIndex = words[1] == "INDEX" || words[2] == "INDEX"
            result["\(isIndex ? "index" : "table") \(isIndex ? words[words[1] == "INDEX" ? 2 : 3] : words[2])"] = statement
        }
        return result
    }

    /// A new store's metadata has Core Data's keys (all but `NSPersistenceFrameworkVersion`, which names Apple's
    /// framework build), its digest computed as Core Data computes it, and Core Data's incremental auto-vacuum.
    func testNewStoresHaveCoreDatasMetadataKeysAndDigest() throws {
        let folder = try storesFolder()
        let dir = TemporaryDirectory()
        let coreData = try PersistentStoreCoordinator.metadataForPersistentStore(
            at: try copy(folder.appendingPathComponent("coredataplus-samplemodel/SampleModel_V1.sqlite"), into: dir))
        // The digest of Core Data's own hashes reproduces the one Core Data wrote.
        let hashes = try XCTUnwrap(coreData["NSStoreModelVersionHashes"] as? [String: Data])
        XCTAssertEqual(StoreMetadata.digest(of: hashes), coreData["NSStoreModelVersionHashesDigest"] as? String)

        let store = dir.file("new.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(
                loadingContentsOf: folder.appendingPathComponent("coredataplus-samplemodel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel")))
            try coordinator.addPersistentStore(at: store)
        }
        let ours = try PersistentStoreCoordinator.metadataForPersistentStore(at: store)
        XCTAssertEqual(Set(coreData.keys).subtracting(ours.keys), ["NSPersistenceFrameworkVersion"])
        // The checksum key is newer than this store's Core Data (SwiftData's store has it).
        XCTAssertEqual(Set(ours.keys).subtracting(coreData.keys), ["FaultlineStoreFormat", "NSStoreModelVersionChecksumKey"])
        XCTAssertEqual(ours["_NSAutoVacuumLevel"] as? String, coreData["_NSAutoVacuumLevel"] as? String)
        XCTAssertEqual(ours["NSStoreModelVersionIdentifiers"] as? [String], ["1"], "the version's identifier, as Core Data writes it")
        XCTAssertEqual(coreData["NSStoreModelVersionIdentifiers"] as? [String], ["1"])
        let cached = try XCTUnwrap(ManagedObjectModel.cachedInStore(at: try copy(folder.appendingPathComponent("coredataplus-samplemodel/SampleModel_V2.sqlite"), into: dir)))
        XCTAssertEqual(cached.versionIdentifiers, ["2"])
        let ourHashes = try XCTUnwrap(ours["NSStoreModelVersionHashes"] as? [String: Data])
        XCTAssertEqual(ours["NSStoreModelVersionHashesDigest"] as? String, StoreMetadata.digest(of: ourHashes))
        let connection = try SQLiteConnection(path: store.path, create: false)
        let vacuum = try connection.prepare("PRAGMA auto_vacuum")
        XCTAssertTrue(try vacuum.step())
        XCTAssertEqual(vacuum.int64(at: 0), 2)
        XCTAssertEqual(Data(SHA512.hash(Array("abc".utf8))).base64EncodedString(),
                       "3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw==")
    }

    /// Faultline writes to a store Core Data wrote as Core Data would: new rows take keys from `Z_PRIMARYKEY`, a
    /// duplicate of a unique constraint is a constraint conflict (the store's UNIQUE index never sees it), UUIDs are
    /// 16 bytes, and tables and entities Faultline does not own (persistent history's) keep every row.
    func testWritingToACoreDataStoreLeavesOtherTablesAlone() throws {
        let folder = try storesFolder()
        let dir = TemporaryDirectory()
        let store = try copy(folder.appendingPathComponent("coredataplus-samplemodel/SampleModel_V1.sqlite"), into: dir)
        do {
            let connection = try SQLiteConnection(path: store.path, create: false)
            try connection.execute("CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHOR VARCHAR)")
            try connection.execute("CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER)")
            try connection.execute("INSERT INTO ATRANSACTION VALUES (1, 16002, 1, 'app'); INSERT INTO ACHANGE VALUES (1, 16001, 1, 0)")
            // Persistent history's entities, as Core Data numbers them in Z_PRIMARYKEY.
            try connection.execute("INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 1), (16002, 'TRANSACTION', 0, 1), (16003, 'TRANSACTIONSTRING', 0, 0)")
        }
        let model = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent("coredataplus-samplemodel/SampleModel.xcdatamodeld/SampleModel.xcdatamodel"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: store)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let id = UUID()
        try context.performAndWait {
            let person = try context.insertNewObject(forEntityName: "Person")
            try person.setValue("Ada", forKey: "firstName")
            try person.setValue("Lovelace", forKey: "lastName")
            try person.setValue(id, forKey: "id")
            try person.setValue(Date(timeIntervalSinceReferenceDate: -4_000_000_000), forKey: "updatedAt")
            try context.save()
            XCTAssertEqual(person.objectID.uriString.hasSuffix("/Person/p21"), true, person.objectID.uriString)
            // Victoria Coster is stored already.
            let twin = try context.insertNewObject(forEntityName: "Person")
            try twin.setValue("Victoria", forKey: "firstName")
            try twin.setValue("Coster", forKey: "lastName")
            try twin.setValue(UUID(), forKey: "id")
            try twin.setValue(Date(), forKey: "updatedAt")
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.constraintConflicts(let conflicts) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(conflicts.first?.databaseObject?.uriString.hasSuffix("/Person/p1"), true)
            }
        }
        let connection = try SQLiteConnection(path: store.path, create: false)
        let rows = try connection.prepare("""
            SELECT (SELECT count(*) FROM ATRANSACTION), (SELECT count(*) FROM ACHANGE), (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Person'),
                   (SELECT length(ZID) FROM ZPERSON WHERE Z_PK = 21), (SELECT ZUPDATEDAT FROM ZPERSON WHERE Z_PK = 21)
            """)
        XCTAssertTrue(try rows.step())
        // Z_MAX 22: the failed save's key stays reserved (keys are taken in a transaction of their own, as Core Data's).
        XCTAssertEqual([rows.int64(at: 0), rows.int64(at: 1), rows.int64(at: 2), rows.int64(at: 3)], [1, 1, 22, 16])
        XCTAssertEqual(rows.double(at: 4), -4_000_000_000, "dates before 2001 are negative seconds")
    }
}
