import Foundation
import XCTest
@testable import Faultline

/// Query generations and the staleness interval: what a context's reads see after another context saved.
final class GenerationTests: XCTestCase {
    private func names(_ context: ManagedObjectContext) throws -> [String] {
        try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).compactMap { $0.value(forKey: "name") as? String }.sorted()
        }
    }

    func testAPinnedContextReadsItsGenerationUntilItMergesOrSaves() throws {
        let dir = TemporaryDirectory()
        let (coordinator, writer) = try makeStack(try makeTestModel(), in: dir)
        let rexID = try writer.performAndWait { () throws -> ManagedObjectID in
            let rex = try writer.insertNewObject(forEntityName: "Dog")
            try rex.setValue("Rex", forKey: "name")
            try writer.save()
            return rex.objectID
        }
        let pinned = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let unpinned = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(.current) }
        XCTAssertEqual(pinned.queryGenerationToken, .current)
        XCTAssertNil(unpinned.queryGenerationToken)
        let (pinnedRex, unpinnedRex) = (pinned.performAndWait { pinned.object(with: rexID) }, unpinned.performAndWait { unpinned.object(with: rexID) })

        var saved: SaveNotification?
        writer.addDidSaveObserver { saved = $0 }
        try writer.performAndWait {
            try writer.existingObject(with: rexID).setValue("Rex II", forKey: "name")
            let fido = try writer.insertNewObject(forEntityName: "Dog")
            try fido.setValue("Fido", forKey: "name")
            try writer.save()
        }
        // Fetches and faults of the pinned context see the store as it was when pinned.
        XCTAssertEqual(try names(pinned), ["Rex"])
        XCTAssertEqual(pinned.performAndWait { pinnedRex.value(forKey: "name") as? String }, "Rex", "a fault fired after the other save")
        XCTAssertEqual(try names(unpinned), ["Fido", "Rex II"])
        XCTAssertEqual(unpinned.performAndWait { unpinnedRex.value(forKey: "name") as? String }, "Rex II")

        // Merging the save moves the pinned context to the latest generation.
        let note = try XCTUnwrap(saved)
        pinned.performAndWait { pinned.mergeChanges(fromContextDidSave: note) }
        XCTAssertEqual(try names(pinned), ["Fido", "Rex II"])

        // So does its own save: another writer's change made before it becomes visible.
        try writer.performAndWait {
            let max = try writer.insertNewObject(forEntityName: "Dog")
            try max.setValue("Max", forKey: "name")
            try writer.save()
        }
        XCTAssertEqual(try names(pinned), ["Fido", "Rex II"])
        try pinned.performAndWait {
            let bello = try pinned.insertNewObject(forEntityName: "Dog")
            try bello.setValue("Bello", forKey: "name")
            try pinned.save()
        }
        XCTAssertEqual(try names(pinned), ["Bello", "Fido", "Max", "Rex II"])
        try pinned.performAndWait { try pinned.setQueryGenerationFrom(nil) }
        XCTAssertNil(pinned.queryGenerationToken)
    }

    func testStalenessIntervalDecidesWhetherAFaultUsesTheRowCache() throws {
        let dir = TemporaryDirectory()
        let (coordinator, holder) = try makeStack(try makeTestModel(), in: dir)
        holder.retainsRegisteredObjects = true
        let id = try holder.performAndWait { () throws -> ManagedObjectID in
            let rex = try holder.insertNewObject(forEntityName: "Dog")
            try rex.setValue("Rex", forKey: "name")
            try holder.save()      // `holder` keeps Rex's row in the coordinator's cache
            return rex.objectID
        }
        // Another process (a second coordinator) changes the row; this coordinator's cache still has the old one.
        let other = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel)
        try other.addPersistentStore(at: dir.file("store.sqlite"))
        let remote = ManagedObjectContext(.privateQueue, coordinator: other)
        try remote.performAndWait {
            try remote.existingObject(with: try XCTUnwrap(remote.objectID(forURIString: id.uriString))).setValue("Rex II", forKey: "name")
            try remote.save()
        }
        func fire(staleness: Double) -> (String?, Int) {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            context.stalenessInterval = staleness
            return context.performAndWait {
                let before = coordinator.statistics.statementsExecuted
                let name = context.object(with: id).value(forKey: "name") as? String
                return (name, coordinator.statistics.statementsExecuted - before)
            }
        }
        let infinite = fire(staleness: -1), hour = fire(staleness: 3600)
        XCTAssertEqual(infinite.0, "Rex", "any age accepted: the cached row, no SQL")
        XCTAssertEqual(infinite.1, 0)
        XCTAssertEqual(hour.0, "Rex", "the cached row is younger than an hour")
        XCTAssertEqual(hour.1, 0)
        let zero = fire(staleness: 0)
        XCTAssertEqual(zero.0, "Rex II", "no staleness accepted: the store is read")
        XCTAssertEqual(zero.1, 1)
    }
}
