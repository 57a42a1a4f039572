import Foundation
import XCTest
@testable import Faultline

/// The context's undo manager: attribute, relationship, insert and delete changes; grouping; levels; saves.
final class UndoTests: XCTestCase {
    private func names(_ objects: [ManagedObject]) -> [String] { objects.compactMap { $0.value(forKey: "name") as? String }.sorted() }

    func testUndoAndRedoOfAttributesRelationshipsInsertsAndDeletes() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let alice = try context.insertNewObject(forEntityName: "Person")
            try alice.setValue("Alice", forKey: "name")
            let bob = try context.insertNewObject(forEntityName: "Person")
            try bob.setValue("Bob", forKey: "name")
            let rex = try context.insertNewObject(forEntityName: "Dog")
            try rex.setValue("Rex", forKey: "name")
            try rex.setValue(alice, forKey: "owner")
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try walk.setValue(rex, forKey: "dog")
            try context.save()

            let undo = ContextUndoManager()
            context.undoManager = undo
            XCTAssertFalse(undo.canUndo)

            // An attribute.
            try rex.setValue("Max", forKey: "name")
            context.processPendingChanges()
            undo.undo()
            XCTAssertEqual(rex.value(forKey: "name") as? String, "Rex")
            XCTAssertFalse(context.hasChanges, "back to the saved state")
            undo.redo()
            XCTAssertEqual(rex.value(forKey: "name") as? String, "Max")
            XCTAssertTrue(rex.isUpdated)
            undo.undo()

            // A relationship, with its inverses.
            try rex.setValue(bob, forKey: "owner")
            XCTAssertEqual(names(alice.value(forKey: "dogs") as! [ManagedObject]), [])
            context.processPendingChanges()
            undo.undo()
            XCTAssertTrue(rex.value(forKey: "owner") as? ManagedObject === alice)
            XCTAssertEqual(names(alice.value(forKey: "dogs") as! [ManagedObject]), ["Rex"])
            XCTAssertEqual(names(bob.value(forKey: "dogs") as! [ManagedObject]), [])
            XCTAssertFalse(context.hasChanges)
            undo.redo()
            XCTAssertTrue(rex.value(forKey: "owner") as? ManagedObject === bob)
            XCTAssertEqual(names(bob.value(forKey: "dogs") as! [ManagedObject]), ["Rex"])
            XCTAssertEqual(names(alice.value(forKey: "dogs") as! [ManagedObject]), [])
            undo.undo()

            // An insert.
            let fido = try context.insertNewObject(forEntityName: "Dog")
            try fido.setValue("Fido", forKey: "name")
            context.processPendingChanges()
            undo.undo()
            XCTAssertTrue(context.insertedObjects.isEmpty)
            XCTAssertFalse(context.hasChanges)
            undo.redo()
            XCTAssertEqual(names(context.insertedObjects), ["Fido"])
            XCTAssertEqual(fido.value(forKey: "name") as? String, "Fido")
            undo.undo()

            // A delete with its cascade.
            context.delete(rex)
            context.processPendingChanges()
            XCTAssertTrue(walk.isDeleted, "cascaded at the end of the event")
            undo.undo()
            XCTAssertFalse(rex.isDeleted || walk.isDeleted)
            XCTAssertFalse(context.hasChanges)
            XCTAssertEqual((rex.value(forKey: "walks") as? [ManagedObject])?.count, 1)
            XCTAssertTrue(walk.value(forKey: "dog") as? ManagedObject === rex)
            undo.redo()
            XCTAssertTrue(rex.isDeleted && walk.isDeleted)
            undo.undo()
            try context.save()
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            XCTAssertEqual(names(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))), ["Rex"])
            XCTAssertEqual(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Walk")), 1)
        }
    }

    func testGroupingLevelsAndUndoPastASave() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let rex = try context.insertNewObject(forEntityName: "Dog")
            try rex.setValue("Rex", forKey: "name")
            try context.save()
            let undo = ContextUndoManager()
            undo.levelsOfUndo = 2
            context.undoManager = undo

            undo.beginUndoGrouping()
            try rex.setValue("A", forKey: "name")
            context.processPendingChanges()          // inside an explicit group: no new group
            try rex.setValue("B", forKey: "name")
            undo.endUndoGrouping()
            for name in ["C", "D"] {
                try rex.setValue(name, forKey: "name")
                context.processPendingChanges()
            }
            undo.undo()
            XCTAssertEqual(rex.value(forKey: "name") as? String, "C")
            undo.undo()
            XCTAssertEqual(rex.value(forKey: "name") as? String, "B", "one group: both A and B")
            XCTAssertFalse(undo.canUndo, "only two levels kept")
            try rex.setValue("E", forKey: "name")
            XCTAssertFalse(undo.canRedo, "a new change clears redo")

            // Undoing past a save makes the object dirty again; saving writes the older value back.
            try context.save()
            undo.undo()
            XCTAssertEqual(rex.value(forKey: "name") as? String, "B")
            XCTAssertTrue(rex.isUpdated)
            try context.save()
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try reader.performAndWait { names(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))) }, ["B"])
    }
}
