import Foundation
import XCTest
@testable import Faultline

/// The coordinator's store as Core Data's object, added with Core Data's store types and option keys.
final class PersistentStoreTests: XCTestCase {
    func testStoresAddedWithCoreDataTypesAndOptionKeys() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Kennel.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
        XCTAssertEqual(coordinator.persistentStores.count, 0)
        let store = try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url,
                                                       options: [MigratePersistentStoresAutomaticallyOption: true, InferMappingModelAutomaticallyOption: true,
                                                                 PersistentHistoryTrackingKey: NSNumber(value: true), SQLitePragmasOption: ["synchronous": "FULL"],
                                                                 "SomeOptionFaultlineIgnores": 1])
        XCTAssertEqual(store.type, SQLiteStoreType)
        XCTAssertEqual(store.url, url)
        XCTAssertEqual(store.identifier, coordinator.storeIdentifier)
        XCTAssertTrue(store.storeOptions.contains(.persistentHistoryTracking))
        XCTAssertFalse(store.isReadOnly)
        XCTAssertTrue(coordinator.persistentStores[0] === store, "one object for the store, as Core Data's")
        XCTAssertTrue(coordinator.persistentStore(for: url) === store)
        XCTAssertNil(coordinator.persistentStore(for: dir.file("other.sqlite")))
        XCTAssertEqual(try coordinator.metadata(for: store)["NSStoreUUID"] as? String, store.identifier)
        XCTAssertEqual(try PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: url)["NSStoreType"] as? String, "SQLite")
        // A second store is refused in words: the coordinator holds one.
        XCTAssertThrowsError(try coordinator.addPersistentStore(ofType: InMemoryStoreType, at: nil)) { error in
            XCTAssertTrue("\(error)".contains("holds one"), "\(error)")
        }

        // Core Data's in-memory habits: the in-memory type, or an SQLite store at /dev/null.
        for (type, url) in [(InMemoryStoreType, nil as URL?), (SQLiteStoreType, URL(fileURLWithPath: "/dev/null"))] {
            let memory = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
            let added = try memory.addPersistentStore(ofType: type, configurationName: nil, at: url, options: nil)
            XCTAssertEqual(added.type, InMemoryStoreType)
            XCTAssertNil(added.url)
        }
        // A known key with a value of the wrong kind, and a configuration Faultline does not split stores by.
        let bad = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
        XCTAssertThrowsError(try bad.addPersistentStore(ofType: SQLiteStoreType, at: dir.file("bad.sqlite"), options: [ReadOnlyPersistentStoreOption: "yes"])) { error in
            XCTAssertTrue("\(error)".contains("the option NSReadOnlyPersistentStoreOption must be a Boolean"), "\(error)")
        }
        XCTAssertThrowsError(try bad.addPersistentStore(ofType: SQLiteStoreType, configurationName: "Passwords", at: dir.file("bad.sqlite"))) { error in
            XCTAssertTrue("\(error)".contains("the configuration 'Passwords'"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("bad.sqlite").path), "a refused store is not created")
    }

    func testDescriptionOptionsByCoreDataKeys() throws {
        let description = PersistentStoreDescription()
        description.type = .inMemory
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        description.setOption(false as NSNumber, forKey: MigratePersistentStoresAutomaticallyOption)
        description.setOption(["cache_size": 100], forKey: SQLitePragmasOption)
        XCTAssertTrue(description.isPersistentHistoryTrackingEnabled)
        XCTAssertFalse(description.shouldMigrateStoreAutomatically)
        XCTAssertEqual(description.sqlitePragmas, ["cache_size": "100"])
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        XCTAssertEqual(container.persistentStoreCoordinator.persistentStores.first?.type, InMemoryStoreType)

        let wrong = PersistentStoreDescription(type: .inMemory)
        wrong.setOption("yes", forKey: ReadOnlyPersistentStoreOption)
        let other = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        other.persistentStoreDescriptions = [wrong]
        XCTAssertThrowsError(try other.loadPersistentStores()) { error in
            XCTAssertTrue("\(error)".contains("NSReadOnlyPersistentStoreOption was given a value of the wrong kind"), "\(error)")
        }
    }
}
