import Foundation
import XCTest
@testable import Faultline

/// A delegate that writes down what it hears, in order.
final class ChangeLog: FetchedResultsControllerDelegate {
    var lines: [String] = []

    private func path(_ indexPath: IndexPath?) -> String { indexPath.map { "[\($0[0]),\($0[1])]" } ?? "nil" }

    func controllerWillChangeContent(_ controller: any AnyFetchedResultsController) { lines.append("will") }
    func controller(_ controller: any AnyFetchedResultsController, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        lines.append("section \(type) \(sectionIndex) '\(sectionInfo.name)'")
    }
    func controller(_ controller: any AnyFetchedResultsController, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        let name = (anObject as? ManagedObject)?.entity.name == "Item" ? ((anObject as! ManagedObject).value(forKey: "name") as? String ?? "?") : "?"
        lines.append("\(type) \(name) \(path(indexPath))→\(path(newIndexPath))")
    }
    func controllerDidChangeContent(_ controller: any AnyFetchedResultsController) { lines.append("did") }
}

/// Core Data's `NSFetchedResultsController`: sections, index paths, and the delegate's callbacks in Core Data's
/// order for changes made in the context and merged from another, each test naming the documented outcome.
final class FetchedResultsControllerTests: XCTestCase {
    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "group", type: .string),
                AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: Int32(0)),
                AttributeDescription(name: "hidden", type: .boolean, isOptional: false, defaultValue: false),
            ]),
        ])
    }

    /// A store with items a1 a2 (group A), b1 (B), c1 (C), ranked in that order; a context on it.
    private func stack(_ dir: TemporaryDirectory, recorder: InMemoryProbeRecorder? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let probes = recorder.map { Probes(configuration: ProbeConfiguration(), recorders: [$0]) } ?? .shared
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model(), probes: probes)
        try coordinator.addPersistentStore(at: dir.file("Items.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            for (rank, (name, group)) in [("a1", "A"), ("a2", "A"), ("b1", "B"), ("c1", "C")].enumerated() {
                try insert(name, group, Int32(rank * 10), into: context)
            }
            try context.save()
        }
        return (coordinator, context)
    }

    @discardableResult
    private func insert(_ name: String, _ group: String, _ rank: Int32, into context: ManagedObjectContext) throws -> ManagedObject {
        let item = try context.insertNewObject(forEntityName: "Item")
        try item.setValue(name, forKey: "name")
        try item.setValue(group, forKey: "group")
        try item.setValue(rank, forKey: "rank")
        return item
    }

    private func controller(_ context: ManagedObjectContext, sections: Bool = true, batch: Int = 0) throws -> (FetchedResultsController<ManagedObject>, ChangeLog) {
        let request = FetchRequest<ManagedObject>(entityName: "Item", predicate: ObjectPredicate(format: "hidden == NO"),
                                                  sortDescriptors: [FetchSortDescriptor(key: "group", ascending: true), FetchSortDescriptor(key: "rank", ascending: true)])
        request.fetchBatchSize = batch
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                  sectionNameKeyPath: sections ? "group" : nil, cacheName: nil)
        let log = ChangeLog()
        controller.delegate = log
        try controller.performFetch()
        return (controller, log)
    }

    private func item(_ name: String, in controller: FetchedResultsController<ManagedObject>) throws -> ManagedObject {
        try XCTUnwrap(controller.fetchedObjects?.first { $0.value(forKey: "name") as? String == name })
    }

    /// A fetch limit bounds `performFetch()`; changes after it are tracked without it — an insert grows the list
    /// past the limit, a delete does not pull in the next row — as Core Data's controller does (its documentation is
    /// silent; this keeps every object the list showed or was told about; docs/contexts.md).
    func testAFetchLimitBoundsTheFetchAndNotTheChangesAfterIt() throws {
        for batch in [0, 2] { try fetchLimitIsNotReapplied(batch: batch) }
    }

    private func fetchLimitIsNotReapplied(batch: Int) throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [FetchSortDescriptor(key: "rank", ascending: true)])
            request.fetchLimit = 3
            request.fetchBatchSize = batch
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            let log = ChangeLog()
            controller.delegate = log
            try controller.performFetch()
            func names() -> [String] { (controller.fetchedObjects ?? []).map { $0.value(forKey: "name") as? String ?? "?" } }
            XCTAssertEqual(names(), ["a1", "a2", "b1"], "batch \(batch)")
            try insert("a0", "A", -5, into: context)
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "insert a0 nil→[0,0]", "did"], "batch \(batch)")
            XCTAssertEqual(names(), ["a0", "a1", "a2", "b1"], "batch \(batch)")
            log.lines = []
            context.delete(try item("a1", in: controller))
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "delete a1 [0,1]→nil", "did"], "batch \(batch)")
            XCTAssertEqual(names(), ["a0", "a2", "b1"], "c1 is not pulled in (batch \(batch))")
        }
    }

    /// Core Data: `performFetch` fails without a sort descriptor; with a section key path the objects must be sorted
    /// by section ("out of order section name").
    func testAControllerNeedsSortDescriptorsInSectionOrder() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let unsorted = FetchedResultsController(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item"), managedObjectContext: context,
                                                    sectionNameKeyPath: nil, cacheName: nil)
            XCTAssertThrowsError(try unsorted.performFetch()) { XCTAssertTrue("\($0)".contains("sort descriptors"), "\($0)") }
            try insert("a3", "A", 25, into: context)   // between b1 (20) and c1 (30) by rank
            let byRank = FetchedResultsController(fetchRequest: FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [FetchSortDescriptor(key: "rank", ascending: true)]),
                                                  managedObjectContext: context, sectionNameKeyPath: "group", cacheName: nil)
            XCTAssertThrowsError(try byRank.performFetch()) { XCTAssertEqual("\($0)", "the fetched object at index 3 has an out of order section name 'A': objects must be sorted by section name (sort first by 'group')") }
        }
    }

    /// Core Data: `sections` group the objects by the section key path, each with its name, index title and count;
    /// `object(at:)` and `indexPath(forObject:)` agree.
    func testSectionsIndexPathsAndTitles() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let (controller, _) = try controller(context)
            let sections = try XCTUnwrap(controller.sections)
            XCTAssertEqual(sections.map(\.name), ["A", "B", "C"])
            XCTAssertEqual(sections.map(\.numberOfObjects), [2, 1, 1])
            XCTAssertEqual(controller.sectionIndexTitles, ["A", "B", "C"])
            XCTAssertEqual(controller.object(at: IndexPath(row: 1, section: 0)).value(forKey: "name") as? String, "a2")
            XCTAssertEqual(controller.indexPath(forObject: try item("c1", in: controller)), IndexPath(row: 0, section: 2))
            XCTAssertEqual((sections[0].objects as? [ManagedObject])?.map { $0.value(forKey: "name") as? String }, ["a1", "a2"])
            let plain = try self.controller(context, sections: false).0
            XCTAssertEqual(plain.sections?.map(\.name), [""], "one section without a key path")
            XCTAssertEqual(plain.sections?.first?.numberOfObjects, 4)
        }
    }

    /// Core Data: an object inserted in the context that matches the request is reported at its new index path,
    /// between will-change and did-change, at the end of the event; one that does not match is not reported.
    func testAnInsertIsReportedAtItsIndexPath() throws {
        // Without a batch size, and with batches of two (the controller holds keys and fetches batches as read).
        for batch in [0, 2] { try insertIsReported(batch: batch) }
    }

    private func insertIsReported(batch: Int) throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let (controller, log) = try controller(context, batch: batch)
            try insert("a1b", "A", 5, into: context)
            let hidden = try insert("x", "A", 1, into: context)
            try hidden.setValue(true, forKey: "hidden")
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "insert a1b nil→[0,1]", "did"])
            XCTAssertEqual(controller.sections?.map(\.numberOfObjects), [3, 1, 1])
            log.lines = []
            try insert("d1", "D", 40, into: context)
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "section insert 3 'D'", "insert d1 nil→[3,0]", "did"], "the section first, as Core Data reports")
        }
    }

    /// Core Data: a deleted object is reported at its old index path; the last object of a section takes its section
    /// with it (the section's change first).
    func testADeleteIsReportedAtItsOldIndexPath() throws {
        // Without a batch size, and with batches of two (the controller holds keys and fetches batches as read).
        for batch in [0, 2] { try deleteIsReported(batch: batch) }
    }

    private func deleteIsReported(batch: Int) throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let (controller, log) = try controller(context, batch: batch)
            context.delete(try item("a1", in: controller))
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "delete a1 [0,0]→nil", "did"])
            log.lines = []
            context.delete(try item("b1", in: controller))
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "section delete 1 'B'", "delete b1 [1,0]→nil", "did"])
            XCTAssertEqual(controller.sections?.map(\.name), ["A", "C"])
        }
    }

    /// Core Data: a changed object that stays in place is an update at its index path; one whose sort key moves it is
    /// a move from its old index path to its new one, within its section or to another (a section emptied or
    /// created on the way is reported first); an object that stops matching is a delete, one that starts, an insert.
    func testUpdatesMovesAndPredicateChanges() throws {
        // Without a batch size, and with batches of two (the controller holds keys and fetches batches as read).
        for batch in [0, 2] { try updatesAndMoves(batch: batch) }
    }

    private func updatesAndMoves(batch: Int) throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let (controller, log) = try controller(context, batch: batch)
            try item("a2", in: controller).setValue("a2!", forKey: "name")
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "update a2! [0,1]→nil", "did"])

            log.lines = []
            try item("a2!", in: controller).setValue(Int32(-1), forKey: "rank")
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "move a2! [0,1]→[0,0]", "did"])
            XCTAssertEqual(controller.fetchedObjects?.map { $0.value(forKey: "name") as? String }, ["a2!", "a1", "b1", "c1"])

            log.lines = []
            try item("b1", in: controller).setValue("C", forKey: "group")
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "section delete 1 'B'", "move b1 [1,0]→[1,0]", "did"])
            XCTAssertEqual(controller.sections?.map(\.name), ["A", "C"])

            log.lines = []
            let a1 = try item("a1", in: controller)
            try a1.setValue(true, forKey: "hidden")
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "delete a1 [0,1]→nil", "did"])
            log.lines = []
            try a1.setValue(false, forKey: "hidden")
            context.processPendingChanges()
            XCTAssertEqual(log.lines, ["will", "insert a1 nil→[0,1]", "did"])
        }
    }

    /// Core Data: another context's save reaches the controller when it is merged — inserts, updates that move
    /// objects, deletes — and a batch update does not, until its IDs are merged (objc.io: "the FRC does not update").
    func testMergedChangesAndBatchUpdates() throws {
        // Without a batch size, and with batches of two (the controller holds keys and fetches batches as read).
        for batch in [0, 2] { try mergedChanges(batch: batch) }
    }

    private func mergedChanges(batch: Int) throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try stack(dir)
        let (controller, log) = try context.performAndWait { try self.controller(context, batch: batch) }
        var changeSets: [FetchedResultsChangeSet] = []
        context.performAndWait { controller.onChange = { changeSets.append($0) } }
        let background = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        var saved: SaveNotification?
        _ = background.addDidSaveObserver { saved = $0 }
        let c1 = try context.performAndWait { try item("c1", in: controller).objectID }
        try background.performAndWait {
            try insert("b2", "B", 25, into: background)
            try background.existingObject(with: c1).setValue(Int32(1), forKey: "rank")
            try background.existingObject(with: c1).setValue("A", forKey: "group")
            try background.save()
        }
        try context.performAndWait {
            context.mergeChanges(fromContextDidSave: try XCTUnwrap(saved))
            XCTAssertEqual(log.lines, ["will", "section delete 2 'C'", "insert b2 nil→[1,1]", "move c1 [2,0]→[0,1]", "did"])
            XCTAssertEqual(changeSets.count, 1)
            XCTAssertEqual(changeSets.first?.objects.map(\.type), [.insert, .move])
            XCTAssertEqual(changeSets.first?.objects.last?.objectID, c1)
        }
        log.lines = []
        let update = BatchUpdateRequest(entityName: "Item", predicate: ObjectPredicate(format: "name == 'a1'"), propertiesToUpdate: ["rank": Int32(100)])
        update.resultType = .updatedObjectIDsResultType
        let result = try context.performAndWait { try context.execute(update) }
        context.performAndWait { context.processPendingChanges() }
        XCTAssertEqual(log.lines, [], "a batch update bypasses the context")
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [UpdatedObjectsKey: result.objectIDs], into: [context])
        context.performAndWait {
            XCTAssertEqual(log.lines, ["will", "move a1 [0,0]→[0,2]", "did"])
        }
    }

    /// Core Data's controller with a batch size (objc.io: "batch size 20"): the fetch reads the rows' keys and the
    /// sections' counts (one `GROUP BY`), no object; reading an index path fetches its batch. Counts are exact.
    func testABatchedControllerReadsKeysAndSectionsThenTheBatchesRead() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let (_, context) = try stack(dir, recorder: recorder)
        try context.performAndWait {
            for i in 0..<96 { try insert("n\(i)", ["D", "E", "F"][i % 3], Int32(100 + i), into: context) }
            try context.save()
            context.reset()
            recorder.removeAll()
            let (controller, _) = try controller(context, batch: 20)
            let statements = { recorder.events.filter { if case .statement = $0 { return true }; return false }.count }
            XCTAssertEqual(statements(), 2, "the keys, and the sections' counts")
            XCTAssertEqual(context.registeredObjects.count, 0, "no object before it is read")
            XCTAssertEqual(controller.sections?.map(\.name), ["A", "B", "C", "D", "E", "F"])
            XCTAssertEqual(controller.sections?.map(\.numberOfObjects), [2, 1, 1, 32, 32, 32])
            XCTAssertEqual(controller.object(at: IndexPath(row: 0, section: 3)).value(forKey: "name") as? String, "n0")
            XCTAssertEqual(statements(), 3, "one batch")
            XCTAssertEqual(context.registeredObjects.count, 20)
            XCTAssertEqual(controller.fetchedResults?.batchSize, 20)
            XCTAssertEqual(controller.fetchedResults?.objectID(at: 99).primaryKey, controller.object(at: IndexPath(row: 31, section: 5)).objectID.primaryKey)
            // A nil group and an empty one are one section, "", as when the objects are read.
            let blank = try insert("blank", "", 1, into: context), none = try insert("none", "X", 2, into: context)
            try none.setValue(nil, forKey: "group")
            try context.save()
            _ = blank
            let (regrouped, _) = try self.controller(context, batch: 20)
            XCTAssertEqual(regrouped.sections?.first.map { "\($0.name)\($0.numberOfObjects)" }, "2")
        }
    }

    /// Core Data's section cache: a second controller with the same cache name and request loads the sections
    /// instead of computing them; a changed request rebuilds it (as does `deleteCache(withName:)`), and so do rows
    /// another context changed — Faultline checks the rows' fingerprint, so a stale cache is never shown. The trace
    /// says hit or miss, and why.
    func testTheSectionCacheIsReusedAndRebuiltWhenTheRequestOrTheRowsChange() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let (coordinator, setup) = try stack(dir, recorder: recorder)
        let saved = FetchedResultsController<ManagedObject>.cacheDirectory
        FetchedResultsController<ManagedObject>.cacheDirectory = dir.file("caches")
        defer { FetchedResultsController<ManagedObject>.cacheDirectory = saved }
        _ = setup
        func fetch(_ predicate: String = "hidden == NO") throws -> (ResultsControllerEvent, Int, [String]) {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            return try context.performAndWait {
                recorder.removeAll()
                let request = FetchRequest<ManagedObject>(entityName: "Item", predicate: ObjectPredicate(format: predicate),
                                                          sortDescriptors: [FetchSortDescriptor(key: "group", ascending: true), FetchSortDescriptor(key: "rank", ascending: true)])
                let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "group", cacheName: "items")
                try controller.performFetch()
                let events = recorder.events
                let event = try XCTUnwrap(events.compactMap { event -> ResultsControllerEvent? in if case .resultsController(let e) = event { return e }; return nil }.last)
                let statements = events.filter { if case .statement = $0 { return true }; return false }.count
                return (event, statements, controller.sections?.map { "\($0.name)\($0.numberOfObjects)" } ?? [])
            }
        }
        let first = try fetch()
        XCTAssertEqual([first.0.cache, first.0.cacheReason], ["miss", "no cache"])
        XCTAssertEqual(first.2, ["A2", "B1", "C1"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.file("caches/items.json").path))
        let second = try fetch()
        XCTAssertEqual(second.0.cache, "hit")
        XCTAssertEqual(second.2, first.2)
        XCTAssertEqual(second.1, first.1 - 1, "no statement reads the section names: \(first.1) then \(second.1)")

        let changed = try fetch("hidden == NO AND rank > 0")
        XCTAssertEqual([changed.0.cache, changed.0.cacheReason], ["miss", "the request changed"])
        XCTAssertEqual(changed.2, ["A1", "B1", "C1"])

        let writer = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try writer.performAndWait {
            let c1 = try XCTUnwrap(writer.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: ObjectPredicate(format: "name == 'c1'"))).first)
            try c1.setValue("B", forKey: "group")
            try writer.save()
        }
        let stale = try fetch("hidden == NO AND rank > 0")
        XCTAssertEqual([stale.0.cache, stale.0.cacheReason], ["miss", "the rows changed"])
        XCTAssertEqual(stale.2, ["A1", "B2"], "never the stale sections")

        FetchedResultsController<ManagedObject>.deleteCache(withName: "items")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("caches/items.json").path))
        XCTAssertEqual(try fetch().0.cacheReason, "no cache")
        FetchedResultsController<ManagedObject>.deleteCache(withName: nil)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.file("caches").path), [])
    }

    /// A context's unsaved changes shape the sections: the cache (the store's sections) is neither used nor
    /// written then; a cache that cannot be written costs only the next fetch, said in the trace.
    func testTheSectionCacheIsBypassedWithUnsavedChangesAndSurvivesAnUnwritableFolder() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let (_, context) = try stack(dir, recorder: recorder)
        let saved = FetchedResultsController<ManagedObject>.cacheDirectory
        try Data("a file, not a folder".utf8).write(to: dir.file("blocked"))
        FetchedResultsController<ManagedObject>.cacheDirectory = dir.file("blocked/caches")
        defer { FetchedResultsController<ManagedObject>.cacheDirectory = saved }
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [FetchSortDescriptor(key: "group", ascending: true)])
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "group", cacheName: "x")
            try controller.performFetch()
            var event = try XCTUnwrap(recorder.events.compactMap { event -> ResultsControllerEvent? in if case .resultsController(let e) = event { return e }; return nil }.last)
            XCTAssertEqual(event.cache, "miss")
            XCTAssertTrue(event.cacheReason?.contains("not written") == true, event.cacheReason ?? "")
            XCTAssertEqual(controller.sections?.count, 3)
            try insert("z", "Z", 99, into: context)
            try controller.performFetch()
            event = try XCTUnwrap(recorder.events.compactMap { event -> ResultsControllerEvent? in if case .resultsController(let e) = event { return e }; return nil }.last)
            XCTAssertEqual(event.cache, "bypassed")
            XCTAssertEqual(controller.sections?.map(\.name), ["A", "B", "C", "Z"])
        }
    }

    /// Each round of changes is a `resultsController` trace event with its counts.
    func testEachRoundOfChangesIsTraced() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let (_, context) = try stack(dir, recorder: recorder)
        try context.performAndWait {
            let (controller, _) = try controller(context)
            recorder.removeAll()
            try insert("d1", "D", 40, into: context)
            context.delete(try item("a1", in: controller))
            try item("a2", in: controller).setValue("a2!", forKey: "name")
            context.processPendingChanges()
            let events = recorder.events.compactMap { event -> ResultsControllerEvent? in if case .resultsController(let e) = event { return e }; return nil }
            XCTAssertEqual(events.count, 1)
            let event = try XCTUnwrap(events.first)
            XCTAssertEqual([event.inserted, event.deleted, event.moved, event.updated, event.sectionsInserted, event.sectionsDeleted], [1, 1, 0, 1, 1, 0])
            XCTAssertEqual([event.kind, event.entity], ["changes", "Item"])
            XCTAssertEqual(event.objects, 4)
        }
    }

    /// Server code reads the rounds as an asynchronous sequence, by object ID; the sequence ends with the controller.
    func testChangeSetsAsAnAsyncSequence() async throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        var controller: FetchedResultsController<ManagedObject>? = try context.performAndWait { try self.controller(context).0 }
        let stream = try XCTUnwrap(controller).changeSets()
        let inserted = try context.performAndWait { () -> ManagedObjectID in
            let item = try insert("e1", "E", 50, into: context)
            context.processPendingChanges()
            return item.objectID
        }
        context.performAndWait { controller = nil }
        var rounds: [FetchedResultsChangeSet] = []
        for await round in stream { rounds.append(round) }
        XCTAssertEqual(rounds.count, 1)
        XCTAssertEqual(rounds.first?.sections, [.init(name: "E", index: 3, type: .insert)])
        XCTAssertEqual(rounds.first?.objects.map(\.objectID), [inserted])
        XCTAssertEqual(rounds.first?.objects.first?.newIndexPath, IndexPath(row: 0, section: 3))
    }

    /// After the context resets, the controller fetches again and reports what differs by object ID (Core Data's
    /// documentation is silent; the old objects are invalid, so the rows are compared).
    func testAResetFetchesAgain() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let (controller, log) = try controller(context)
            try insert("unsaved", "A", 1, into: context)
            context.processPendingChanges()
            log.lines = []
            context.reset()
            XCTAssertEqual(log.lines.first, "will")
            XCTAssertTrue(log.lines.contains("delete ? [0,1]→nil"), "\(log.lines)")
            XCTAssertEqual(controller.fetchedObjects?.count, 4)
            XCTAssertTrue(controller.fetchedObjects?.allSatisfy { $0.managedObjectContext === context } == true)
        }
    }
}
