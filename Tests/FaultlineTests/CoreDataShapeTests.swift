import Foundation
import XCTest
@testable import Faultline

/// Core Data's API shapes added for code that ports by renaming, each with Core Data's documented outcome.
final class CoreDataShapeTests: XCTestCase {
    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [
                AttributeDescription(name: "title", type: .string, isOptional: false, defaultValue: ""),
                AttributeDescription(name: "stars", type: .integer16),
                AttributeDescription(name: "score", type: .double),
            ]),
        ])
    }

    /// Core Data: `NSManagedObjectContext(concurrencyType:)` has no coordinator until one is set; a child gets its
    /// parent by `parent = …`, and reads through it.
    func testAContextGetsItsCoordinatorOrParentAfterItIsMade() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(ofType: InMemoryStoreType, at: nil)
        let root = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        XCTAssertNil(root.persistentStoreCoordinator)
        root.persistentStoreCoordinator = coordinator
        XCTAssertTrue(root.persistentStoreCoordinator === coordinator)
        let child = ManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = root
        XCTAssertTrue(child.parent === root)
        XCTAssertTrue(child.coordinator === coordinator)
        try root.performAndWait {
            try root.insertNewObject(forEntityName: "Note").setValue("saved", forKey: "title")
            try root.save()
        }
        XCTAssertEqual(try child.performAndWait { try child.count(for: FetchRequest<ManagedObject>(entityName: "Note")) }, 1)
        let unattached = ManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        XCTAssertThrowsError(try unattached.count(for: FetchRequest<ManagedObject>(entityName: "Note")), "no store until a coordinator is set")
    }

    /// Core Data: an object made with `insertInto: nil` takes values, and `insert(_:)` brings them into a context.
    func testAnObjectMadeOutsideAContextKeepsItsValuesWhenInserted() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(ofType: InMemoryStoreType, at: nil)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let entity = try XCTUnwrap(EntityDescription.entity(forEntityName: "Note", in: context))
            let note = ManagedObject(entity: entity, insertInto: nil)
            try note.setValue("outside", forKey: "title")
            note[Attribute<NSNumber?>("stars")] = 4
            note[Attribute<NSNumber?>("score")] = NSNumber(value: 2.5)
            XCTAssertNil(note.managedObjectContext)
            context.insert(note)
            XCTAssertTrue(note.isInserted)
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            XCTAssertEqual(fetched.map { $0.value(forKey: "title") as? String }, ["outside"])
            XCTAssertEqual(fetched[0][Attribute<NSNumber?>("stars")], 4)
            XCTAssertEqual(fetched[0][Attribute<NSNumber?>("score")]?.doubleValue, 2.5)
            XCTAssertEqual(fetched[0][Attribute<Int16?>("stars")], 4, "an NSNumber is stored in the attribute's own column type")
        }
    }

    /// Core Data: `NSPredicate(format:)` does not throw (a bad format raises); `evaluate(with:)` returns a Bool.
    /// Formats from input go through `init(parsing:)`, which throws with the position.
    func testPredicatesFromCodeDoNotThrowAndPredicatesFromInputDo() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(ofType: InMemoryStoreType, at: nil)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue("hello", forKey: "title")
            XCTAssertTrue(ObjectPredicate(format: "title BEGINSWITH %@", "he").evaluate(with: note))
            XCTAssertFalse(ObjectPredicate(format: "title == %@", "x").evaluate(with: note))
            XCTAssertFalse(ObjectPredicate(format: "title == %@", "hello").evaluate(with: "not an object"))
            XCTAssertThrowsError(try ObjectPredicate(parsing: "title ==")) { XCTAssertTrue("\($0)".contains("character 9"), "\($0)") }
            XCTAssertThrowsError(try ObjectPredicate(parsing: "nothing == 1").matches(note))
        }
    }

    /// Core Data records batch inserts, updates and deletes in persistent history, with the context's author.
    func testBatchRequestsAreRecordedInHistory() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("History.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [PersistentHistoryTrackingKey: true])
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        context.transactionAuthor = "importer"
        context.name = "batch"
        try context.performAndWait {
            let insert = BatchInsertRequest(entityName: "Note", objects: [["title": "a"], ["title": "b"], ["title": "c"]])
            _ = try context.execute(insert)
            let update = BatchUpdateRequest(entityName: "Note")
            update.propertiesToUpdate = ["stars": 5]
            update.predicate = ObjectPredicate(format: "title != 'c'")
            _ = try context.execute(update)
            let delete = BatchDeleteRequest(fetchRequest: FetchRequest<FetchRequestResult>(entityName: "Note"))
            delete.fetchRequest.predicate = ObjectPredicate(format: "title == 'a'")
            _ = try context.execute(delete)
        }
        let history = try PersistentHistory.read(storeAt: url, model: try model())
        XCTAssertEqual(history.transactions.map(\.author), ["importer", "importer", "importer"])
        XCTAssertEqual(history.transactions.map(\.contextName), ["batch", "batch", "batch"])
        XCTAssertEqual(history.transactions.map { $0.changes.map(\.kind) }, [[.insert, .insert, .insert], [.update, .update], [.delete]])
        XCTAssertEqual(history.transactions[1].changes.map(\.updatedProperties), [["stars"], ["stars"]])
        let changeIDs = history.transactions.flatMap { $0.changes.map(\.changeID) }
        XCTAssertEqual(changeIDs, changeIDs.sorted())
        XCTAssertEqual(Set(changeIDs).count, 6, "each change its own changeID")
    }

    /// Core Data posts `NSPersistentStoreRemoteChange` for a store added with the option, after changes to it by
    /// any coordinator (its own included); a store without the option posts nothing.
    func testTheRemoteChangeNotificationFollowsTheOption() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Shared.sqlite")
        let observed = PersistentStoreCoordinator(managedObjectModel: try model())
        try observed.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [PersistentStoreRemoteChangeNotificationPostOptionKey: true])
        let writer = PersistentStoreCoordinator(managedObjectModel: try model())
        try writer.addPersistentStore(ofType: SQLiteStoreType, at: url, options: nil)
        final class Posts: @unchecked Sendable {
            let lock = NSLock()
            var list: [(AnyObject?, URL?)] = []
            var all: [(AnyObject?, URL?)] { lock.withLock { list } }
        }
        let seen = Posts()
        let token = NotificationCenter.default.addObserver(forName: .PersistentStoreRemoteChange, object: nil, queue: nil) { note in
            let entry = (note.object as AnyObject?, note.userInfo?["storeURL"] as? URL)
            seen.lock.withLock { seen.list.append(entry) }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        for coordinator in [writer, observed] {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                try context.insertNewObject(forEntityName: "Note").setValue("x", forKey: "title")
                try context.save()
            }
        }
        let posts = seen.all
        XCTAssertEqual(posts.count, 2, "one post per save, each by the coordinator that asked")
        XCTAssertTrue(posts.allSatisfy { $0.0 === observed })
        XCTAssertEqual(posts.first?.1?.standardizedFileURL, url.standardizedFileURL)

        // Removing the store stops the posts.
        try observed.remove(observed.persistentStores[0])
        let context = ManagedObjectContext(.privateQueue, coordinator: writer)
        try context.performAndWait {
            try context.insertNewObject(forEntityName: "Note").setValue("y", forKey: "title")
            try context.save()
        }
        XCTAssertEqual(seen.all.count, 2)
    }

    /// Core Data: `execute(_:)` of an `NSAsynchronousFetchRequest` returns at once; the completion block gets the
    /// objects on the context's queue, with the progress complete; a cancelled one gets no result.
    func testAnAsynchronousFetchCompletesOrIsCancelled() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(ofType: InMemoryStoreType, at: nil)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            for title in ["a", "b", "c"] { try context.insertNewObject(forEntityName: "Note").setValue(title, forKey: "title") }
            try context.save()
        }
        let done = expectation(description: "completion")
        let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Note")) { result in
            XCTAssertEqual(result.finalResult?.count, 3)
            XCTAssertNil(result.operationError)
            XCTAssertEqual(result.progress?.fractionCompleted, 1)
            done.fulfill()
        }
        let started = try context.execute(request)
        XCTAssertTrue(started.fetchRequest === request)
        wait(for: [done], timeout: 10)

        // Cancelled while the context's queue is busy: it never runs.
        let gate = DispatchSemaphore(value: 0)
        context.perform { gate.wait() }
        let cancelled = expectation(description: "cancelled")
        let second = try context.execute(AsynchronousFetchRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Note")) { result in
            XCTAssertNil(result.finalResult)
            XCTAssertEqual((result.operationError as? CocoaError)?.code, .userCancelled)
            cancelled.fulfill()
        })
        second.progress?.cancel()
        gate.signal()
        wait(for: [cancelled], timeout: 10)
    }

    /// Core Data: `entity()` is the entity whose class name is the class's.
    func testEntityOfAClassIsTheOneItsModelNames() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Shaped", properties: [], representedClassName: "FaultlineTests.ShapedObject")])
        XCTAssertTrue(ShapedObject.entity() === model.entity(named: "Shaped"))
    }
}

final class ShapedObject: ManagedObject {}
