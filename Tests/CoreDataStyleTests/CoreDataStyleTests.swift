//
//  CoreDataStyleTests.swift
//  JournalTests
//
//  The app's persistence code above, exercised as its own tests would, each expecting Core Data's documented
//  outcome (named beside it).
//

import Foundation
import Faultline
import XCTest

final class CoreDataStyleTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func entries(_ count: Int, from start: Int = 0) -> [EntryProperties] {
        (start..<(start + count)).map { (i: Int) -> EntryProperties in
            let body: String? = i % 2 == 0 ? "body \(i)" : nil
            let mood: Int16? = i % 3 == 0 ? nil : Int16(i % 5)
            return EntryProperties(identifier: UUID(), title: "Entry \(i)", body: body, mood: mood,
                                   createdAt: Date(timeIntervalSince1970: Double(i)))
        }
    }

    /// Core Data: `NSPersistentContainer(name:)` loads the model of that name from the bundle; objects are of the
    /// class the model names; `awakeFromInsert` runs once on insert and `willSave` before each save.
    func testTheStackLoadsItsModelByNameAndObjectsAreTheModelsClasses() throws {
        let controller = PersistenceController(storeURL: folder.appendingPathComponent("Journal.sqlite"))
        let store = try XCTUnwrap(controller.container.persistentStoreCoordinator.persistentStores.first)
        XCTAssertEqual(store.type, SQLiteStoreType)
        XCTAssertEqual(store.options?[PersistentHistoryTrackingKey] as? Bool, true)
        XCTAssertEqual(Entry.entity().name, "Entry")
        XCTAssertEqual(Tag.entity().name, "Tag")

        let context = controller.viewContext
        let entry = Entry(context: context)
        XCTAssertNotNil(entry.identifier, "awakeFromInsert set it")
        let tag = Tag(context: context)
        tag.name = "travel"
        entry.tags = [tag]
        entry.mood = 3
        controller.saveContext()
        XCTAssertEqual(entry.title, "Untitled", "willSave filled the empty title")
        XCTAssertFalse(context.hasChanges)

        let fetched = try context.fetch(Entry.fetchRequest())
        XCTAssertEqual(fetched.count, 1)
        XCTAssertTrue(fetched[0] === entry, "one object per ID in a context")
        XCTAssertEqual(fetched[0].mood, 3)
        XCTAssertEqual(fetched[0].tags.map(\.name), ["travel"])
        XCTAssertEqual(tag.entries.first?.id, entry.id)
    }

    /// Core Data: a store description at `/dev/null` is an SQLite store that keeps nothing on disk (the usual test
    /// stack); everything else works as on a file.
    func testTheInMemoryStackKeepsNothingOnDisk() throws {
        let controller = PersistenceController(inMemory: true)
        let context = controller.viewContext
        for title in ["a", "b", "c"] {
            let entry = Entry(context: context)
            entry.title = title
        }
        try context.save()
        XCTAssertEqual(try Entry.count(in: context), 3)
        XCTAssertNil(controller.container.persistentStoreCoordinator.persistentStores.first?.url)
    }

    /// Core Data: an `NSBatchInsertRequest` writes rows without objects; `mergeChanges(fromRemoteContextSave:into:)`
    /// with the inserted IDs brings them to the view context, and the store posts its remote-change notification.
    func testABatchImportReachesTheViewContextByMergingItsIDs() throws {
        let controller = PersistenceController(storeURL: folder.appendingPathComponent("Journal.sqlite"))
        let coordinator = controller.container.persistentStoreCoordinator
        let posted = expectation(forNotification: .PersistentStoreRemoteChange, object: coordinator) { note in
            note.userInfo?[PersistentHistoryTokenKey] is PersistentHistoryToken
        }
        let importer = EntryImporter(persistentContainer: controller.container)
        try importer.importEntries(entries(100))
        wait(for: [posted], timeout: 10)

        let viewContext = controller.viewContext
        XCTAssertEqual(try Entry.count(in: viewContext), 100)
        let request = Entry.fetchRequest(predicate: ObjectPredicate(format: "mood == nil"), sortedBy: "createdAt")
        let moodless = try viewContext.fetch(request)
        XCTAssertEqual(moodless.count, 34)
        XCTAssertEqual(moodless.first?.title, "Entry 0")
        XCTAssertEqual(moodless.first?.isFavorite, false, "the model's default")

        XCTAssertEqual(try importer.importEntriesAsObjects(entries(20, from: 100)), 20)
        XCTAssertEqual(try Entry.count(in: viewContext), 120)
    }

    /// Core Data: a fetch request configured by the caller, `fetchLimit` 1, a count, an IDs-only fetch, and a batch
    /// delete merged into the context (its objects become deleted there).
    func testRepositoryHelpers() throws {
        let controller = PersistenceController(inMemory: true)
        let context = controller.viewContext
        let first = try Entry.findOrCreate(in: context, matching: ObjectPredicate(format: "title == %@", "Monday")) { $0.title = "Monday" }
        let again = try Entry.findOrCreate(in: context, matching: ObjectPredicate(format: "title == %@", "Monday")) { $0.title = "Monday" }
        XCTAssertTrue(first === again, "the pending insert is found (includesPendingChanges)")
        _ = try Entry.findOrCreate(in: context, matching: ObjectPredicate(format: "title == %@", "Tuesday")) { $0.title = "Tuesday"; $0.isFavorite = true }
        try context.save()

        XCTAssertEqual(try Entry.count(in: context, where: ObjectPredicate(format: "isFavorite == YES")), 1)
        XCTAssertEqual(try Entry.fetch(in: context) { $0.sortDescriptors = [FetchSortDescriptor(key: "title", ascending: false)] }.map(\.title), ["Tuesday", "Monday"])
        XCTAssertEqual(try Entry.objectIDs(in: context).count, 2)
        XCTAssertEqual(try Entry.first(in: context, where: ObjectPredicate(format: "title BEGINSWITH 'T'"))?.title, "Tuesday")

        try Entry.deleteAll(in: context)
        XCTAssertEqual(try Entry.count(in: context), 0)
        XCTAssertNil(first.managedObjectContext, "the merged delete took the object out of the context")
    }

    /// Core Data: `fetchHistory(after:)` returns the transactions after the token; `objectIDNotification()` merges
    /// one into a context; `deleteHistory(before:)` purges what was processed.
    func testHistoryIsProcessedAfterTheLastToken() throws {
        let controller = PersistenceController(storeURL: folder.appendingPathComponent("Journal.sqlite"))
        let processor = HistoryProcessor(container: controller.container)
        try EntryImporter(persistentContainer: controller.container).importEntries(entries(10))
        try processor.processNewHistory()
        XCTAssertEqual(processor.processedTransactions, 1)
        let token = try XCTUnwrap(processor.lastToken)

        try processor.processNewHistory()
        XCTAssertEqual(processor.processedTransactions, 1, "nothing after the token")

        let background = controller.newBackgroundContext()
        try background.performAndWait {
            let entry = Entry(context: background)
            entry.title = "from the background"
            try background.save()
        }
        try processor.processNewHistory()
        XCTAssertEqual(processor.processedTransactions, 2)
        XCTAssertNotEqual(processor.lastToken, token)
        XCTAssertEqual(try Entry.count(in: controller.viewContext), 11)
    }

    /// Core Data: a context made with `init(concurrencyType:)` works once its coordinator is set;
    /// `NSEntityDescription.insertNewObject(forEntityName:into:)` inserts an object of the model's class.
    func testTheLegacyStackWithAContextGivenItsCoordinator() throws {
        let context = try PersistenceController.legacyStack(at: folder.appendingPathComponent("Legacy.sqlite"))
        XCTAssertNotNil(context.persistentStoreCoordinator)
        let entry = EntityDescription.insertNewObject(forEntityName: "Entry", into: context) as! Entry
        entry.title = "legacy"
        try context.save()
        XCTAssertEqual(try context.fetch(Entry.fetchRequest()).map(\.title), ["legacy"])
        XCTAssertNotNil(EntityDescription.entity(forEntityName: "Tag", in: context))
    }

    /// Core Data: `replacePersistentStore` copies a store (its log and external data with it) and restores one in
    /// place; `migratePersistentStore` moves the coordinator to a new file and `destroyPersistentStore` removes the
    /// old; opening a store in rollback-journal mode folds its log into the file.
    func testBackupRestoreMoveAndCheckpoint() throws {
        let storeURL = folder.appendingPathComponent("Journal.sqlite")
        let controller = PersistenceController(storeURL: storeURL)
        try EntryImporter(persistentContainer: controller.container).importEntries(entries(5))

        let backupURL = folder.appendingPathComponent("Backup.sqlite")
        try StoreMigrationHelper.backup(controller.container, to: backupURL)
        try EntryImporter(persistentContainer: controller.container).importEntries(entries(5, from: 5))
        XCTAssertEqual(try Entry.count(in: controller.viewContext), 10)

        try StoreMigrationHelper.restore(controller.container, from: backupURL)
        XCTAssertEqual(try Entry.count(in: controller.viewContext), 5, "the backup's five entries")

        let movedURL = folder.appendingPathComponent("Group/Journal.sqlite")
        try FileManager.default.createDirectory(at: movedURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try StoreMigrationHelper.moveStore(of: controller.container, to: movedURL)
        XCTAssertEqual(controller.container.persistentStoreCoordinator.persistentStores.first?.url, movedURL)
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeURL.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeURL.path + "-wal"))
        XCTAssertEqual(try Entry.count(in: controller.viewContext), 5)

        try StoreMigrationHelper.forceWALCheckpointingForStore(at: backupURL, model: controller.container.managedObjectModel)
        XCTAssertFalse(FileManager.default.fileExists(atPath: backupURL.path + "-wal"))
        XCTAssertNotNil(PersistentStoreCoordinator.metadata(at: backupURL))
        try PersistentStoreCoordinator.destroyStore(at: backupURL)
        XCTAssertNil(PersistentStoreCoordinator.metadata(at: backupURL))
    }
}
