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

    func testEveryFixtureModelRenders() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/fixtures/xcdatamodels").standardized
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter({ $0.hasSuffix(".xml") }).sorted(), !files.isEmpty else {
            throw XCTSkip("../shared/fixtures/xcdatamodels is absent: the fixture models are not in this checkout")
        }
        for file in files {
            let model = try ManagedObjectModel(contentsOf: fixtures.appendingPathComponent(file))
            let svg = String(decoding: try GraphvizRenderer.render(ModelDiagram(model: model).dot, as: .svg), as: UTF8.self)
            for entity in model.entities { XCTAssertTrue(svg.contains(">\(entity.name)<"), "\(file): \(entity.name)") }
        }
    }
}
