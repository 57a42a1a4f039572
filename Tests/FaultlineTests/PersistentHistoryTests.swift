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
        // A damaged store's mask of a megabyte, every bit set: named up to the limit, then one "#more", at once.
        let huge = PersistentHistory.properties(in: Data(repeating: 0xFF, count: 1 << 20), order: order)
        XCTAssertEqual(huge.last, "#more")
        XCTAssertEqual(huge.count, Set(order).count + (Limits.historyMaskBits - order.count) + 1)
    }
}

extension PersistentHistoryTests {
    /// Saves with history tracking on record Core Data's tables (their DDL the fixture's, to the letter), read back
    /// with author, context, kinds and updated properties; pruning removes what came before a date.
    func testFaultlinesSavesRecordHistoryInCoreDatasLayout() throws {
        let dir = TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [
                AttributeDescription(name: "title", type: .string), AttributeDescription(name: "body", type: .string),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "notes", isToMany: true),
            ]),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "notes", destination: "Note", inverse: "tags", isToMany: true),
            ]),
        ])
        let url = dir.file("notes.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: url, options: .persistentHistoryTracking)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        var between = Date()
        try context.performAndWait {
            context.name = "import"
            context.transactionAuthor = "importer"
            let notes = try (0..<3).map { i -> ManagedObject in
                let note = try context.insertNewObject(forEntityName: "Note")
                try note.setValue("Note \(i)", forKey: "title")
                return note
            }
            try context.save()
            Thread.sleep(forTimeInterval: 0.02)
            between = Date()
            Thread.sleep(forTimeInterval: 0.02)
            context.transactionAuthor = "editor"
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue("work", forKey: "name")
            try notes[0].setValue("Note zero", forKey: "title")
            try notes[1].setValue([tag], forKey: "tags")
            context.delete(notes[2])
            try context.save()
        }
        let history = try PersistentHistory.read(storeAt: url, model: model)
        XCTAssertTrue(history.isTracked)
        XCTAssertEqual(history.transactions.count, 2)
        let first = history.transactions[0], second = history.transactions[1]
        XCTAssertEqual(first.author, "importer")
        XCTAssertEqual(first.contextName, "import")
        XCTAssertEqual(first.process, ProcessInfo.processInfo.processName)
        XCTAssertEqual(first.changes.map(\.kind), [.insert, .insert, .insert])
        XCTAssertEqual(Set(first.changes.map(\.object)), Set((1...3).map { "x-coredata://\(coordinator.storeIdentifier ?? "")/Note/p\($0)" }))
        XCTAssertEqual(second.author, "editor")
        let updates = second.changes.filter { $0.kind == .update }
        XCTAssertEqual(Set(updates.map { $0.updatedProperties ?? [] }), [["title"], ["tags"]])
        XCTAssertEqual(second.changes.filter { $0.kind == .insert }.map(\.entity), ["Tag"])
        XCTAssertEqual(second.changes.filter { $0.kind == .delete }.map(\.key), [3])
        // The tables are Core Data's: the same DDL as a store Core Data wrote with history on.
        if let fixtures = fixturesDirectory() {
            let theirs = try CoreDataStoreTests.schema(of: fixtures.appendingPathComponent("coredata-stores/coredataplus-samplemodel2/SampleModel2_V2.sqlite"),
                                                      where: "tbl_name IN ('ATRANSACTION', 'ACHANGE', 'ATRANSACTIONSTRING')")
            XCTAssertEqual(try CoreDataStoreTests.schema(of: url, where: "tbl_name IN ('ATRANSACTION', 'ACHANGE', 'ATRANSACTIONSTRING')"), theirs)
        }
        // Pruned: only the second transaction stays.
        XCTAssertEqual(try coordinator.deleteHistory(before: between), 1)
        let pruned = try PersistentHistory.read(storeAt: url, model: model)
        XCTAssertEqual(pruned.transactions.map(\.author), ["editor"])
        XCTAssertEqual(pruned.orphanChanges, 0)
        // Without the option, saves record nothing more.
        let plain = PersistentStoreCoordinator(managedObjectModel: model)
        try plain.addPersistentStore(at: url)
        let other = ManagedObjectContext(.privateQueue, coordinator: plain)
        try other.performAndWait {
            _ = try other.insertNewObject(forEntityName: "Tag")
            try other.save()
        }
        XCTAssertEqual(try PersistentHistory.read(storeAt: url, model: model).transactions.count, 1)
    }
}
