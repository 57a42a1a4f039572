import Foundation
import XCTest
@testable import Faultline

/// Runs `body` in a frame of its own, so that the references it makes are gone when it returns.
@inline(never) private func scope(_ body: () throws -> Void) rethrows { try body() }

/// Core Data's object lifetimes: unchanged objects are held weakly, changed ones strongly until saved or rolled
/// back, all of them with `retainsRegisteredObjects`; a dropped object lets go of its row-cache snapshot.
final class ObjectLifetimeTests: XCTestCase {
    /// Saves `count` dogs, each with one walk; returns a fresh context on the same coordinator.
    private func seeded(_ directory: TemporaryDirectory, count: Int = 3) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (coordinator, writer) = try makeStack(try makeTestModel(), in: directory)
        try writer.performAndWait {
            for i in 0..<count {
                let dog = try writer.insertNewObject(forEntityName: "Dog")
                try dog.setValue("dog \(i)", forKey: "name")
                let walk = try writer.insertNewObject(forEntityName: "Walk")
                try walk.setValue(dog, forKey: "dog")
            }
            try writer.save()
            writer.reset()
        }
        return (coordinator, ManagedObjectContext(.privateQueue, coordinator: coordinator))
    }

    private func dogs(_ context: ManagedObjectContext) throws -> [ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: "Dog")
        request.sortDescriptors = [FetchSortDescriptor(keyPath: "name")]
        return try context.fetch(request)
    }

    func testADroppedUnchangedObjectGoesAwayAndAChangedOneStays() throws {
        let directory = TemporaryDirectory()
        let (coordinator, context) = try seeded(directory)
        try context.performAndWait {
            weak var dropped: ManagedObject?
            weak var changed: ManagedObject?
            var changedID: ManagedObjectID?
            try scope {
                let fetched = try dogs(context)
                XCTAssertEqual(fetched.count, 3)
                XCTAssertEqual(context.registry.count, 3)
                dropped = fetched[0]
                changed = fetched[1]
                changedID = fetched[1].objectID
                try fetched[1].setValue("renamed", forKey: "name")
            }
            XCTAssertNil(dropped, "an unchanged object nobody references is deallocated")
            XCTAssertNotNil(changed, "an object with unsaved changes is held by its context")
            XCTAssertEqual(context.registry.count, 1)
            XCTAssertTrue(context.registeredObject(for: changedID!) === changed)
            // Only the changed object still holds its snapshot.
            XCTAssertEqual(coordinator.statistics.rowCacheCount, 1)

            try context.save()
            XCTAssertNil(changed, "once saved, the object is held weakly again")
            XCTAssertEqual(context.registry.count, 0)
            XCTAssertEqual(coordinator.statistics.rowCacheCount, 0)
        }
    }

    func testRollbackReleasesChangedObjects() throws {
        let directory = TemporaryDirectory()
        let (_, context) = try seeded(directory)
        try context.performAndWait {
            weak var changed: ManagedObject?
            weak var inserted: ManagedObject?
            try scope {
                let fetched = try dogs(context)
                try fetched[2].setValue("renamed", forKey: "name")
                changed = fetched[2]
                inserted = try context.insertNewObject(forEntityName: "Dog")
            }
            XCTAssertNotNil(changed)
            XCTAssertNotNil(inserted)
            context.rollback()
            XCTAssertNil(changed)
            XCTAssertNil(inserted)
        }
    }

    func testRetainsRegisteredObjectsKeepsBoth() throws {
        let directory = TemporaryDirectory()
        let (coordinator, context) = try seeded(directory)
        try context.performAndWait {
            context.retainsRegisteredObjects = true
            weak var unchanged: ManagedObject?
            weak var changed: ManagedObject?
            try scope {
                let fetched = try dogs(context)
                unchanged = fetched[0]
                changed = fetched[1]
                try fetched[1].setValue("renamed", forKey: "name")
            }
            XCTAssertNotNil(unchanged, "retainsRegisteredObjects keeps unchanged objects")
            XCTAssertNotNil(changed)
            try context.save()
            XCTAssertNotNil(unchanged)
            XCTAssertNotNil(changed, "and saved ones")
            XCTAssertEqual(coordinator.statistics.rowCacheCount, 3)

            // Turned off, the context holds weakly again: the registered objects go.
            context.retainsRegisteredObjects = false
            XCTAssertNil(unchanged)
            XCTAssertNil(changed)
            XCTAssertEqual(context.registry.count, 0)
            XCTAssertEqual(coordinator.statistics.rowCacheCount, 0)
        }
    }

    func testAnObjectKeptByTheProgramStaysUniqued() throws {
        let directory = TemporaryDirectory()
        let (coordinator, context) = try seeded(directory)
        try context.performAndWait {
            let kept = try dogs(context)[0]
            let statements = coordinator.statistics.statementsExecuted
            let again = try dogs(context)[0]
            XCTAssertTrue(kept === again, "one object per row while the program holds it")
            XCTAssertEqual(coordinator.statistics.statementsExecuted, statements + 1)
            XCTAssertTrue(context.object(with: kept.objectID) === kept)
        }
    }

    func testAFiredToOneHoldsItsDestination() throws {
        let directory = TemporaryDirectory()
        let (coordinator, context) = try seeded(directory, count: 1)
        try context.performAndWait {
            let walk = try context.fetch(FetchRequest<ManagedObject>(entityName: "Walk"))[0]
            weak var dog: ManagedObject?
            scope {
                let destination = walk.value(forKey: "dog") as? ManagedObject
                XCTAssertEqual(destination?.value(forKey: "name") as? String, "dog 0")
                dog = destination
            }
            XCTAssertNotNil(dog, "the walk holds the dog it reached")
            let statements = coordinator.statistics.statementsExecuted
            XCTAssertTrue(walk.value(forKey: "dog") as? ManagedObject === dog)
            XCTAssertEqual(coordinator.statistics.statementsExecuted, statements)
            // Turned back into a fault, the walk lets go of the dog, which nothing else holds (its `walks` never fired).
            context.refresh(walk, mergeChanges: false)
            XCTAssertNil(dog)
        }
    }

    func testReleasingALongChainDoesNotRecurse() throws {
        // Walking `next` from the first link makes each link hold the next: once the program lets go of the first,
        // 20,000 objects are reachable only through each other. The context releases them in a loop, not recursively.
        let directory = TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Link", properties: [
                AttributeDescription(name: "n", type: .integer64),
                RelationshipDescription(name: "next", destination: "Link", inverse: "previous"),
                RelationshipDescription(name: "previous", destination: "Link", inverse: "next"),
            ]),
        ])
        let (_, context) = try makeStack(model, in: directory)
        let length = 20_000
        try context.performAndWait {
            var previous: ManagedObject?
            for i in 0..<length {
                let link = try context.insertNewObject(forEntityName: "Link")
                try link.setValue(Int64(i), forKey: "n")
                if let previous { try link.setValue(previous, forKey: "previous") }
                previous = link
            }
            try context.save()
            context.reset()
        }
        // A thread with a small stack, as a dispatch queue's: a recursive release of the chain would overflow it.
        let done = expectation(description: "walked")
        let thread = Thread {
            context.performAndWait {
                weak var head: ManagedObject?
                scope {
                    let request = FetchRequest<ManagedObject>(entityName: "Link")
                    request.predicate = try! ObjectPredicate(parsing: "n == 0")
                    let first = try! context.fetch(request)[0]
                    head = first
                    withExtendedLifetime(first) {
                        var link = first
                        while let next = link.value(forKey: "next") as? ManagedObject { link = next }
                        XCTAssertEqual(link.value(forKey: "n") as? Int64, Int64(length - 1))
                        XCTAssertEqual(context.registry.count, length)
                    }
                }
                XCTAssertNil(head)
                XCTAssertEqual(context.registry.count, 0)
            }
            done.fulfill()
        }
        thread.stackSize = 256 * 1024
        thread.start()
        wait(for: [done], timeout: 120)
    }
}

extension ObjectLifetimeTests {
    func testABatchedResultDroppedLeavesNoBatchBehind() throws {
        let directory = TemporaryDirectory()
        let (coordinator, context) = try seeded(directory, count: 6)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog")
            request.sortDescriptors = [FetchSortDescriptor(keyPath: "name")]
            request.fetchBatchSize = 2
            // The members keep their batch; nothing else does.
            weak var dropped: ManagedObjectContext.FaultBatch?
            try scope {
                let dogs = try context.fetch(request)
                XCTAssertEqual(dogs.count, 6)
                dropped = dogs[0].batch
                XCTAssertNotNil(dropped)
                XCTAssertEqual(dogs.map(\.batchIndex), [0, 1, 2, 3, 4, 5])
            }
            XCTAssertNil(dropped, "the batch left with the result")
            XCTAssertEqual(context.registry.count, 0)

            // A held result still fulfils a batch with one statement, skipping members that went away.
            let dogs = try context.fetch(request)
            weak var batch = dogs[0].batch
            var kept = Array(dogs.prefix(1)) + Array(dogs.suffix(3))
            _ = consume dogs
            XCTAssertEqual(batch?.members.map { $0 != nil }, [true, false, false, true, true, true], "dogs 1 and 2 left memory")
            XCTAssertEqual(context.registry.count, 4)
            let statements = coordinator.statistics.statementsExecuted
            XCTAssertEqual(kept[0].value(forKey: "name") as? String, "dog 0")
            XCTAssertEqual(coordinator.statistics.statementsExecuted - statements, 1)
            XCTAssertTrue(kept[1].isFault, "dog 3 is in the next batch")
            XCTAssertEqual(batch?.members.map { $0 != nil }, [false, false, false, true, true, true], "dog 0 was fulfilled")
            kept.removeAll()
            XCTAssertNil(batch)
        }
    }

    func testAnUndoManagerKeepsTheObjectsItCanRestore() throws {
        let directory = TemporaryDirectory()
        let (_, context) = try seeded(directory)
        try context.performAndWait {
            context.undoManager = ContextUndoManager()
            weak var changed: ManagedObject?
            try scope {
                let dog = try dogs(context)[0]
                try dog.setValue("renamed", forKey: "name")
                changed = dog
            }
            try context.save()
            XCTAssertNotNil(changed, "the undo stack holds the object after the save (seed 004 L259–260)")
            context.undoManager?.removeAllActions()
            XCTAssertNil(changed)
        }
    }
}

extension ObjectLifetimeTests {
    /// The trace's gauges: registered and materialized objects (kept as counters, checked here against a scan of the
    /// registry after each step) and the row cache's size, on every fetch and save event.
    func testFetchAndSaveEventsCarryTheContextsGauges() throws {
        let directory = TemporaryDirectory()
        let model = try makeTestModel()
        do { _ = try seeded(directory, count: 4) }
        let recorder = InMemoryProbeRecorder()
        let trace = try TraceWriter(path: directory.file("trace.jsonl").path)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(), recorders: [recorder, trace]))
        try coordinator.addPersistentStore(at: directory.file("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        func scanned() -> (Int, Int) {
            let objects = context.registeredObjects
            return (objects.count, objects.filter { !$0.isFault }.count)
        }
        func lastGauges() -> ContextGauges? {
            switch recorder.events.last(where: { if case .fetch = $0 { return true }; if case .save = $0 { return true }; return false }) {
            case .fetch(let e)?: return e.gauges
            case .save(let e)?: return e.gauges
            default: return nil
            }
        }
        try context.performAndWait {
            let faults = FetchRequest<ManagedObject>(entityName: "Dog")
            faults.sortDescriptors = [FetchSortDescriptor(keyPath: "name")]
            let dogs = try context.fetch(faults)
            XCTAssertEqual(lastGauges(), ContextGauges(registeredObjects: 4, materializedObjects: 0, rowCacheRows: 4))
            _ = dogs[0].value(forKey: "name")
            _ = dogs[1].value(forKey: "name")
            XCTAssertEqual(context.materializedCount, 2)
            context.refresh(dogs[1], mergeChanges: false)
            XCTAssertEqual(context.materializedCount, 1)
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try walk.setValue(dogs[0], forKey: "dog")
            try dogs[2].setValue("renamed", forKey: "name")
            XCTAssertEqual(scanned().1, context.materializedCount + context.insertedCount)
            try context.save()
            let (registered, materialized) = scanned()
            XCTAssertEqual(lastGauges()?.registeredObjects, registered)
            XCTAssertEqual(lastGauges()?.materializedObjects, materialized)
            XCTAssertEqual(lastGauges()?.rowCacheRows, coordinator.statistics.rowCacheCount)
            try context.delete(XCTUnwrap(dogs.last))
            try context.save()
            XCTAssertEqual(context.materializedCount, scanned().1)
            withExtendedLifetime(dogs) {}
        }
        try context.performAndWait {
            // The program let go of everything, but dog 0 and its walks hold each other (its fired `walks`, their
            // fired `dog`): a cycle, as in Core Data, until one side turns back into a fault.
            XCTAssertEqual(scanned().0, 3)
            XCTAssertEqual(context.materializedCount, scanned().1)
            for object in context.registeredObjects { context.refresh(object, mergeChanges: false) }
            XCTAssertEqual(context.registry.count, 0)
            XCTAssertEqual(context.materializedCount, 0)
            XCTAssertEqual(coordinator.statistics.rowCacheCount, 0)
            // Measured when the fetch ends, while its result is still held.
            _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
            XCTAssertEqual(lastGauges(), ContextGauges(registeredObjects: 3, materializedObjects: 0, rowCacheRows: 3))
        }
        coordinator.probes.flush()
        let lines = try String(contentsOfFile: directory.file("trace.jsonl").path, encoding: .utf8).split(separator: "\n")
        let gauged = lines.filter { $0.contains(#""registeredObjects":"#) && $0.contains(#""materializedObjects":"#) && $0.contains(#""rowCacheRows":"#) }
        XCTAssertEqual(gauged.count, lines.filter { $0.contains(#""type":"fetch""#) || $0.contains(#""type":"save""#) }.count)
        XCTAssertTrue(lines.contains { $0.contains(#""type":"fetch""#) && $0.contains(#""registeredObjects":4,"materializedObjects":0,"rowCacheRows":4"#) })
    }
}

extension ObjectLifetimeTests {
    func testLevelsOfUndoBoundsWhatTheUndoManagerKeeps() throws {
        let directory = TemporaryDirectory()
        let (_, context) = try seeded(directory)
        try context.performAndWait {
            let undo = ContextUndoManager()
            undo.levelsOfUndo = 1
            undo.groupsByEvent = false
            context.undoManager = undo
            weak var first: ManagedObject?
            weak var second: ManagedObject?
            try scope {
                let fetched = try dogs(context)
                undo.beginUndoGrouping()
                try fetched[0].setValue("one", forKey: "name")
                undo.endUndoGrouping()
                try context.save()
                first = fetched[0]
                second = fetched[1]
                undo.beginUndoGrouping()
                try fetched[1].setValue("two", forKey: "name")
                undo.endUndoGrouping()
            }
            XCTAssertNil(first, "saved, and its undo group fell off the one level kept")
            XCTAssertNotNil(second, "unsaved changes, and the group kept")
            undo.undo()
            XCTAssertEqual(second?.value(forKey: "name") as? String, "dog 1")
        }
    }
}
