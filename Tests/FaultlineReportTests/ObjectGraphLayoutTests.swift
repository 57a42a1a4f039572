import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// Object-graph diagrams checked from Graphviz's own layout (its JSON: positions, sizes, and the text it draws):
/// a shape that fits a screen, no label over another label or a box, and every drawn object's relationships drawn
/// — an edge to each destination in the picture, a count of the others in the object's box.
final class ObjectGraphLayoutTests: XCTestCase {
    /// A library: six entities, to-ones, to-manys and a many-to-many, about 2,400 objects.
    private func libraryStore(in dir: URL) throws -> PersistentStoreCoordinator {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Shelf", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", isToMany: true),
            ]),
            EntityDescription(name: "Author", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "books", destination: "Book", inverse: "author", isToMany: true),
            ]),
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "isbn", type: .string), AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books"),
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "pages", destination: "Page", inverse: "book", isToMany: true),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", isToMany: true),
            ]),
            EntityDescription(name: "Page", properties: [
                AttributeDescription(name: "number", type: .integer32),
                RelationshipDescription(name: "book", destination: "Book", inverse: "pages"),
            ]),
            EntityDescription(name: "Review", properties: [
                AttributeDescription(name: "subject", type: .string),
                RelationshipDescription(name: "book", destination: "Book"),
            ]),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "label", type: .string),
                RelationshipDescription(name: "books", destination: "Book", inverse: "tags", isToMany: true),
            ]),
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: dir.appendingPathComponent("library.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            func make(_ entity: String, _ key: String, _ value: String) throws -> ManagedObject {
                let object = try context.insertNewObject(forEntityName: entity)
                try object.setValue(value, forKey: key)
                return object
            }
            let shelves = try (0..<8).map { try make("Shelf", "name", "Shelf \($0)") }
            let authors = try (0..<60).map { try make("Author", "name", "Author number \($0)") }
            let tags = try (0..<12).map { try make("Tag", "label", "tag\($0)") }
            for b in 0..<300 {
                let book = try make("Book", "title", "The Book of Things, volume \(b)")
                try book.setValue(UUID().uuidString, forKey: "isbn")
                try book.setValue(shelves[b % shelves.count], forKey: "shelf")
                try book.setValue(authors[b % authors.count], forKey: "author")
                try book.setValue(b % tags.count == (b * 7) % tags.count ? [tags[b % tags.count]] : [tags[b % tags.count], tags[(b * 7) % tags.count]], forKey: "tags")
                for n in 0..<6 {
                    let page = try context.insertNewObject(forEntityName: "Page")
                    try page.setValue(n, forKey: "number")
                    try page.setValue(book, forKey: "book")
                }
                if b % 2 == 0 {
                    let review = try make("Review", "subject", "On volume \(b)")
                    try review.setValue(book, forKey: "book")
                }
            }
            try context.save()
        }
        return coordinator
    }

    struct Box {
        var minX, minY, maxX, maxY: Double
        var what: String
        func overlaps(_ other: Box) -> Bool {
            let slack = 0.5
            return minX < other.maxX - slack && other.minX < maxX - slack && minY < other.maxY - slack && other.minY < maxY - slack
        }
    }

    /// The boxes of the text a drawing's operations write (`T` ops: baseline point, alignment, width; `F`: size).
    static func textBoxes(_ ops: [[String: Any]]?, _ what: String) -> [Box] {
        var size = 10.0, boxes: [Box] = []
        for op in ops ?? [] {
            if op["op"] as? String == "F" { size = op["size"] as? Double ?? size }
            guard op["op"] as? String == "T", let pt = op["pt"] as? [Double], let width = op["width"] as? Double else { continue }
            let left = op["align"] as? String == "l" ? pt[0] : op["align"] as? String == "r" ? pt[0] - width : pt[0] - width / 2
            boxes.append(Box(minX: left, minY: pt[1] - size * 0.25, maxX: left + width, maxY: pt[1] + size * 0.75, what: "\(what) '\(op["text"] ?? "")'"))
        }
        return boxes
    }

    func testObjectGraphsFitAScreenWithoutOverlapsAndDrawEveryRelationship() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-layout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let coordinator = try libraryStore(in: dir)
        // The first objects of every entity, and one shelf out to its books' pages, authors and tags.
        let shelf = "x-coredata://\(coordinator.storeIdentifier ?? "")/Shelf/p1"
        for (limit, root) in [(50, nil), (200, nil), (1_000, nil), (200, shelf)] {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                context.retainsRegisteredObjects = true
                try ObjectGraphLoader(context: context, limit: limit).load(root: root, depth: 2)
                let snapshot = context.objectGraphSnapshot(limit: limit)
                XCTAssertLessThanOrEqual(snapshot.nodes.count, limit)
                XCTAssertGreaterThan(snapshot.nodes.count, limit * 9 / 10, "\(limit): the loader reached enough objects")
                // The objects in other orders too: entities first met in another order make another layout.
                var seed: UInt64 = 0x9E3779B97F4A7C15
                for shuffle in 0..<(limit == 50 ? 24 : 1) {
                    var turned = snapshot
                    if shuffle > 0 {
                        // A fixed shuffle (a linear congruential generator): the same orders on every run.
                        for i in stride(from: turned.nodes.count - 1, to: 0, by: -1) {
                            seed = seed &* 6364136223846793005 &+ 1442695040888963407
                            turned.nodes.swapAt(i, Int((seed >> 33) % UInt64(i + 1)))
                        }
                    }
                    let json = try ObjectGraphDiagram(snapshot: turned).render(as: .json)
                    let layout = try XCTUnwrap(JSONSerialization.jsonObject(with: json) as? [String: Any])
                    try check(layout, snapshot: turned, context: context, limit: limit)
                }
            }
        }
    }

    /// An empty context and a single object draw too (the legend alone; one box).
    func testEmptyAndSingleObjectGraphsRender() throws {
        let empty = ObjectGraphSnapshot(nodes: [], edges: [], omitted: 0)
        XCTAssertTrue(String(decoding: try ObjectGraphDiagram(snapshot: empty).render(as: .svg), as: UTF8.self).contains(">materialized<"))
        let one = ObjectGraphSnapshot(nodes: [.init(id: "x-coredata://S/Note/p1", entity: "Note", state: .inserted, title: "\"<b>&\"",
                                                    elsewhere: [.init(relationship: "tags", entity: "Tag", count: 3)])],
                                      edges: [.init(from: "x-coredata://S/Note/p1", to: "x-coredata://S/Note/p1", relationship: "next", entity: "Note", isFault: false)],
                                      omitted: 0)
        let svg = String(decoding: try ObjectGraphDiagram(snapshot: one).render(as: .svg), as: UTF8.self)
        XCTAssertTrue(svg.contains("&quot;&lt;b&gt;&amp;&quot;") && svg.contains("+3 Tag") && svg.contains(">Note<"), svg)
    }

    private func check(_ layout: [String: Any], snapshot: ObjectGraphSnapshot, context: ManagedObjectContext, limit: Int) throws {
        // The shape: between 1:3 and 3:1.
        let bb = try XCTUnwrap(layout["bb"] as? String).split(separator: ",").compactMap { Double($0) }
        XCTAssertEqual(bb.count, 4)
        let aspect = (bb[2] - bb[0]) / (bb[3] - bb[1])
        XCTAssertTrue((1.0 / 3...3).contains(aspect), "\(limit) objects: \(bb[2]) × \(bb[3]) pt, aspect \(aspect)")
        // Boxes and labels.
        let objects = try XCTUnwrap(layout["objects"] as? [[String: Any]])
        let edges = layout["edges"] as? [[String: Any]] ?? []
        var nodes: [Box] = [], labels: [Box] = []
        var nameOf: [Int: String] = [:], labelOf: [String: String] = [:]
        for object in objects {
            if object["nodes"] != nil {
                labels += Self.textBoxes(object["_ldraw_"] as? [[String: Any]], "cluster title")
                continue
            }
            let name = try XCTUnwrap(object["name"] as? String)
            nameOf[try XCTUnwrap(object["_gvid"] as? Int)] = name
            labelOf[name] = object["label"] as? String
            let pos = try XCTUnwrap(object["pos"] as? String).split(separator: ",").compactMap { Double($0) }
            let (w, h) = (Double(object["width"] as? String ?? "0")! * 36, Double(object["height"] as? String ?? "0")! * 36)
            nodes.append(Box(minX: pos[0] - w, minY: pos[1] - h, maxX: pos[0] + w, maxY: pos[1] + h, what: "box \(name)"))
        }
        XCTAssertEqual(nodes.count, snapshot.nodes.count)
        labels += Self.textBoxes(layout["_ldraw_"] as? [[String: Any]], "legend")
        var named = 0
        for edge in edges where edge["xlp"] != nil {
            named += 1
            labels += Self.textBoxes(edge["_ldraw_"] as? [[String: Any]] ?? edge["_xldraw_"] as? [[String: Any]], "edge name")
        }
        XCTAssertGreaterThanOrEqual(labels.count, named)
        func assertApart(_ a: [Box], _ b: [Box], same: Bool) {
            for i in a.indices {
                for j in (same ? i + 1 : 0)..<b.count where a[i].overlaps(b[j]) {
                    XCTFail("\(limit) objects: \(a[i].what) overlaps \(b[j].what)")
                    return
                }
            }
        }
        assertApart(nodes, nodes, same: true)
        assertApart(labels, labels, same: true)
        assertApart(labels, nodes, same: false)
        // Every drawn object's relationships: an edge to each destination drawn, the rest counted in its box.
        var drawn: [String: Int] = [:], pointedAt = Set<String>()
        for edge in edges {
            let (tail, head) = (nameOf[edge["tail"] as? Int ?? -1] ?? "", nameOf[edge["head"] as? Int ?? -1] ?? "")
            let relationship = (edge["tooltip"] as? String ?? "").split(separator: ".").last.map(String.init) ?? ""
            XCTAssertFalse(tail.isEmpty || head.isEmpty, "an edge between two drawn objects")
            drawn["\(tail)|\(relationship)", default: 0] += 1
            pointedAt.insert("\(head)|\(relationship)")
        }
        var checked = 0
        for node in snapshot.nodes where node.state != .fault {
            let object = try context.existingObject(with: try XCTUnwrap(context.objectID(forURIString: node.id)))
            for relationship in object.entity.relationships {
                let destinations = relationship.isToMany ? object.objects(forRelationship: relationship.name).count
                    : (object.value(forKey: relationship.name) as? ManagedObject == nil ? 0 : 1)
                let edgesDrawn = drawn["\(node.id)|\(relationship.name)"] ?? 0
                let summary = node.elsewhere.first { $0.relationship == relationship.name }
                if let summary, summary.count == nil {
                    XCTAssertTrue(labelOf[node.id]?.contains("\(relationship.name): not loaded") == true, labelOf[node.id] ?? "")
                } else if let count = summary?.count {
                    XCTAssertEqual(edgesDrawn + count, destinations, "\(node.id).\(relationship.name)")
                    XCTAssertTrue(labelOf[node.id]?.contains("+\(count) \(relationship.destination!.name)") == true, labelOf[node.id] ?? "")
                } else if edgesDrawn != destinations {
                    // A to-many not loaded whose drawn members point back through the inverse: their edges show it.
                    let inverse = try XCTUnwrap(relationship.inverse, "\(node.id).\(relationship.name): \(edgesDrawn) of \(destinations) drawn")
                    XCTAssertTrue(relationship.isToMany && edgesDrawn == 0 && pointedAt.contains("\(node.id)|\(inverse.name)"),
                                  "\(node.id).\(relationship.name): \(edgesDrawn) of \(destinations) drawn")
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, limit / 2, "relationships checked")
    }
}
