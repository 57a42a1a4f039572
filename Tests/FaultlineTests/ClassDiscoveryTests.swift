import Foundation
import XCTest
@testable import Faultline

/// A subclass no test registers: found from the model's class name alone, as Core Data finds its classes.
final class DiscoveredNote: ManagedObject {
    nonisolated(unsafe) static var saves = 0
    var title: String? { value(forKey: "title") as? String }
    override func willSave() { Self.saves += 1 }
}

/// Core Data builds each entity's objects from the class the model names (`representedClassName`); code never
/// registers its classes. Faultline resolves the name to a Swift class when the model is made.
final class ClassDiscoveryTests: XCTestCase {
    func model(className: String?) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [EntityDescription(name: "Note", properties: [AttributeDescription(name: "title", type: .string)],
                                                            representedClassName: className)])
    }

    /// A module-qualified name (Xcode's "Module: MyApp"): inserts, fetches and hooks use the class, unregistered.
    func testAQualifiedClassNameIsFoundWithoutRegistering() throws {
        let model = try model(className: "FaultlineTests.DiscoveredNote")
        XCTAssertEqual(model.unresolvedClassNames, [:])
        let dir = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: dir.file("notes.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let before = DiscoveredNote.saves
        try context.performAndWait {
            let note = try context.insertNewObject(forEntityName: "Note")
            XCTAssertTrue(note is DiscoveredNote)
            try note.setValue("groceries", forKey: "title")
            try context.save()
            XCTAssertEqual(DiscoveredNote.saves, before + 1, "willSave ran: the object is of the model's class")
            context.reset()
            let fetched = try context.fetch(FetchRequest<DiscoveredNote>(entityName: "Note"))
            XCTAssertEqual(fetched.map(\.title), ["groceries"])
        }
    }

    /// A bare name (how Xcode writes "Current Product Module"), and Xcode's `$(PRODUCT_MODULE_NAME).` form, are looked
    /// up in `ManagedObjectModel.classModules`.
    func testBareNamesAreLookedUpInTheClassModules() throws {
        let saved = ManagedObjectModel.classModules
        defer { ManagedObjectModel.classModules = saved }
        XCTAssertEqual(try model(className: "DiscoveredNote").unresolvedClassNames, ["Note": "DiscoveredNote"], "the test module is not the process's")
        ManagedObjectModel.classModules = saved + ["FaultlineTests"]
        for name in ["DiscoveredNote", "$(PRODUCT_MODULE_NAME).DiscoveredNote", ".DiscoveredNote"] {
            let model = try model(className: name)
            XCTAssertEqual(model.unresolvedClassNames, [:], name)
            XCTAssertTrue(model.entity(named: "Note")?.managedClass == DiscoveredNote.self, name)
        }
    }

    /// No class, or a class that is not a ManagedObject: plain objects, as Core Data's "Unable to load class" does;
    /// a typed fetch then says which class the model names and what to do.
    func testAMissingClassLeavesPlainObjectsAndTheTypedFetchSaysWhy() throws {
        for name in ["NSManagedObject", "ManagedObject", ""] {
            XCTAssertEqual(try model(className: name).unresolvedClassNames, [:], "\(name) is Core Data's generic class")
        }
        XCTAssertEqual(try model(className: "Foundation.NSString").unresolvedClassNames, ["Note": "Foundation.NSString"])
        XCTAssertEqual(try model(className: String(repeating: "A", count: 5_000)).unresolvedClassNames.count, 1)
        let model = try model(className: "NoSuchModule.Missing")
        let dir = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: dir.file("notes.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            XCTAssertTrue(type(of: try context.insertNewObject(forEntityName: "Note")) == ManagedObject.self)
            XCTAssertThrowsError(try context.fetch(FetchRequest<DiscoveredNote>(entityName: "Note"))) { error in
                let text = "\(error)"
                XCTAssertTrue(text.hasPrefix("fetch request: objects of 'Note' are ManagedObject, not DiscoveredNote — the model names class 'NoSuchModule.Missing'"), text)
            }
            // Too late to register: the plain object exists, and a typed fetch would return it as a DiscoveredNote.
            XCTAssertThrowsError(try model.register(DiscoveredNote.self, forEntityName: "Note")) { error in
                XCTAssertTrue("\(error)".contains("cannot register DiscoveredNote once a store uses the model"), "\(error)")
            }
        }
        // Before any store opens, registering by hand still chooses the class.
        let fresh = try self.model(className: "NoSuchModule.Missing")
        try fresh.register(DiscoveredNote.self, forEntityName: "Note")
        XCTAssertEqual(fresh.unresolvedClassNames, [:])
        XCTAssertTrue(fresh.entity(named: "Note")?.managedClass == DiscoveredNote.self)
    }
}
