import Foundation
import XCTest
@testable import Faultline

/// Will-save and did-save notifications, and merging a save into another context.
final class SaveNotificationTests: XCTestCase {
    func testDidSaveCarriesTheSetsAndMergesIntoAnotherContext() throws {
        let dir = TemporaryDirectory()
        let (coordinator, background) = try makeStack(try makeTestModel(), in: dir)
        try background.performAndWait {
            for name in ["Rex", "Fido", "Bello"] {
                let dog = try background.insertNewObject(forEntityName: "Dog")
                try dog.setValue(name, forKey: "name")
            }
            try background.save()
        }
        // The main context holds Rex and Fido, materialized.
        let main = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let (mainRex, mainFido) = try main.performAndWait { () throws -> (ManagedObject, ManagedObject) in
            var request = FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            request.returnsObjectsAsFaults = false
            let dogs = try main.fetch(request)   // Bello, Fido, Rex
            return (dogs[2], dogs[1])
        }
        var notifications: [SaveNotification] = []
        var willSaves = 0
        background.addWillSaveObserver { willSaves += 1 }
        let token = background.addDidSaveObserver { notifications.append($0) }
        try background.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            request.returnsObjectsAsFaults = false
            let dogs = try background.fetch(request)
            try dogs[2].setValue("Rex II", forKey: "name")   // update Rex
            background.delete(dogs[1])                        // delete Fido
            let max = try background.insertNewObject(forEntityName: "Dog")
            try max.setValue("Max", forKey: "name")
            try background.save()
            try background.save()                             // nothing to save: no notification
        }
        XCTAssertEqual(willSaves, 1)
        let note = try XCTUnwrap(notifications.first)
        XCTAssertEqual(notifications.count, 1)
        XCTAssertEqual(note.updated, [mainRex.objectID])
        XCTAssertEqual(note.deleted, [mainFido.objectID])
        XCTAssertEqual(note.inserted.count, 1)
        XCTAssertFalse(note.inserted[0].isTemporaryID, "IDs are permanent after the save")
        try main.performAndWait {
            XCTAssertEqual(mainRex.value(forKey: "name") as? String, "Rex", "not merged yet")
            main.mergeChanges(fromContextDidSave: note)
            XCTAssertEqual(mainRex.value(forKey: "name") as? String, "Rex II")
            XCTAssertNil(mainFido.managedObjectContext, "the deleted dog left the main context")
            XCTAssertFalse(main.registeredObjects.contains { $0 === mainFido })
        }
        background.removeObserver(token)
        try background.performAndWait {
            let dog = try background.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Rover", forKey: "name")
            try background.save()
        }
        XCTAssertEqual(notifications.count, 1, "removed observers hear nothing")
    }

    /// A save through another coordinator on the same file: merging its notification drops stale cached rows.
    func testMergeFromAnotherCoordinatorReadsTheNewRow() throws {
        let dir = TemporaryDirectory()
        let (coordinator, writer) = try makeStack(try makeTestModel(), in: dir)
        let id = try writer.performAndWait { () throws -> ManagedObjectID in
            let dog = try writer.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Rex", forKey: "name")
            try writer.save()
            return dog.objectID
        }
        let otherCoordinator = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel)
        try otherCoordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let reader = ManagedObjectContext(.privateQueue, coordinator: otherCoordinator)
        let dog = try reader.performAndWait { () throws -> ManagedObject in
            let dog = try reader.existingObject(with: try XCTUnwrap(reader.objectID(forURIString: id.uriString)))
            XCTAssertEqual(dog.value(forKey: "name") as? String, "Rex")
            return dog
        }
        var note: SaveNotification?
        writer.addDidSaveObserver { note = $0 }
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue("Rex II", forKey: "name")
            try writer.save()
        }
        try reader.performAndWait {
            reader.mergeChanges(fromContextDidSave: try XCTUnwrap(note))
            XCTAssertEqual(dog.value(forKey: "name") as? String, "Rex II")
        }
    }
}
