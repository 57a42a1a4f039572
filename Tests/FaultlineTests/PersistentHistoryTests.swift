import Foundation
import XCTest
@testable import Faultline

/// A change's column mask read in Core Data's order: to-ones, their entity columns, order keys, attributes,
/// to-manys, many-to-manys (by name within each); bit i in byte i/8 under `0x80 >> (i mod 8)`.
final class PersistentHistoryTests: XCTestCase {
    func testColumnMasksNameTheirProperties() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Shelf", properties: [
                RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "title", type: .string), AttributeDescription(name: "isbn", type: .string),
                AttributeDescription(name: "scratch", type: .string, isTransient: true),
                RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books"),
                RelationshipDescription(name: "author", destination: "Person", inverse: "books"),
                RelationshipDescription(name: "pages", destination: "Page", inverse: "book", isToMany: true),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", isToMany: true),
            ]),
            EntityDescription(name: "Person", properties: [RelationshipDescription(name: "books", destination: "Book", inverse: "author", isToMany: true)]),
            EntityDescription(name: "Writer", parent: "Person"),
            EntityDescription(name: "Page", properties: [RelationshipDescription(name: "book", destination: "Book", inverse: "pages")]),
            EntityDescription(name: "Tag", properties: [RelationshipDescription(name: "books", destination: "Book", inverse: "tags", isToMany: true)]),
        ])
        let book = try XCTUnwrap(model.entity(named: "Book"))
        // author's destination has a sub-entity (an entity column); shelf's inverse is ordered (an order key).
        XCTAssertEqual(PersistentHistory.columnOrder(of: book), ["author", "shelf", "author", "shelf", "isbn", "title", "pages", "tags"])
        let order = PersistentHistory.columnOrder(of: book)
        XCTAssertEqual(PersistentHistory.properties(in: Data([0b1000_0000]), order: order), ["author"])
        XCTAssertEqual(PersistentHistory.properties(in: Data([0b0000_1001]), order: order), ["isbn", "tags"])
        XCTAssertEqual(PersistentHistory.properties(in: Data([0b1010_0000]), order: order), ["author"], "a to-one's key and entity column are one property")
        XCTAssertEqual(PersistentHistory.properties(in: Data([0, 0b0100_0000]), order: order), ["#9"], "a bit past the properties is kept, by number")
        XCTAssertEqual(PersistentHistory.properties(in: Data(), order: order), [])
    }
}
