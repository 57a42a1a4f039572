import Foundation
import XCTest
@testable import Faultline

/// Inserted objects' values share blocks of rows and are written in place while the object alone holds its row
/// (`ManagedObject.ownsValueRow`): each holder that keeps the row — the row cache after a save, a parent context, an
/// undo record, `committedValues()` — must see it as it was when it took it, and neighbours never see each other's.
final class InsertedValuesTests: XCTestCase {
    func testNeighboursInOneBlockKeepTheirOwnValues() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let count = SlotRowWriter.insertRowsPerBlock * 2 + 3
            let walks = try (0..<count).map { _ in try context.insertNewObject(forEntityName: "Walk") }
            XCTAssertEqual(walks.count, count)
            XCTAssertTrue(walks.allSatisfy { $0.flags.contains(.ownsValueRow) }, "an inserted object owns its row")
            XCTAssertTrue(walks[0].values.block === walks[1].values.block, "neighbours share a block")
            for (i, walk) in walks.enumerated() { try walk.setValue(Double(i), forKey: "distance") }
            for (i, walk) in walks.enumerated() { XCTAssertEqual(walk.value(forKey: "distance") as? Double, Double(i)) }
            XCTAssertTrue(walks.allSatisfy { $0.flags.contains(.ownsValueRow) }, "written in place, not copied out")
            // Defaults are each object's own: a later insert still starts from the default.
            let fresh = try context.insertNewObject(forEntityName: "Walk")
            XCTAssertEqual(fresh.value(forKey: "distance") as? Double, 1.5)
        }
    }

    func testARelationshipIsNeverWrittenIntoASharedBlock() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let dog = try context.insertNewObject(forEntityName: "Dog")
            let walk = try context.insertNewObject(forEntityName: "Walk")
            let shared = try XCTUnwrap(walk.values.block)
            let start = walk.values.start, width = walk.values.count
            try walk.setValue(dog, forKey: "dog")
            XCTAssertFalse(walk.flags.contains(.ownsValueRow), "copied out of the shared block")
            XCTAssertFalse(walk.values.block === shared)
            shared.withUnsafeMutablePointerToElements { slots in
                for i in start..<(start + width) where slots[i].holdsObject { XCTFail("slot \(i - start) holds an object") }
            }
            XCTAssertTrue(walk.value(forKey: "dog") as? ManagedObject === dog)
        }
    }

    func testAnObjectLetGoOfClearsOnlyItsOwnRow() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _) = try makeStack(try makeTestModel(), in: dir)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            var first: ManagedObject? = try context.insertNewObject(forEntityName: "Dog")
            let second = try context.insertNewObject(forEntityName: "Dog")
            try first!.setValue("Rex", forKey: "name")
            try second.setValue("Fido", forKey: "name")
            let block = try XCTUnwrap(second.values.block)
            XCTAssertTrue(first!.values.block === block)
            let start = first!.values.start
            context.rollback() // the context lets go of the unsaved insert; the program then does
            first = nil
            block.withUnsafeMutablePointerToElements { slots in
                if case .text = slots[start] { XCTFail("the released object's name is still in the block") }
            }
            XCTAssertEqual(second.value(forKey: "name") as? String, "Fido")
        }
    }

    func testTheSavedSnapshotIsNotWrittenThrough() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try makeTestModel(), in: dir)
        let id = try context.performAndWait { () throws -> ManagedObjectID in
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try walk.setValue(3.0, forKey: "distance")
            try context.save()
            XCTAssertFalse(walk.flags.contains(.ownsValueRow), "saved: the row cache holds the row too")
            try walk.setValue(4.0, forKey: "distance")
            XCTAssertEqual(walk.committedValues()["distance"] as? Double, 3.0)
            XCTAssertEqual(walk.value(forKey: "distance") as? Double, 4.0)
            return walk.objectID
        }
        // Another context faults the row from the row cache: the saved value, not the unsaved change.
        let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let walk = try other.existingObject(with: id)
            XCTAssertEqual(walk.value(forKey: "distance") as? Double, 3.0)
        }
    }

    func testCommittedValuesAndChangedValuesKeepWhatTheyRead() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try walk.setValue(2.0, forKey: "distance")
            let committed = walk.committedValues()
            XCTAssertFalse(walk.flags.contains(.ownsValueRow), "handed out")
            try walk.setValue(5.0, forKey: "distance")
            XCTAssertEqual(committed["distance"] as? Double, 2.0)
            XCTAssertEqual(walk.value(forKey: "distance") as? Double, 5.0)
            XCTAssertEqual(walk.changedValues()["distance"] as? Double, 5.0)
        }
    }

    func testAParentKeepsTheStateAChildSaved() throws {
        let dir = TemporaryDirectory()
        let (_, root) = try makeStack(try makeTestModel(), in: dir)
        let child = ManagedObjectContext(.privateQueue, parent: root)
        let id = try child.performAndWait { () throws -> ManagedObjectID in
            let walk = try child.insertNewObject(forEntityName: "Walk")
            try walk.setValue(7.0, forKey: "distance")
            try child.save()
            try walk.setValue(8.0, forKey: "distance")
            XCTAssertEqual(walk.value(forKey: "distance") as? Double, 8.0)
            return walk.objectID
        }
        try root.performAndWait {
            let walk = try root.existingObject(with: id)
            XCTAssertEqual(walk.value(forKey: "distance") as? Double, 7.0, "the parent has what the child saved")
        }
    }

    func testUndoRestoresAnInsertedObjectsValues() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let undo = ContextUndoManager()
            context.undoManager = undo
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try walk.setValue(2.0, forKey: "distance")
            context.processPendingChanges()
            try walk.setValue(9.0, forKey: "distance")
            context.processPendingChanges()
            undo.undo()
            XCTAssertEqual(walk.value(forKey: "distance") as? Double, 2.0)
        }
    }
}
