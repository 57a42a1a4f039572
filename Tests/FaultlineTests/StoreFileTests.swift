import CFaultInjection
import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// Core Data's store file operations (`remove(_:)`, `destroyPersistentStore`, `replacePersistentStore`,
/// `migratePersistentStore`) with a store's `-wal`, `-shm` and external values, and every step's failure injected.
final class StoreFileTests: XCTestCase {
    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Photo", properties: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "image", type: .binary, allowsExternalBinaryDataStorage: true),
            ]),
        ])
    }

    private static let large = Data((0..<(ExternalBinaryStorage.threshold + 10)).map { UInt8($0 & 0xff) })

    /// A store of `titles` (the first with a large image kept outside the database), left open: its last
    /// transaction is still in its `-wal` (a checkpoint runs only when the last connection closes).
    private func openStore(_ url: URL, titles: [String]) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: nil)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            for (i, title) in titles.enumerated() {
                let photo = try context.insertNewObject(forEntityName: "Photo")
                try photo.setValue(title, forKey: "title")
                if i == 0 { try photo.setValue(Self.large, forKey: "image") }
            }
            try context.save()
        }
        return (coordinator, context)
    }

    /// The titles a fresh coordinator reads from the store at `url`, and whether the large image reads back whole.
    private func titles(at url: URL) throws -> (titles: [String], imageWhole: Bool) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [ReadOnlyPersistentStoreOption: true])
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Photo")
            request.sortDescriptors = [FetchSortDescriptor(keyPath: "title")]
            let photos = try context.fetch(request)
            let images = try photos.compactMap { try $0.value(forKey: "image") as? Data }
            return (try photos.map { try $0.value(forKey: "title") as? String ?? "" }, images.isEmpty || images == [Self.large])
        }
    }

    private func files(_ url: URL) -> [String] {
        let folder = url.deletingLastPathComponent()
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasPrefix(url.lastPathComponent) || $0.hasPrefix(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT") }.sorted()
    }

    // MARK: remove

    /// Core Data: `remove(_:)` "removes the specified persistent store from the coordinator"; adding one after works.
    func testRemovingAStoreLeavesTheCoordinatorWithoutOneUntilAnotherIsAdded() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Photos.sqlite")
        let (coordinator, context) = try openStore(url, titles: ["a", "b"])
        let store = try XCTUnwrap(coordinator.persistentStores.first)
        try coordinator.remove(store)
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
        XCTAssertNil(coordinator.storeIdentifier)
        XCTAssertThrowsError(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Photo")) }) {
            XCTAssertEqual("\($0)", "\(StoreError.noStore)")
        }
        XCTAssertThrowsError(try coordinator.remove(store), "a store removed is no longer the coordinator's")
        let again = try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: nil)
        XCTAssertEqual(again.identifier, store.identifier)
        XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Photo")) }, 2)
    }

    // MARK: destroy

    /// Core Data: `destroyPersistentStore(at:ofType:options:)` deletes (or truncates) the store "in accordance with
    /// the store class's requirements": the database, its `-wal`/`-shm` and its external values go, and a connection
    /// still open on it sees an empty database, never the old rows.
    func testDestroyRemovesTheStoreItsLogAndItsExternalValues() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Photos.sqlite")
        let (holder, holderContext) = try openStore(url, titles: ["a", "b"])
        XCTAssertTrue(files(url).contains("Photos.sqlite-wal"), "the store is open in WAL mode: \(files(url))")
        XCTAssertTrue(files(url).contains { $0.contains("_EXTERNAL_DATA/") }, "a large value is kept outside: \(files(url))")

        let other = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        try other.destroyPersistentStore(at: url, ofType: SQLiteStoreType, options: nil)
        XCTAssertEqual(files(url), [], "every file of the store is gone")
        XCTAssertThrowsError(try holderContext.performAndWait { try holderContext.fetch(FetchRequest<ManagedObject>(entityName: "Photo")) },
                             "the holder's connection reads the emptied database: no table, not the old rows")
        _ = holder

        // Nothing there: nothing to do. Something not a store: left alone, an error naming it.
        try other.destroyPersistentStore(at: url, ofType: SQLiteStoreType, options: nil)
        let text = dir.file("notes.sqlite")
        try Data("not a database".utf8).write(to: text)
        XCTAssertThrowsError(try other.destroyPersistentStore(at: text, ofType: SQLiteStoreType, options: nil)) {
            XCTAssertTrue("\($0)".contains("not SQLite's header"), "\($0)")
        }
        XCTAssertEqual(try Data(contentsOf: text), Data("not a database".utf8))
        // In memory there is no file to destroy.
        try other.destroyPersistentStore(at: URL(fileURLWithPath: "/dev/null"), ofType: InMemoryStoreType, options: nil)
    }

    /// An SQLite database that is not a store (another program's: tables, no Z_METADATA) is neither destroyed nor
    /// replaced: store operations never act on a guess. Its rows stay.
    func testAnotherProgramsDatabaseIsNeitherDestroyedNorReplaced() throws {
        let dir = TemporaryDirectory()
        let foreign = dir.file("app.sqlite")
        do {
            let connection = try SQLiteConnection(path: foreign.path, create: true)
            try connection.execute("CREATE TABLE settings(key TEXT, value TEXT); INSERT INTO settings VALUES ('theme', 'dark')")
        }
        let source = dir.file("Source.sqlite")
        do { _ = try openStore(source, titles: ["a"]) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        XCTAssertThrowsError(try coordinator.destroyPersistentStore(at: foreign, type: .sqlite)) {
            XCTAssertTrue("\($0)".contains("not a store"), "\($0)")
        }
        XCTAssertThrowsError(try coordinator.replacePersistentStore(at: foreign, withPersistentStoreFrom: source, type: .sqlite)) {
            XCTAssertTrue("\($0)".contains("not a store"), "\($0)")
        }
        let connection = try SQLiteConnection(path: foreign.path, create: false)
        let row = try connection.prepare("SELECT value FROM settings WHERE key = 'theme'")
        XCTAssertTrue(try row.step())
        XCTAssertEqual(row.text(at: 0), "dark", "the database is untouched")
        // An empty SQLite file (no tables) is no one's data: it is destroyed.
        let empty = dir.file("empty.sqlite")
        do { _ = try SQLiteConnection(path: empty.path, create: true).execute("PRAGMA user_version = 1") }
        try coordinator.destroyPersistentStore(at: empty, type: .sqlite)
        XCTAssertFalse(FileManager.default.fileExists(atPath: empty.path))
    }

    /// The coordinator's own store is removed from it before its files go.
    func testDestroyingTheCoordinatorsOwnStoreRemovesItFirst() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Photos.sqlite")
        let (coordinator, _) = try openStore(url, titles: ["a"])
        try coordinator.destroyPersistentStore(at: url, type: .sqlite)
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
        XCTAssertEqual(files(url), [])
        // A new store can be made in its place, as Core Data apps do after destroying.
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: nil)
        XCTAssertEqual(try titles(at: url).titles, [])
    }

    /// Every k: a destroy whose k-th write, sync or truncate fails leaves a database SQLite opens whole — all the
    /// rows, or (the emptying committed before the failure) no tables — and never removes a file it did not empty.
    func testDestroyFailingAtEveryWriteLeavesAWholeDatabase() throws {
        let dir = TemporaryDirectory()
        try withFaultInjection {
            var runs = 0
            let faults = try InjectedFault.everyK { kinds in
                runs += 1
                let url = dir.file("count-\(runs).sqlite")
                _ = try openStore(url, titles: ["a", "b", "c"])
                return try countingFaults(kinds) { try PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel()).destroyPersistentStore(at: url, ofType: SQLiteStoreType) }
            }
            XCTAssertGreaterThan(faults.count, 3)
            var failed = 0
            defer { XCTAssertGreaterThan(failed, faults.count / 2, "most injected faults fail the destroy (\(failed) of \(faults.count))") }
            for (i, fault) in faults.enumerated() {
                let url = dir.file("k\(i).sqlite")
                do { _ = try openStore(url, titles: ["a", "b", "c"]) }
                fault.arm()
                let result = Result { try PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel()).destroyPersistentStore(at: url, ofType: SQLiteStoreType) }
                faultinjection_disarm()
                if case .failure = result { failed += 1 }
                guard case .failure(let error) = result else {
                    XCTAssertEqual(files(url), [], "\(fault): no failure reached the files, so they are gone")
                    continue
                }
                XCTAssertTrue("\(error)".contains("destroy"), "\(fault): \(error)")
                let connection = try SQLiteConnection(path: url.path, create: false)
                let check = try connection.prepare("PRAGMA integrity_check")
                XCTAssertTrue(try check.step())
                XCTAssertEqual(check.text(at: 0), "ok", "\(fault)")
                let tables = try connection.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'ZPHOTO'")
                XCTAssertTrue(try tables.step())
                if tables.int64(at: 0) == 1 {
                    XCTAssertEqual(try titles(at: url).titles, ["a", "b", "c"], "\(fault): not emptied, so every row is there")
                }
            }
        }
    }

    // MARK: replace

    /// Core Data: `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)`
    /// replaces the destination with the source's contents, and "replacing emptiness" makes a copy. The source's
    /// last transaction, still in its `-wal`, and its external values come along; the source is unchanged.
    func testReplaceCopiesTheStoreWithItsLogAndExternalValues() throws {
        let dir = TemporaryDirectory()
        let source = dir.file("Source.sqlite")
        let (holder, _) = try openStore(source, titles: ["a", "b"])
        XCTAssertTrue(files(source).contains("Source.sqlite-wal"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())

        let copy = dir.file("Copy.sqlite")
        try coordinator.replacePersistentStore(at: copy, destinationOptions: nil, withPersistentStoreFrom: source, sourceOptions: nil, ofType: SQLiteStoreType)
        let copied = try titles(at: copy)
        XCTAssertEqual(copied.titles, ["a", "b"])
        XCTAssertTrue(copied.imageWhole, "the external value was copied with the rows")
        XCTAssertEqual(try PersistentStoreCoordinator.metadataForPersistentStore(at: copy)["NSStoreUUID"] as? String,
                       holder.storeIdentifier, "a copy is the same store (Core Data copies its metadata)")

        // Replacing a store: its rows and its own external values give way to the source's.
        let old = dir.file("Old.sqlite")
        do { _ = try openStore(old, titles: ["x", "y", "z"]) }
        let oldValues = try StoreFileSet(old).externalValueNames()
        XCTAssertEqual(oldValues.count, 1)
        try coordinator.replacePersistentStore(at: old, withPersistentStoreFrom: source, type: .sqlite)
        XCTAssertEqual(try titles(at: old).titles, ["a", "b"])
        XCTAssertTrue(try titles(at: old).imageWhole)
        XCTAssertFalse(try StoreFileSet(old).externalValueNames().contains(oldValues[0]), "the replaced store's value is removed")
        XCTAssertEqual(try titles(at: source).titles, ["a", "b"], "the source is unchanged")

        // A store this coordinator has is refused; so is a destination that is not a store.
        XCTAssertThrowsError(try holder.replacePersistentStore(at: source, withPersistentStoreFrom: copy, type: .sqlite)) {
            XCTAssertTrue("\($0)".contains("remove it first"), "\($0)")
        }
        let text = dir.file("notes.sqlite")
        try Data("keep me".utf8).write(to: text)
        XCTAssertThrowsError(try coordinator.replacePersistentStore(at: text, withPersistentStoreFrom: source, type: .sqlite))
        XCTAssertEqual(try Data(contentsOf: text), Data("keep me".utf8))
        XCTAssertThrowsError(try coordinator.replacePersistentStore(at: copy, withPersistentStoreFrom: dir.file("absent.sqlite"), type: .sqlite)) {
            XCTAssertTrue("\($0)".contains("no store at the source"), "\($0)")
        }
    }

    /// Every k, at every file step and at every write, sync and truncate SQLite makes: a failed replace leaves the
    /// destination as it was (its rows and values, or absent) and the source unchanged; without the fault, the same
    /// replace then succeeds.
    func testReplaceFailingAtEveryStepLeavesTheDestinationAsItWas() throws {
        let dir = TemporaryDirectory()
        let source = dir.file("Source.sqlite")
        let (holder, _) = try openStore(source, titles: ["a", "b"])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        func replace(_ destination: URL) throws {
            try coordinator.replacePersistentStore(at: destination, withPersistentStoreFrom: source, type: .sqlite)
        }
        func check(_ destination: URL, existed: Bool, after fault: String) throws {
            if existed {
                XCTAssertEqual(try titles(at: destination).titles, ["x", "y"], "\(fault): the destination keeps its rows")
                XCTAssertTrue(try titles(at: destination).imageWhole, "\(fault): and its value")
            } else {
                XCTAssertEqual(files(destination), [], "\(fault): the destination stays absent")
            }
            XCTAssertEqual(try titles(at: source).titles, ["a", "b"], "\(fault): the source is unchanged")
            try replace(destination)
            XCTAssertEqual(try titles(at: destination).titles, ["a", "b"], "\(fault): the replace succeeds without the fault")
        }

        // The file steps: each external value copied, the database copied.
        for existed in [false, true] {
            let probe = dir.file("steps-\(existed).sqlite")
            if existed { _ = try openStore(probe, titles: ["x", "y"]) }
            try replace(probe)
            let steps = StoreFileSteps.lastCount.withLock { $0 }
            XCTAssertGreaterThanOrEqual(steps, 2)
            for k in 1...steps {
                let destination = dir.file("step\(k)-\(existed).sqlite")
                if existed { _ = try openStore(destination, titles: ["x", "y"]) }
                StoreFileSteps.injectedFailure.withLock { $0 = k }
                XCTAssertThrowsError(try replace(destination)) { XCTAssertTrue("\($0)".contains("as it was"), "\($0)") }
                StoreFileSteps.injectedFailure.withLock { $0 = nil }
                try check(destination, existed: existed, after: "step \(k)")
            }
        }

        // SQLite's writes, syncs and truncates.
        try withFaultInjection {
            for existed in [false, true] {
                var runs = 0
                let faults = try InjectedFault.everyK { kinds in
                    runs += 1
                    let destination = dir.file("count-\(existed)-\(runs).sqlite")
                    if existed { _ = try openStore(destination, titles: ["x", "y"]) }
                    return try countingFaults(kinds) { try replace(destination) }
                }
                XCTAssertGreaterThan(faults.count, 4)
                var failed = 0
                defer { XCTAssertGreaterThan(failed, faults.count / 2, "most injected faults fail the replace (\(failed) of \(faults.count))") }
                for (i, fault) in faults.enumerated() {
                    let destination = dir.file("vfs\(i)-\(existed).sqlite")
                    if existed { _ = try openStore(destination, titles: ["x", "y"]) }
                    fault.arm()
                    let result = Result { try replace(destination) }
                    faultinjection_disarm()
                    if case .failure(let error) = result {
                        failed += 1
                        XCTAssertTrue("\(error)".contains("as it was"), "\(fault): \(error)")
                        try check(destination, existed: existed, after: "\(fault)")
                    } else {
                        // A failed sync after the commit, or a failed checkpoint at close, is not the copy's failure:
                        // SQLite reports no error, and the copy must then be whole.
                        XCTAssertEqual(try titles(at: destination).titles, ["a", "b"], "\(fault)")
                    }
                }
            }
        }
        _ = holder
    }

    // MARK: migrate

    /// Core Data: `migratePersistentStore(_:to:options:withType:)` "changes the location … of the specified
    /// persistent store": the coordinator uses the copy from then on (its contexts' saves go there, their object IDs
    /// stay valid), the original files are left.
    func testMigrateMovesTheCoordinatorToACopy() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Photos.sqlite")
        let (coordinator, context) = try openStore(url, titles: ["a", "b"])
        let store = try XCTUnwrap(coordinator.persistentStores.first)
        let ids = try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Photo")).map(\.objectID) }
        let moved = dir.file("Moved.sqlite")
        let new = try coordinator.migratePersistentStore(store, to: moved, options: nil, withType: SQLiteStoreType)
        XCTAssertEqual(coordinator.persistentStores.map(\.url), [moved])
        XCTAssertTrue(coordinator.persistentStores[0] === new)
        XCTAssertEqual(new.identifier, store.identifier)
        XCTAssertEqual(coordinator.storePath, moved.standardizedFileURL.path)
        try context.performAndWait {
            for id in ids { XCTAssertNotNil(try context.existingObject(with: id)) }
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue("c", forKey: "title")
            try context.save()
        }
        XCTAssertEqual(try titles(at: moved).titles, ["a", "b", "c"])
        XCTAssertTrue(try titles(at: moved).imageWhole)
        XCTAssertEqual(try titles(at: url).titles, ["a", "b"], "the original is left as it was")
        XCTAssertThrowsError(try coordinator.migratePersistentStore(new, to: url, withType: SQLiteStoreType)) {
            XCTAssertTrue("\($0)".contains("destroy it first"), "\($0)")
        }
        XCTAssertThrowsError(try coordinator.migratePersistentStore(new, to: dir.file("m.sqlite"), withType: InMemoryStoreType))
    }

    /// An in-memory store (Core Data's `/dev/null` test stack) moves to a file.
    func testMigrateWritesAnInMemoryStoreToAFile() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        let store = try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: URL(fileURLWithPath: "/dev/null"), options: nil)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let photo = try context.insertNewObject(forEntityName: "Photo")
            try photo.setValue("memory", forKey: "title")
            try photo.setValue(Self.large, forKey: "image")
            try context.save()
        }
        let dir = TemporaryDirectory()
        let url = dir.file("Saved.sqlite")
        _ = try coordinator.migratePersistentStore(store, to: url, type: .sqlite)
        XCTAssertEqual(try titles(at: url).titles, ["memory"])
        XCTAssertTrue(try titles(at: url).imageWhole)
    }

    /// Every k: a migrate failing at any step or any SQLite write leaves the coordinator on its store (fetches and
    /// saves work) and no destination.
    func testMigrateFailingAtEveryStepKeepsTheStore() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Photos.sqlite")
        let (coordinator, context) = try openStore(url, titles: ["a", "b"])
        // A probe run counts the steps, then moves back.
        let probe = dir.file("probe.sqlite")
        let moved = try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: probe, type: .sqlite)
        let steps = StoreFileSteps.lastCount.withLock { $0 }
        _ = try coordinator.migratePersistentStore(moved, to: dir.file("back.sqlite"), type: .sqlite)
        try coordinator.destroyPersistentStore(at: probe, type: .sqlite)
        let home = coordinator.persistentStores[0].url!
        for k in 1...steps {
            let destination = dir.file("step\(k).sqlite")
            StoreFileSteps.injectedFailure.withLock { $0 = k }
            XCTAssertThrowsError(try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: destination, type: .sqlite))
            StoreFileSteps.injectedFailure.withLock { $0 = nil }
            XCTAssertEqual(coordinator.persistentStores.map(\.url), [home], "step \(k)")
            XCTAssertEqual(files(destination), [], "step \(k)")
        }
        try withFaultInjection {
            var runs = 0
            let faults = try InjectedFault.everyK { kinds in
                runs += 1
                let destination = dir.file("count-\(runs).sqlite")
                return try countingFaults(kinds) { _ = try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: destination, type: .sqlite) }
            }
            XCTAssertGreaterThan(faults.count, 4)
            var failed = 0
            defer { XCTAssertGreaterThan(failed, faults.count / 2, "most injected faults fail the migrate (\(failed) of \(faults.count))") }
            for (i, fault) in faults.enumerated() {
                let current = coordinator.persistentStores[0].url!
                let destination = dir.file("vfs\(i).sqlite")
                fault.arm()
                let result = Result { try coordinator.migratePersistentStore(coordinator.persistentStores[0], to: destination, type: .sqlite) }
                faultinjection_disarm()
                switch result {
                case .failure:
                    failed += 1
                    XCTAssertEqual(coordinator.persistentStores.map(\.url), [current], "\(fault)")
                    XCTAssertEqual(files(destination), [], "\(fault): no destination is left")
                case .success:
                    XCTAssertEqual(coordinator.persistentStores.map(\.url), [destination], "\(fault)")
                }
                XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Photo")) }, 2, "\(fault)")
            }
        }
    }
}
