import Foundation
import XCTest
@testable import Faultline

/// Core Data's behaviour at the edges of a context, each test naming the documented outcome.
final class ContextDetailTests: XCTestCase {
    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: "", minValue: 1, maxValue: 20, regularExpression: "[A-Za-z ]*"),
                AttributeDescription(name: "count", type: .integer16, minValue: 0, maxValue: 100),
                AttributeDescription(name: "scratch", type: .string, isTransient: true),
                RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
            ]),
            EntityDescription(name: "Owner", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "items", destination: "Item", inverse: "owner", isToMany: true),
            ]),
        ])
    }

    private func stack(_ dir: TemporaryDirectory) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(at: dir.file("Items.sqlite"))
        return (coordinator, ManagedObjectContext(.privateQueue, coordinator: coordinator))
    }

    /// Core Data: with `shouldDeleteInaccessibleFaults` true (the default), a fault whose row another context
    /// deleted fires as an object marked deleted, its attributes nil or zero; false: not marked deleted. Either way
    /// `existingObject(with:)` throws for it.
    func testAFaultWhoseRowIsGoneFiresAsADeletedObject() throws {
        for deletes in [true, false] {
            let dir = TemporaryDirectory()
            let (coordinator, context) = try stack(dir)
            context.shouldDeleteInaccessibleFaults = deletes
            let id = try context.performAndWait { () -> ManagedObjectID in
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue("Lamp", forKey: "name")
                try item.setValue(Int16(3), forKey: "count")
                try context.save()
                context.reset()
                return item.objectID
            }
            let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try other.performAndWait {
                other.delete(try other.existingObject(with: id))
                try other.save()
            }
            try context.performAndWait {
                let fault = context.object(with: id)
                XCTAssertTrue(fault.isFault)
                XCTAssertNil(fault.value(forKey: "name"), "deletes \(deletes): attributes are nil")
                XCTAssertEqual(fault[Attribute<Int16>("count")], 0, "deletes \(deletes): scalars are zero")
                XCTAssertEqual(fault.isDeleted, deletes, "marked deleted only when shouldDeleteInaccessibleFaults")
                XCTAssertFalse(context.hasChanges, "nothing to save: the row is already gone")
                XCTAssertNotNil(context.lastFaultError)
                XCTAssertThrowsError(try context.existingObject(with: id))
                // Deleting it again is a no-op, and a save succeeds.
                context.delete(fault)
                XCTAssertNoThrow(try context.save())
            }
        }
    }

    /// Core Data: merging another context's save registers its inserted objects as faults and reports them as
    /// inserted in the objects-did-change notification (how a main-queue list learns of a background import).
    func testAMergeRegistersAnotherContextsInsertsAndReportsThem() throws {
        let dir = TemporaryDirectory()
        let (coordinator, view) = try stack(dir)
        let notes = NoteBox()
        view.performAndWait { _ = view.addObjectsDidChangeObserver { notes.notes.append($0) } }
        let background = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        var saved: SaveNotification?
        _ = background.addDidSaveObserver { saved = $0 }
        let ids = try background.performAndWait { () -> [ManagedObjectID] in
            let items = try ["Chair", "Shelf"].map { name -> ManagedObject in
                let item = try background.insertNewObject(forEntityName: "Item")
                try item.setValue(name, forKey: "name")
                return item
            }
            try background.save()
            return items.map(\.objectID)
        }
        let note = try XCTUnwrap(saved)
        try view.performAndWait {
            view.mergeChanges(fromContextDidSave: note)
            XCTAssertEqual(notes.notes.count, 1)
            let inserted = try XCTUnwrap(notes.notes.first?.inserted)
            XCTAssertEqual(Set(inserted.map(\.objectID)), Set(ids))
            XCTAssertTrue(inserted.allSatisfy { $0.isFault && !$0.isInserted }, "registered as faults, not as the view's own inserts")
            XCTAssertTrue(view.registeredObject(for: ids[0]) === inserted.first { $0.objectID == ids[0] })
            XCTAssertEqual(Set(inserted.compactMap { $0.value(forKey: "name") as? String }), ["Chair", "Shelf"])
            XCTAssertFalse(view.hasChanges)
        }
    }

    /// Core Data: `reset()` invalidates every object of the context — turned into faults (their fault hooks called),
    /// no context, no values: an old object never answers with a stale value, and setting one is an error.
    func testResetInvalidatesTheContextsObjects() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Hooked", properties: [AttributeDescription(name: "name", type: .string)],
                              representedClassName: "FaultlineTests.HookedItem"),
        ])
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let saved = try XCTUnwrap(try context.insertNewObject(forEntityName: "Hooked") as? HookedItem)
            try saved.setValue("kept", forKey: "name")
            try context.save()
            let pending = try XCTUnwrap(try context.insertNewObject(forEntityName: "Hooked") as? HookedItem)
            try pending.setValue("pending", forKey: "name")
            HookedItem.events = []
            context.reset()
            XCTAssertEqual(HookedItem.events.sorted(), ["did kept", "did pending", "will kept", "will pending"])
            for object in [saved, pending] {
                XCTAssertNil(object.managedObjectContext)
                XCTAssertTrue(object.isFault)
                XCTAssertFalse(object.isInserted || object.isUpdated || object.isDeleted || object.hasChanges)
                XCTAssertNil(object.value(forKey: "name"), "never a stale value")
                XCTAssertThrowsError(try object.setValue("x", forKey: "name")) { XCTAssertTrue("\($0)".contains("invalidated (its context was reset"), "\($0)") }
            }
            XCTAssertFalse(context.hasChanges)
            let again = try context.fetch(FetchRequest<ManagedObject>(entityName: "Hooked"))
            XCTAssertEqual(again.map { $0.value(forKey: "name") as? String }, ["kept"])
            XCTAssertFalse(again[0] === saved, "a fetch gives a new object")
        }
    }

    /// Core Data's `shouldRefreshRefetchedObjects`: false (the default), an object the context holds keeps its
    /// values when a fetch returns its row changed by another writer; true, it takes the row's values and keeps its
    /// own unsaved changes.
    func testRefetchedObjectsKeepOrTakeTheStoresValues() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try stack(dir)
        let item = try context.performAndWait { () -> ManagedObject in
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Lamp", forKey: "name")
            try item.setValue(Int16(1), forKey: "count")
            try context.save()
            return item
        }
        let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let theirs = try XCTUnwrap(try other.fetch(FetchRequest<ManagedObject>(entityName: "Item")).first)
            try theirs.setValue("Lantern", forKey: "name")
            try theirs.setValue(Int16(2), forKey: "count")
            try other.save()
        }
        try context.performAndWait {
            try item.setValue(Int16(9), forKey: "count")                  // an unsaved change of its own
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.returnsObjectsAsFaults = false
            _ = try context.fetch(request)
            XCTAssertEqual(item.value(forKey: "name") as? String, "Lamp", "by default a refetched object keeps its values")
            request.shouldRefreshRefetchedObjects = true
            _ = try context.fetch(request)
            XCTAssertEqual(item.value(forKey: "name") as? String, "Lantern", "refreshed from the row")
            XCTAssertEqual(item.value(forKey: "count") as? Int16, 9, "its unsaved change kept")
        }
    }

    /// Core Data's `validateValue(_:forKey:)`: the model's rules for one value, the value coerced to the
    /// attribute's type; an unknown key is an error.
    func testValidateValueChecksTheModelsRulesAndCoerces() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "Item")
            var count: Any? = 42
            try item.validateValue(&count, forKey: "count")
            XCTAssertTrue(count is Int16, "coerced to the attribute's type: \(type(of: count!))")
            var tooMany: Any? = 500
            XCTAssertThrowsError(try item.validateValue(&tooMany, forKey: "count")) { error in
                guard case SaveError.validation(let failures) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(failures.map(\.rule), ["greater than the maximum 100.0"])
            }
            var badName: Any? = "R2-D2"
            XCTAssertThrowsError(try item.validateValue(&badName, forKey: "name"))
            var missing: Any? = nil
            XCTAssertThrowsError(try item.validateValue(&missing, forKey: "name"), "required")
            var text: Any? = "twelve"
            XCTAssertThrowsError(try item.validateValue(&text, forKey: "count")) { XCTAssertTrue($0 is ManagedObjectError, "\($0)") }
            var anything: Any? = 1
            XCTAssertThrowsError(try item.validateValue(&anything, forKey: "nothing")) { XCTAssertTrue("\($0)".contains("nothing"), "\($0)") }
            var wrongObject: Any? = item
            XCTAssertThrowsError(try item.validateValue(&wrongObject, forKey: "owner"), "an Item is not an Owner")
            var owner: Any? = try context.insertNewObject(forEntityName: "Owner")
            XCTAssertNoThrow(try item.validateValue(&owner, forKey: "owner"))
            XCTAssertNil(item.value(forKey: "owner"), "validating sets nothing")
        }
    }

    /// Core Data's `committedValues(forKeys:)` (nil values as NSNull) and `hasPersistentChangedValues` (a
    /// transient change does not count).
    func testCommittedValuesAndPersistentChanges() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue("Desk", forKey: "name")
            XCTAssertEqual(item.committedValues(forKeys: nil).count, 0, "an inserted object has none")
            try context.save()
            try item.setValue("scribble", forKey: "scratch")
            XCTAssertFalse(item.hasPersistentChangedValues, "a transient change is not persistent")
            try item.setValue("Table", forKey: "name")
            XCTAssertTrue(item.hasPersistentChangedValues)
            let committed = item.committedValues(forKeys: ["name", "count"])
            XCTAssertEqual(committed["name"] as? String, "Desk")
            XCTAssertTrue(committed["count"] is NSNull)
            XCTAssertEqual(Set(item.committedValues(forKeys: nil).keys), ["name", "count", "scratch", "owner"])
        }
    }
}

final class HookedItem: ManagedObject {
    nonisolated(unsafe) static var events: [String] = []
    /// The name read in `willTurnIntoFault` (the values are gone by `didTurnIntoFault`).
    private var nameBefore = "?"
    override func willTurnIntoFault() {
        nameBefore = value(forKey: "name") as? String ?? "?"
        Self.events.append("will \(nameBefore)")
    }
    override func didTurnIntoFault() { Self.events.append("did \(nameBefore)") }
    override func didSave() { Self.events.append("saved \(value(forKey: "name") as? String ?? "?")\(isDeleted ? " deleted" : "")") }
}

/// Xcode's model editor warns of a relationship without an inverse and of a property named like one of
/// NSManagedObject's own; so does a Faultline model.
final class ModelWarningTests: XCTestCase {
    func testNoInverseAndReservedNamesAreWarnedOf() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [
                AttributeDescription(name: "description", type: .string),
                RelationshipDescription(name: "folder", destination: "Folder"),
            ]),
            EntityDescription(name: "Folder", properties: [
                AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true),
            ]),
        ], source: "Notes")
        let warnings = model.warnings.map(\.description)
        XCTAssertTrue(warnings.contains { $0.hasPrefix("model 'Notes', entity 'Note', property 'description': 'description' is the name of a property every managed object has") }, "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.hasPrefix("model 'Notes', entity 'Note', property 'folder': has no inverse") }, "\(warnings)")
        XCTAssertEqual(warnings.count, 2, "Folder.notes names its inverse: \(warnings)")
    }
}
