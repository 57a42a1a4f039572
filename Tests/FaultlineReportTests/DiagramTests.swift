import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// Model diagrams rendered by the real Graphviz libraries.
final class DiagramTests: XCTestCase {
    func testEdgesFollowXcodesArrowConventions() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Department", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false, isIndexed: true),
                RelationshipDescription(name: "employees", destination: "Employee", inverse: "department", isToMany: true, isOrdered: true, deleteRule: .cascade),
            ], uniquenessConstraints: [["name"]]),
            EntityDescription(name: "Employee", properties: [
                AttributeDescription(name: "salary", type: .double),
                RelationshipDescription(name: "department", destination: "Department", inverse: "employees"),
            ], compoundIndexes: [["salary", "department"]]),
            EntityDescription(name: "Manager", parent: "Employee", properties: [AttributeDescription(name: "level", type: .integer16)]),
        ])
        let dot = ModelDiagram(model: model).dot
        // One edge for the pair: to-many (two heads) one way, to-one (one head) the other.
        let edges = dot.split(separator: "\n").filter { $0.contains("->") }
        XCTAssertEqual(edges.count, 2, dot)
        let pair = try XCTUnwrap(edges.first { $0.contains("employees") })
        XCTAssertTrue(pair.contains("arrowhead=normalnormal") && pair.contains("arrowtail=normal,") && pair.contains("dir=both"), String(pair))
        XCTAssertTrue(pair.contains("employees (ordered, cascade)"), String(pair))
        XCTAssertTrue(edges.contains { $0.contains("\"Manager\" -> \"Employee\"") && $0.contains("style=dashed") })
        XCTAssertTrue(dot.contains("name: String <font color=\"#777777\">indexed, unique</font>"), dot)
        XCTAssertTrue(dot.contains("index (salary, department)"), dot)
        let svg = String(decoding: try GraphvizRenderer.render(dot, as: .svg), as: UTF8.self)
        XCTAssertTrue(svg.contains("<svg") && svg.contains(">Department<") && svg.contains(">Manager<"), svg.prefix(300).description)
        let png = try GraphvizRenderer.render(dot, as: .png)
        XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
    }

    /// Core Data's fetched properties are weak and one-way (FP-01): drawn dashed, one head, labelled; the schema says
    /// they have no column.
    func testFetchedPropertiesAreDrawnDashedAndOneWay() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Department", properties: [AttributeDescription(name: "name", type: .string)],
                              fetchedProperties: [FetchedPropertyDescription(name: "recentHires", destinationEntityName: "Employee",
                                                                            predicate: try ObjectPredicate(parsing: "hired > 2020"))]),
            EntityDescription(name: "Employee", properties: [AttributeDescription(name: "hired", type: .integer32)]),
        ])
        let dot = ModelDiagram(model: model).dot
        let edge = try XCTUnwrap(dot.split(separator: "\n").first { $0.contains("recentHires") }, dot)
        XCTAssertTrue(edge.contains("\"Department\" -> \"Employee\"") && edge.contains("style=dashed") && edge.contains("arrowhead=open")
                      && edge.contains("recentHires (fetched)"), String(edge))
        let svg = String(decoding: try GraphvizRenderer.render(dot, as: .svg), as: UTF8.self)
        XCTAssertTrue(svg.contains("recentHires (fetched)"), svg.prefix(300).description)
        XCTAssertTrue(SchemaGenerator.script(for: model).contains("-- Department.recentHires: fetched property, Employee objects where hired > 2020; no column"))
        XCTAssertFalse(SchemaGenerator.script(for: model).contains("ZRECENTHIRES"))
    }

    func testEveryFixtureModelRenders() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/fixtures/xcdatamodels").standardized
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter({ $0.hasSuffix(".xml") }).sorted(), !files.isEmpty else {
            throw XCTSkip("../shared/fixtures/xcdatamodels is absent: the fixture models are not in this checkout")
        }
        for file in files {
            let model = try ManagedObjectModel(loadingContentsOf: fixtures.appendingPathComponent(file))
            let svg = String(decoding: try GraphvizRenderer.render(ModelDiagram(model: model).dot, as: .svg), as: UTF8.self)
            for entity in model.entities { XCTAssertTrue(svg.contains(">\(entity.name)<"), "\(file): \(entity.name)") }
        }
    }
}

extension DiagramTests {
    /// An object graph drawn by the real Graphviz: a legend with a sample of each state's colour, clusters titled with
    /// their entity, objects titled by a name-like attribute, and no "not loaded" stub for a to-many whose members are
    /// drawn with their edges to it (only for the one whose members are not).
    func testObjectGraphsHaveALegendTitlesAndNoStubsForDrawnMembers() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-graph-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Shelf", properties: [
                AttributeDescription(name: "code", type: .string), AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", isToMany: true),
            ]),
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books"),
            ]),
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: dir.appendingPathComponent("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let dot = try context.performAndWait { () -> String in
            let near = try context.insertNewObject(forEntityName: "Shelf"), far = try context.insertNewObject(forEntityName: "Shelf")
            try near.setValue("A-1", forKey: "code")
            try near.setValue("Near the door", forKey: "name")
            try far.setValue("Far corner", forKey: "name")
            for title in ["Dune", "Emma"] {
                let book = try context.insertNewObject(forEntityName: "Book")
                try book.setValue(title, forKey: "title")
                try book.setValue(near, forKey: "shelf")
            }
            let farBook = try context.insertNewObject(forEntityName: "Book")
            try farBook.setValue("Ulysses", forKey: "title")
            try farBook.setValue(far, forKey: "shelf")
            try context.save()
            context.reset()
            // The near shelf's books are loaded as objects (their to-one edges point at it); the far shelf's are not.
            let books = FetchRequest<ManagedObject>(entityName: "Book", predicate: try ObjectPredicate(parsing: "shelf.name == 'Near the door'"))
            books.returnsObjectsAsFaults = false
            let held = try context.fetch(books)
            let shelves = FetchRequest<ManagedObject>(entityName: "Shelf")
            shelves.returnsObjectsAsFaults = false
            let alsoHeld = try context.fetch(shelves)
            // (Objects are held weakly: the fetched arrays keep them registered until the snapshot is taken.)
            return withExtendedLifetime((held, alsoHeld)) { ObjectGraphDiagram(snapshot: context.objectGraphSnapshot()).dot }
        }
        XCTAssertTrue(dot.contains("<b>&quot;Near the door&quot;</b>"), "titled by name, not by code: \(dot)")
        XCTAssertEqual(dot.components(separatedBy: "books: not loaded").count - 1, 1, "said only for the far shelf's books: \(dot)")
        let svg = String(decoding: try GraphvizRenderer.render(dot, as: .svg), as: UTF8.self)
        for (state, color) in [("fault", "#eeeeee"), ("materialized", "#cfe3ff"), ("inserted", "#c8f0c8"), ("updated", "#fff0b3"), ("deleted", "#f6c6c6")] {
            XCTAssertTrue(svg.contains(">\(state)</text>"), "the legend names \(state)")
            XCTAssertTrue(svg.contains("fill=\"\(color)\""), "the legend shows \(state)'s colour")
        }
        XCTAssertTrue(svg.contains(">Shelf</text>") && svg.contains(">Book</text>"), "clusters titled with their entity")
    }
}
