import Foundation
import XCTest
@testable import Faultline

final class RelationshipTests: XCTestCase {
    var dir: TemporaryDirectory!
    var coordinator: PersistentStoreCoordinator!
    var context: ManagedObjectContext!

    override func setUpWithError() throws {
        dir = TemporaryDirectory()
        (coordinator, context) = try makeStack(try makeTestModel(), in: dir)
    }

    // XCTest keeps each test case object until the run ends; without this, every test's folder would stay behind.
    override func tearDown() {
        context = nil
        coordinator = nil
        dir = nil
    }

    func insert(_ entity: String, _ values: [String: Any] = [:]) throws -> ManagedObject {
        let object = try context.insertNewObject(forEntityName: entity)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// A context with an empty registry over a fresh coordinator, to read what the store holds.
    func reread(_ body: (ManagedObjectContext) throws -> Void) throws {
        let fresh = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel)
        try fresh.addPersistentStore(at: dir.file("store.sqlite"))
        let reader = ManagedObjectContext(.privateQueue, coordinator: fresh)
        try reader.performAndWait { try body(reader) }
    }

    func names(_ objects: [ManagedObject], _ key: String = "name") -> [String] {
        objects.map { $0.value(forKey: key) as? String ?? "?" }.sorted()
    }

    func testOneToOneInverse() throws {
        try context.performAndWait {
            let rex = try insert("Dog", ["name": "Rex"])
            let fido = try insert("Dog", ["name": "Fido"])
            let red = try insert("Collar", ["color": "red"])
            try red.setValue(rex, forKey: "dog")
            XCTAssertTrue(rex.value(forKey: "collar") as? ManagedObject === red)
            try fido.setValue(red, forKey: "collar")
            XCTAssertTrue(red.value(forKey: "dog") as? ManagedObject === fido)
            XCTAssertNil(rex.value(forKey: "collar"), "the collar's previous dog loses it")
            try context.save()
        }
        try reread { reader in
            let collar = try XCTUnwrap(reader.fetch(FetchRequest<ManagedObject>(entityName: "Collar")).first)
            XCTAssertEqual((collar.value(forKey: "dog") as? ManagedObject)?.value(forKey: "name") as? String, "Fido")
            let dogs = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
            XCTAssertEqual(dogs.filter { $0.value(forKey: "collar") != nil }.map { $0.value(forKey: "name") as? String }, ["Fido"])
        }
    }

    func testOneToManyInverseFromEitherSide() throws {
        try context.performAndWait {
            let alice = try insert("Person", ["name": "Alice"])
            let bob = try insert("Person", ["name": "Bob"])
            let rex = try insert("Dog", ["name": "Rex"])
            let fido = try insert("Dog", ["name": "Fido"])
            try rex.setValue(alice, forKey: "owner")
            try alice.addObject(fido, toRelationship: "dogs")
            XCTAssertEqual(names(alice.objects(forRelationship: "dogs")), ["Fido", "Rex"])
            XCTAssertTrue(fido.value(forKey: "owner") as? ManagedObject === alice)
            try bob.addObject(rex, toRelationship: "dogs")
            XCTAssertEqual(names(alice.objects(forRelationship: "dogs")), ["Fido"], "moving a dog removes it from its old owner")
            XCTAssertTrue(rex.value(forKey: "owner") as? ManagedObject === bob)
            try context.save()
            // Changing the to-one side of saved objects.
            try fido.setValue(bob, forKey: "owner")
            XCTAssertEqual(alice.count(forRelationship: "dogs"), 0)
            try context.save()
        }
        try reread { reader in
            let people = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
            let bob = try XCTUnwrap(people.first { $0.value(forKey: "name") as? String == "Bob" })
            let alice = try XCTUnwrap(people.first { $0.value(forKey: "name") as? String == "Alice" })
            XCTAssertEqual(names(bob.objects(forRelationship: "dogs")), ["Fido", "Rex"])
            XCTAssertEqual(alice.count(forRelationship: "dogs"), 0)
        }
    }

    func testManyToManyInverseAndJoinTable() throws {
        try context.performAndWait {
            let rex = try insert("Dog", ["name": "Rex"])
            let fido = try insert("Dog", ["name": "Fido"])
            let good = try insert("Tag", ["label": "good"])
            let loud = try insert("Tag", ["label": "loud"])
            try rex.addObject(good, toRelationship: "tags")
            try loud.addObject(rex, toRelationship: "dogs")
            try fido.setValue([good], forKey: "tags")
            XCTAssertEqual(names(good.objects(forRelationship: "dogs")), ["Fido", "Rex"])
            XCTAssertEqual(names(rex.objects(forRelationship: "tags"), "label"), ["good", "loud"])
            try context.save()
            try good.removeObject(rex, fromRelationship: "dogs")
            XCTAssertEqual(names(rex.objects(forRelationship: "tags"), "label"), ["loud"])
            try context.save()
        }
        try reread { reader in
            let dogs = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
            let rex = try XCTUnwrap(dogs.first { $0.value(forKey: "name") as? String == "Rex" })
            let fido = try XCTUnwrap(dogs.first { $0.value(forKey: "name") as? String == "Fido" })
            XCTAssertEqual(names(rex.objects(forRelationship: "tags"), "label"), ["loud"])
            XCTAssertEqual(names(fido.objects(forRelationship: "tags"), "label"), ["good"])
            let tags = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
            let good = try XCTUnwrap(tags.first { $0.value(forKey: "label") as? String == "good" })
            XCTAssertEqual(names(good.objects(forRelationship: "dogs")), ["Fido"])
        }
    }

    /// A many-to-many relationship ordered on both sides (as in CoreValue's fixture model) has an order column for
    /// each side in its join table; both sides read back, faulted one at a time or prefetched.
    func testManyToManyOrderedOnBothSidesReadsBackFromEitherSide() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Article", properties: [
                AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "categories", destination: "Category", inverse: "articles", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Category", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "articles", destination: "Article", inverse: "categories", isToMany: true, isOrdered: true),
            ]),
        ])
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let swift = try context.insertNewObject(forEntityName: "Category")
            try swift.setValue("Swift", forKey: "name")
            for title in ["b", "a", "c"] {
                let article = try context.insertNewObject(forEntityName: "Article")
                try article.setValue(title, forKey: "title")
                try swift.addObject(article, toRelationship: "articles")
            }
            try context.save()
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Category")
            let category = try XCTUnwrap(try reader.fetch(request).first)
            let titles = category.objects(forRelationship: "articles").map { $0.value(forKey: "title") as? String }
            XCTAssertEqual(Set(titles.compactMap { $0 }), ["a", "b", "c"])
            for article in category.objects(forRelationship: "articles") {
                XCTAssertEqual(article.objects(forRelationship: "categories").map { $0.value(forKey: "name") as? String }, ["Swift"])
            }
            reader.reset()
            request.relationshipKeyPathsForPrefetching = ["articles"]
            XCTAssertEqual(try reader.fetch(request).first?.count(forRelationship: "articles"), 3)
            let articles = FetchRequest<ManagedObject>(entityName: "Article")
            articles.relationshipKeyPathsForPrefetching = ["categories"]
            XCTAssertEqual(try reader.fetch(articles).map { $0.count(forRelationship: "categories") }, [1, 1, 1])
        }
    }

    func testOrderedToManyKeepsItsOrderAcrossSaveAndReload() throws {
        try context.performAndWait {
            let dog = try insert("Dog", ["name": "Fido"])
            var walks: [ManagedObject] = []
            for i in 0..<4 {
                let walk = try insert("Walk", ["distance": Double(i)])
                walks.append(walk)
            }
            try dog.addObject(walks[0], toRelationship: "walks")
            try dog.addObject(walks[1], toRelationship: "walks")
            try dog.addObject(walks[2], toRelationship: "walks", at: 0)
            try walks[3].setValue(dog, forKey: "dog")   // the inverse appends
            XCTAssertEqual(dog.objects(forRelationship: "walks").map { $0.value(forKey: "distance") as? Double }, [2, 0, 1, 3])
            XCTAssertTrue(walks[2].value(forKey: "dog") as? ManagedObject === dog)
            try context.save()
            // Reorder saved members: move the last to the front.
            try dog.addObject(walks[3], toRelationship: "walks", at: 0)
            try context.save()
        }
        try reread { reader in
            let dog = try XCTUnwrap(reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).first)
            XCTAssertEqual(dog.objects(forRelationship: "walks").map { $0.value(forKey: "distance") as? Double }, [3, 2, 0, 1])
        }
        // Core Data's order keys: 2048, then gaps of 1024 (the first save); moving the last walk to the front gave it
        // a key in the gap before the first and left the others' keys alone.
        let connection = try SQLiteConnection(path: dir.file("store.sqlite").path, create: false)
        let keys = try connection.prepare("SELECT ZDISTANCE, Z_FOK_DOG FROM ZWALK ORDER BY Z_FOK_DOG")
        var stored: [Double: Int64] = [:]
        while try keys.step() { stored[keys.double(at: 0)] = keys.int64(at: 1) }
        XCTAssertEqual(stored, [3: 1024, 2: 2048, 0: 3072, 1: 4096])
    }

    /// Adding a member to a saved ordered relationship writes the new member's row and no other member's order
    /// key; reversing it rewrites all but one (the longest run already in order keeps its keys).
    func testOrderedToManyChangesWriteOnlyTheOrderKeysThatMove() throws {
        let model = coordinator.managedObjectModel
        let recorder = InMemoryProbeRecorder()
        let traced = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(recorders: [recorder]))
        try traced.addPersistentStore(at: dir.file("counted.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: traced)
        func orderUpdates(_ work: () throws -> Void) rethrows -> Int {
            let start = recorder.events.count
            try work()
            return recorder.events[start...].filter { if case .statement(let s) = $0 { return s.sql.hasPrefix("UPDATE ZWALK SET Z_FOK_DOG") }; return false }.count
        }
        try context.performAndWait {
            let dog = ManagedObject(entity: model.entity(named: "Dog")!, insertInto: context)
            try dog.setValue("Rex", forKey: "name")
            for i in 0..<10 {
                let walk = ManagedObject(entity: model.entity(named: "Walk")!, insertInto: context)
                try walk.setValue(Double(i), forKey: "distance")
                try dog.addObject(walk, toRelationship: "walks")
            }
            try context.save()
            let appended = try orderUpdates {
                let walk = ManagedObject(entity: model.entity(named: "Walk")!, insertInto: context)
                try walk.setValue(10.0, forKey: "distance")
                try dog.addObject(walk, toRelationship: "walks")
                try context.save()
            }
            XCTAssertEqual(appended, 0, "the new walk's key rides in its INSERT")
            let first = try orderUpdates {
                let walk = ManagedObject(entity: model.entity(named: "Walk")!, insertInto: context)
                try walk.setValue(-1.0, forKey: "distance")
                try dog.addObject(walk, toRelationship: "walks", at: 0)
                try context.save()
            }
            XCTAssertEqual(first, 0)
            let reversed = try orderUpdates {
                let walks = dog.objects(forRelationship: "walks")
                for walk in walks { try dog.removeObject(walk, fromRelationship: "walks") }
                for walk in walks.reversed() { try dog.addObject(walk, toRelationship: "walks") }
                try context.save()
            }
            XCTAssertEqual(reversed, 11, "12 walks: one keeps its key")
        }
        let reader = PersistentStoreCoordinator(managedObjectModel: model)
        try reader.addPersistentStore(at: dir.file("counted.sqlite"))
        let context2 = ManagedObjectContext(.privateQueue, coordinator: reader)
        try context2.performAndWait {
            let dog = try XCTUnwrap(context2.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).first)
            XCTAssertEqual(dog.objects(forRelationship: "walks").map { $0.value(forKey: "distance") as? Double },
                           [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1])
        }
    }

    func testNullifyRemovesTheDeletedObjectFromInverses() throws {
        try context.performAndWait {
            let alice = try insert("Person", ["name": "Alice"])
            let rex = try insert("Dog", ["name": "Rex", "owner": alice])
            let fido = try insert("Dog", ["name": "Fido", "owner": alice])
            try context.save()
            context.delete(rex)   // Dog.owner is Nullify
            XCTAssertEqual(names(alice.objects(forRelationship: "dogs")), ["Fido", "Rex"], "until the event ends")
            context.processPendingChanges()
            XCTAssertEqual(names(alice.objects(forRelationship: "dogs")), ["Fido"])
            try context.save()
            XCTAssertNil(rex.managedObjectContext)
            _ = fido
        }
        try reread { reader in
            XCTAssertEqual(names(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))), ["Fido"])
            let alice = try XCTUnwrap(reader.fetch(FetchRequest<ManagedObject>(entityName: "Person")).first)
            XCTAssertEqual(names(alice.objects(forRelationship: "dogs")), ["Fido"])
        }
    }

    func testCascadeDeletesDestinations() throws {
        try context.performAndWait {
            let dog = try insert("Dog", ["name": "Rex"])
            for i in 0..<3 { _ = try insert("Walk", ["distance": Double(i), "dog": dog]) }
            _ = try insert("Collar", ["color": "red", "dog": dog])
            let other = try insert("Dog", ["name": "Fido"])
            _ = try insert("Walk", ["distance": 9.0, "dog": other])
            try context.save()
            context.reset()
            let rex = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).first { $0.value(forKey: "name") as? String == "Rex" })
            context.delete(rex)   // Dog.walks and Dog.collar are Cascade
            XCTAssertEqual(context.deletedObjects.count, 1, "Core Data cascades at the end of the event")
            context.processPendingChanges()
            XCTAssertEqual(context.deletedObjects.count, 5)
            try context.save()
        }
        try reread { reader in
            XCTAssertEqual(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Walk")).map { $0.value(forKey: "distance") as? Double }, [9])
            XCTAssertEqual(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Collar")).count, 0)
        }
    }

    func testDenyRefusesToDeleteAnObjectWithDestinations() throws {
        try context.performAndWait {
            let alice = try insert("Person", ["name": "Alice"])
            _ = try insert("Dog", ["name": "Rex", "owner": alice])
            try context.save()
            context.delete(alice)   // Person.dogs is Deny
            XCTAssertThrowsError(try context.save()) { error in
                XCTAssertEqual("\(error)", "cannot delete \(alice.objectID.uriString): its 'dogs' relationship (delete rule Deny) still has 1 object")
            }
            context.rollback()
            XCTAssertFalse(alice.isDeleted)
            // Without dogs, the delete goes through.
            let rex = alice.objects(forRelationship: "dogs")[0]
            context.delete(rex)
            context.delete(alice)
            try context.save()
        }
        try reread { reader in
            XCTAssertEqual(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person")).count, 0)
        }
    }

    func testNoActionLeavesTheInverseAlone() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Folder", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, deleteRule: .noAction),
            ]),
            EntityDescription(name: "Note", properties: [
                RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes"),
            ]),
        ])
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let folder = try context.insertNewObject(forEntityName: "Folder")
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue(folder, forKey: "folder")
            try context.save()
            context.delete(folder)
            XCTAssertTrue(note.value(forKey: "folder") as? ManagedObject === folder, "No Action: the note still points at the deleted folder")
            try context.save()
            XCTAssertFalse(note.hasChanges)
        }
    }

    func testRollbackRestoresRelationshipsAndAttributes() throws {
        try context.performAndWait {
            let alice = try insert("Person", ["name": "Alice"])
            let rex = try insert("Dog", ["name": "Rex", "owner": alice])
            try context.save()
            try rex.setValue("Max", forKey: "name")
            try rex.setValue(nil, forKey: "owner")
            _ = try insert("Dog", ["name": "New"])
            XCTAssertEqual(alice.count(forRelationship: "dogs"), 0)
            XCTAssertEqual(rex.committedValues()["name"] as? String, "Rex")
            XCTAssertEqual(rex.changedValues()["name"] as? String, "Max")
            XCTAssertEqual(Set(rex.changedValues().keys), ["name", "owner"])
            context.rollback()
            XCTAssertEqual(rex.value(forKey: "name") as? String, "Rex")
            XCTAssertTrue(rex.value(forKey: "owner") as? ManagedObject === alice)
            XCTAssertEqual(alice.count(forRelationship: "dogs"), 1)
            XCTAssertFalse(context.hasChanges)
            XCTAssertEqual(try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).count, 1)
        }
    }
}
