import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// `PersistentContainer`, `PersistentStoreDescription` and the in-memory store type, used as a Core Data user would.
final class ContainerTests: XCTestCase {
    private func dogs(_ context: ManagedObjectContext) throws -> [String] {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog")
            request.sortDescriptors = [FetchSortDescriptor(keyPath: "name")]
            return try context.fetch(request).map { $0.value(forKey: "name") as? String ?? "" }
        }
    }

    private func insertDogs(_ names: [String], into context: ManagedObjectContext) throws {
        try context.performAndWait {
            for name in names { try context.insertNewObject(forEntityName: "Dog").setValue(name, forKey: "name") }
            try context.save()
        }
    }

    func testInMemoryStoreRunsTheSameSQLAndKeepsNoFile() throws {
        let recorder = InMemoryProbeRecorder()
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: Probes(recorders: [recorder]))
        container.persistentStoreDescriptions[0].type = .inMemory
        let defaultFile = container.persistentStoreDescriptions[0].url!
        try container.loadPersistentStores()
        let coordinator = container.persistentStoreCoordinator
        XCTAssertEqual(coordinator.storeType, .inMemory)
        XCTAssertNil(coordinator.storePath, "an in-memory store has no file")

        let background = container.newBackgroundContext()
        try insertDogs(["Rex", "Ada"], into: background)
        // Another context on the same coordinator reads what was saved: the SQL store, not a context's memory.
        let reader = container.newBackgroundContext()
        XCTAssertEqual(try dogs(reader), ["Ada", "Rex"])
        let sql = recorder.events.compactMap { event -> String? in if case .statement(let s) = event { return s.sql }; return nil }
        XCTAssertTrue(sql.contains { $0.hasPrefix("INSERT INTO ZDOG") }, "\(sql)")
        XCTAssertTrue(sql.contains { $0.hasPrefix("SELECT") && $0.contains("FROM ZDOG") }, "\(sql)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: defaultFile.path), "nothing written at the default URL")
        XCTAssertFalse(FileManager.default.fileExists(atPath: SQLiteStore.inMemoryPath), "no file named after SQLite's memory path")

        // Each in-memory store is its own: a second container starts empty.
        let other = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        other.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try other.loadPersistentStores()
        XCTAssertEqual(try dogs(other.newBackgroundContext()), [])
    }

    /// A class, as Core Data's: `first?.url = …` changes the container's own description, a description made with
    /// `init()` is configured after it is made, and two names for one description see one state.
    func testDescriptionsAreSharedObjectsAsInCoreData() throws {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        container.persistentStoreDescriptions.first?.url = URL(fileURLWithPath: "/dev/null")
        XCTAssertEqual(container.persistentStoreDescriptions[0].url?.path, "/dev/null")
        let description = PersistentStoreDescription()
        XCTAssertEqual(description.type, .sqlite)
        XCTAssertNil(description.url)
        let alias = description
        alias.type = .inMemory
        alias.shouldMigrateStoreAutomatically = false
        XCTAssertEqual(description.type, .inMemory)
        XCTAssertFalse(description.shouldMigrateStoreAutomatically)
        XCTAssertTrue(description.shouldInferMappingModelAutomatically)
        XCTAssertEqual(description, alias)
        XCTAssertNotEqual(description, PersistentStoreDescription())
        let other = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        other.persistentStoreDescriptions = [description]
        try other.loadPersistentStores()
        XCTAssertEqual(other.persistentStoreCoordinator.storeType, .inMemory)
        // An SQLite description without a URL is refused in words, as Core Data refuses it.
        let noURL = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        noURL.persistentStoreDescriptions = [PersistentStoreDescription()]
        XCTAssertThrowsError(try noURL.loadPersistentStores()) { error in
            XCTAssertTrue("\(error)".contains("URL"), "\(error)")
        }
    }

    func testDevNullURLIsAnInMemoryStoreAsInCoreData() throws {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        container.persistentStoreDescriptions[0].url = URL(fileURLWithPath: "/dev/null")
        try container.loadPersistentStores()
        XCTAssertEqual(container.persistentStoreCoordinator.storeType, .inMemory)
        try insertDogs(["Bo"], into: container.newBackgroundContext())
        XCTAssertEqual(try dogs(container.newBackgroundContext()), ["Bo"])
    }

    func testInMemoryStoreKeepsLargeBinaryValuesInline() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Photo", properties: [
                AttributeDescription(name: "bytes", type: .binary, allowsExternalBinaryDataStorage: true),
            ]),
        ])
        let container = PersistentContainer(name: "Photos", managedObjectModel: model, probes: .disabled)
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let big = Data(repeating: 7, count: ExternalBinaryStorage.threshold + 10)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try context.insertNewObject(forEntityName: "Photo").setValue(big, forKey: "bytes")
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let read = try reader.performAndWait { try reader.fetch(FetchRequest<ManagedObject>(entityName: "Photo")).first?.value(forKey: "bytes") as? Data }
        XCTAssertEqual(read, big)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ".:memory:_SUPPORT"), "no external-data folder for a store without a file")
    }

    func testSQLiteDescriptionOpensTheFileWithItsPragmas() throws {
        let dir = TemporaryDirectory()
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        let description = PersistentStoreDescription(url: dir.file("nested/folder/Kennel.sqlite"))
        description.setValue("DELETE", forPragmaNamed: "journal_mode")
        description.setValue("OFF", forPragmaNamed: "synchronous")
        description.setValue("FULL", forPragmaNamed: "synchronous")
        XCTAssertEqual(description.sqlitePragmas, ["journal_mode": "DELETE", "synchronous": "FULL"])
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        XCTAssertEqual(container.persistentStoreCoordinator.storeType, .sqlite)
        XCTAssertEqual(container.persistentStoreCoordinator.storePath, dir.file("nested/folder/Kennel.sqlite").path)
        try insertDogs(["Rex"], into: container.newBackgroundContext())

        // The file's journal mode is the pragma's, not Faultline's WAL: header bytes 18 and 19 are 1 for a
        // rollback journal, 2 for WAL (SQLite's file format, §1.3.3).
        let header = try Data(contentsOf: dir.file("nested/folder/Kennel.sqlite")).prefix(20)
        XCTAssertEqual([header[18], header[19]], [1, 1])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("nested/folder/Kennel.sqlite-wal").path))
        XCTAssertEqual(try dogs(container.newBackgroundContext()), ["Rex"])
    }

    func testDefaultDescriptionIsNamedAfterTheContainer() throws {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        let description = try XCTUnwrap(container.persistentStoreDescriptions.first)
        XCTAssertEqual(container.persistentStoreDescriptions.count, 1)
        XCTAssertEqual(description.type, .sqlite)
        XCTAssertEqual(description.url, PersistentContainer.defaultDirectoryURL().appendingPathComponent("Kennel.sqlite"))
        XCTAssertTrue(description.shouldMigrateStoreAutomatically && description.shouldInferMappingModelAutomatically, "Core Data's defaults")
        XCTAssertFalse(description.isReadOnly || description.isPersistentHistoryTrackingEnabled)
        XCTAssertEqual(container.viewContext.concurrencyType, .mainQueue)
        XCTAssertEqual(container.viewContext.name, "viewContext")
    }

    func testBadDescriptionsAreNamedAndAddNothing() throws {
        let model = try makeTestModel()
        // A pragma whose value would be SQL of its own.
        let injected = PersistentContainer(name: "Kennel", managedObjectModel: model, probes: .disabled)
        injected.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        injected.persistentStoreDescriptions[0].setValue("OFF; DROP TABLE ZDOG", forPragmaNamed: "synchronous")
        XCTAssertThrowsError(try injected.loadPersistentStores()) { error in
            XCTAssertTrue("\(error)".contains("pragma synchronous"), "\(error)")
        }
        XCTAssertNil(injected.persistentStoreCoordinator.storeType, "no store added")
        let badName = PersistentContainer(name: "Kennel", managedObjectModel: model, probes: .disabled)
        badName.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        badName.persistentStoreDescriptions[0].setValue("1", forPragmaNamed: "cache size")
        XCTAssertThrowsError(try badName.loadPersistentStores()) { XCTAssertTrue("\($0)".contains("'cache size'"), "\($0)") }

        // An in-memory store cannot be read only: there is nothing to read.
        let readOnly = PersistentContainer(name: "Kennel", managedObjectModel: model, probes: .disabled)
        readOnly.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        readOnly.persistentStoreDescriptions[0].isReadOnly = true
        XCTAssertThrowsError(try readOnly.loadPersistentStores()) { XCTAssertTrue("\($0)".contains("read only"), "\($0)") }

        // A read-only store that does not exist is not created.
        let dir = TemporaryDirectory()
        let missing = PersistentContainer(name: "Kennel", managedObjectModel: model, probes: .disabled)
        missing.persistentStoreDescriptions = [PersistentStoreDescription(url: dir.file("absent/Kennel.sqlite"))]
        missing.persistentStoreDescriptions[0].isReadOnly = true
        XCTAssertThrowsError(try missing.loadPersistentStores()) { XCTAssertTrue("\($0)".contains("no store at"), "\($0)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("absent").path), "a read-only load creates nothing")

        // The coordinator holds one store: a second description fails and the first stays.
        let two = PersistentContainer(name: "Kennel", managedObjectModel: model, probes: .disabled)
        two.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory), PersistentStoreDescription(url: dir.file("second.sqlite"))]
        var results: [(PersistentStoreDescription, Error?)] = []
        two.loadPersistentStores { results.append(($0, $1)) }
        XCTAssertEqual(results.count, 2)
        XCTAssertNil(results[0].1)
        XCTAssertTrue(results[1].1.map { "\($0)".contains("already has a store") } ?? false, "\(String(describing: results[1].1))")
        XCTAssertEqual(two.persistentStoreCoordinator.storeType, .inMemory)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("second.sqlite").path))
        // Query generations need a file.
        let context = two.newBackgroundContext()
        XCTAssertThrowsError(try context.performAndWait { try context.setQueryGenerationFrom(.current) }) {
            XCTAssertTrue("\($0)".contains("in-memory"), "\($0)")
        }
    }
}
