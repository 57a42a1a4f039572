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
            let request = FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            request.returnsObjectsAsFaults = false
            let dogs = try main.fetch(request)   // Bello, Fido, Rex
            return (dogs[2], dogs[1])
        }
        var notifications: [SaveNotification] = []
        var willSaves = 0
        background.addWillSaveObserver { willSaves += 1 }
        let token = background.addDidSaveObserver { notifications.append($0) }
        try background.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
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
        main.performAndWait {
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

/// Objects-did-change notifications: the sets, the changed keys, and when they go out.
final class ObjectsDidChangeTests: XCTestCase {
    private func names(_ objects: [ManagedObject]) -> [String] {
        objects.map { ($0.value(forKey: "name") ?? $0.value(forKey: "label")) as? String ?? "?" }.sorted()
    }

    func testNotificationsCarryTheSetsAndTheChangedKeys() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try makeTestModel(), in: dir)
        var notes: [ObjectsDidChange] = []
        try context.performAndWait {
            let alice = try context.insertNewObject(forEntityName: "Person")
            try alice.setValue("Alice", forKey: "name")
            for name in ["Rex", "Fido"] {
                let dog = try context.insertNewObject(forEntityName: "Dog")
                try dog.setValue(name, forKey: "name")
            }
            try context.save()
            let token = context.addObjectsDidChangeObserver { notes.append($0) }
            context.processPendingChanges()
            XCTAssertTrue(notes.isEmpty, "nothing changed since the observer was added")

            let dogs = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")]))
            let (fido, rex) = (dogs[0], dogs[1])
            try rex.setValue("Rex II", forKey: "name")
            try rex.setValue(alice, forKey: "owner")
            context.delete(fido)
            let max = try context.insertNewObject(forEntityName: "Dog")
            try max.setValue("Max", forKey: "name")
            let gone = try context.insertNewObject(forEntityName: "Tag")
            context.delete(gone)                                  // inserted and deleted: in no list
            context.processPendingChanges()
            XCTAssertEqual(notes.count, 1)
            let note = notes[0]
            XCTAssertEqual(names(note.inserted), ["Max"])
            XCTAssertEqual(names(note.updated), ["Alice", "Rex II"])
            XCTAssertEqual(note.changedKeys(of: rex), ["name", "owner"])
            XCTAssertEqual(note.changedKeys(of: alice), ["dogs"], "the inverse changed too")
            XCTAssertEqual(note.changedKeys(of: max), [], "inserted objects are reported as inserted only")
            XCTAssertTrue(note.deleted.count == 1 && note.deleted[0] === fido)
            XCTAssertTrue(note.refreshed.isEmpty)
            context.processPendingChanges()
            XCTAssertEqual(notes.count, 1, "no second notification without new changes")

            try max.setValue("Maximus", forKey: "name")
            try context.save()                                    // a save processes pending changes first
            XCTAssertEqual(notes.count, 2)
            XCTAssertEqual(notes[1].changedKeys(of: max), ["name"], "changed after its insertion was announced")
            XCTAssertEqual(notes[1].inserted.count, 0)

            try max.setValue("Max", forKey: "name")
            context.refresh(rex, mergeChanges: false)
            context.processPendingChanges()
            XCTAssertEqual(notes.count, 3)
            XCTAssertTrue(notes[2].updated.count == 1 && notes[2].updated[0] === max)
            XCTAssertEqual(notes[2].changedKeys(of: max), ["name"])
            XCTAssertTrue(notes[2].refreshed.count == 1 && notes[2].refreshed[0] === rex)
            context.removeObserver(token)
            try max.setValue("Max II", forKey: "name")
            context.processPendingChanges()
            XCTAssertEqual(notes.count, 3, "removed observers hear nothing")
        }

        // A perform block ends with the notification; a merge sends the refreshed and deleted objects.
        let main = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let mainNotes = NoteBox()
        let mainDogs = try main.performAndWait { () throws -> [ManagedObject] in
            main.addObjectsDidChangeObserver { mainNotes.notes.append($0) }
            let request = FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            request.returnsObjectsAsFaults = false
            return try main.fetch(request)
        }
        let firstID = main.performAndWait { mainDogs[0].objectID }
        main.perform {
            try? main.registeredObject(for: firstID)?.setValue("Max III", forKey: "name")
        }
        main.performAndWait {
            XCTAssertEqual(mainNotes.notes.count, 1)
            XCTAssertEqual(mainNotes.notes.first?.changedKeys(of: mainDogs[0]), ["name"])
            main.rollback()
            mainNotes.notes.removeAll()
        }
        var saved: SaveNotification?
        context.addDidSaveObserver { saved = $0 }
        try context.performAndWait {
            let dogs = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")]))
            try dogs[1].setValue("Rex III", forKey: "name")
            context.delete(dogs[0])
            try context.save()
        }
        let note = try XCTUnwrap(saved)
        main.performAndWait {
            main.processPendingChanges()
            mainNotes.notes.removeAll()
            main.mergeChanges(fromContextDidSave: note)
            XCTAssertEqual(mainNotes.notes.count, 1)
            XCTAssertTrue(mainNotes.notes[0].refreshed.count == 1 && mainNotes.notes[0].refreshed[0] === mainDogs[1])
            XCTAssertTrue(mainNotes.notes[0].deleted.count == 1 && mainNotes.notes[0].deleted[0] === mainDogs[0])
        }
    }

    func testAParentHearsItsChildsSave() throws {
        let dir = TemporaryDirectory()
        let (_, root) = try makeStack(try makeTestModel(), in: dir)
        let notes = NoteBox()
        let rex = try root.performAndWait { () throws -> ManagedObject in
            let rex = try root.insertNewObject(forEntityName: "Dog")
            try rex.setValue("Rex", forKey: "name")
            try root.save()
            root.addObjectsDidChangeObserver { notes.notes.append($0) }
            return rex
        }
        let child = ManagedObjectContext(.privateQueue, parent: root)
        try child.performAndWait {
            let dog = try child.existingObject(with: rex.objectID)
            try dog.setValue("Rex II", forKey: "name")
            let walk = try child.insertNewObject(forEntityName: "Walk")
            try walk.setValue(dog, forKey: "dog")
            try child.save()
        }
        root.performAndWait {
            root.processPendingChanges()
            XCTAssertEqual(notes.notes.count, 1)
            XCTAssertEqual(notes.notes.first?.inserted.map(\.entity.name), ["Walk"])
            XCTAssertEqual(notes.notes.first?.changedKeys(of: rex), ["name", "walks"])
        }
    }
}

/// Notifications collected on a context's queue and read back on it.
final class NoteBox: @unchecked Sendable {
    var notes: [ObjectsDidChange] = []
}
