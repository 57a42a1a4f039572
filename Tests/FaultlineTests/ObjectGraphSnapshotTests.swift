import Foundation
import XCTest
@testable import Faultline

final class ObjectGraphSnapshotTests: XCTestCase {
    /// Every state, and relationships as they are in memory: loaded ones as edges, a to-one to an object that is
    /// not registered as a fault node, an unloaded to-many as a relationship fault — and no fault fired.
    func testSnapshotShowsStatesAndRelationshipsWithoutFiringFaults() throws {
        let dir = TemporaryDirectory()
        let (coordinator, writer) = try makeStack(try makeTestModel(), in: dir)
        try writer.performAndWait {
            let owner = try writer.insertNewObject(forEntityName: "Person")
            try owner.setValue("Ann", forKey: "name")
            for name in ["Rex", "Fido", "Bello"] {
                let dog = try writer.insertNewObject(forEntityName: "Dog")
                try dog.setValue(name, forKey: "name")
                try dog.setValue(owner, forKey: "owner")
                let walk = try writer.insertNewObject(forEntityName: "Walk")
                try walk.setValue(dog, forKey: "dog")
            }
            try writer.save()
        }
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            request.returnsObjectsAsFaults = false
            let dogs = try context.fetch(request)            // Bello, Fido, Rex: materialized
            try dogs[1].setValue("Fido II", forKey: "name")   // updated
            context.delete(dogs[2].objects(forRelationship: "walks")[0]) // Rex's walk loaded, then deleted
            let cat = try context.insertNewObject(forEntityName: "Tag")  // inserted
            try cat.setValue("good", forKey: "label")
            let statements = coordinator.statistics.statementsExecuted
            let snapshot = context.objectGraphSnapshot()
            XCTAssertEqual(coordinator.statistics.statementsExecuted, statements, "a snapshot fires no fault")
            func node(_ title: String) -> ObjectGraphSnapshot.Node? { snapshot.nodes.first { $0.title == "\"\(title)\"" } }
            XCTAssertEqual(node("Bello")?.state, .materialized)
            XCTAssertEqual(node("Fido II")?.state, .updated)
            XCTAssertEqual(node("good")?.state, .inserted)
            XCTAssertEqual(snapshot.nodes.filter { $0.entity == "Walk" }.map(\.state), [.deleted])
            // Ann is not registered: her node is a fault, and every dog's edge to her dashed.
            let ann = try XCTUnwrap(snapshot.nodes.first { $0.entity == "Person" })
            XCTAssertEqual(ann.state, .fault)
            XCTAssertEqual(snapshot.edges.filter { $0.relationship == "owner" }.map(\.to), [ann.id, ann.id, ann.id])
            XCTAssertTrue(snapshot.edges.filter { $0.relationship == "owner" }.allSatisfy(\.isFault))
            // Bello's walks were never loaded: a relationship fault; Rex's were.
            let bello = try XCTUnwrap(node("Bello"))
            XCTAssertTrue(bello.elsewhere.contains(.init(relationship: "walks", entity: "Walk", count: nil)), "\(bello.elsewhere)")
            XCTAssertFalse(snapshot.edges.contains { $0.from == bello.id && $0.relationship == "walks" })
            // At most `limit` objects: destinations left out are counted in their source's box.
            let small = context.objectGraphSnapshot(limit: 2)
            XCTAssertEqual(small.nodes.count, 2)
            XCTAssertEqual(small.omitted, context.registeredObjects.count - 2)
            let drawn = Set(small.nodes.map(\.id))
            XCTAssertTrue(small.edges.allSatisfy { drawn.contains($0.from) && drawn.contains($0.to) })
        }
    }
}

extension ObjectGraphSnapshotTests {
    /// An object is titled by a name-like attribute — `name`, `title`, … — not by the first string, which is often an
    /// identifier; an object with only identifiers has no title.
    func testTitlesComeFromNameLikeAttributes() throws {
        let dir = TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Entry", properties: [
                AttributeDescription(name: "entryID", type: .string), AttributeDescription(name: "body", type: .string),
                AttributeDescription(name: "title", type: .string),
            ]),
            EntityDescription(name: "Token", properties: [
                AttributeDescription(name: "code", type: .string), AttributeDescription(name: "uuidText", type: .string),
            ]),
        ])
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let entry = try context.insertNewObject(forEntityName: "Entry")
            try entry.setValue("1B4E28BA-2FA1-11D2-883F-0016D3CCA427", forKey: "entryID")
            try entry.setValue("A long body", forKey: "body")
            try entry.setValue("Monday", forKey: "title")
            let token = try context.insertNewObject(forEntityName: "Token")
            try token.setValue("1B4E28BA-2FA1-11D2-883F-0016D3CCA427", forKey: "uuidText")
            let untitled = try context.insertNewObject(forEntityName: "Token")
            try untitled.setValue("1B4E28BA-2FA1-11D2-883F-0016D3CCA428", forKey: "code")
            let snapshot = context.objectGraphSnapshot()
            XCTAssertEqual(snapshot.nodes.first { $0.entity == "Entry" }?.title, "\"Monday\"")
            XCTAssertEqual(snapshot.nodes.filter { $0.entity == "Token" }.map(\.title), [nil, nil], "identifiers are no titles")
        }
    }
}
