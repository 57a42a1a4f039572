import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// Derived attributes: a store Core Data wrote keeps its triggers, which call Core Data's own SQL functions; writes
/// here run them, and the rows they recompute are not served stale from the row cache.
final class DerivedAttributeTests: XCTestCase {
    private func pagesCount(_ store: URL, book: Int64) throws -> Int64? {
        let connection = try SQLiteConnection(path: store.path, create: false)
        let row = try connection.prepare("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = ?")
        row.bind(book, at: 1)
        guard try row.step() else { return nil }
        return row.isNull(at: 0) ? nil : row.int64(at: 0)
    }

    func testCoreDatasTriggersRunOnWritesToItsStore() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: Core Data's triggers are not checked") }
        let dir = TemporaryDirectory()
        let store = try copyStore(fixtures.appendingPathComponent("coredata-stores/coredataplus-samplemodel2/SampleModel2_V2.sqlite"), into: dir)
        let model = try XCTUnwrap(try ManagedObjectModel.cachedInStore(at: store))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: store)
        let before1 = try XCTUnwrap(try pagesCount(store, book: 1)), before2 = try XCTUnwrap(try pagesCount(store, book: 2))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let uuid = try XCTUnwrap(context.objectID(forURIString: "x-coredata://\(coordinator.storeIdentifier ?? "")/Book/p2"))
            let book = try context.existingObject(with: uuid)
            XCTAssertEqual(book.value(forKey: "pagesCount") as? Int64, before2)
            // A page added: the PARAMETER_INSERT trigger counts it.
            let first = try context.existingObject(with: try XCTUnwrap(context.objectID(forURIString: "x-coredata://\(coordinator.storeIdentifier ?? "")/Page/p1")))
            let page = try insertPage(number: 1_000, into: context, book: book, contentOf: first)
            try context.save()
            XCTAssertEqual(try self.pagesCount(store, book: 2), before2 + 1)
            // The snapshot the save stored was stale: refreshed, the object reads the triggers' value.
            context.refresh(book, mergeChanges: false)
            XCTAssertEqual(book.value(forKey: "pagesCount") as? Int64, before2 + 1, "the row cache does not serve the stale count")
            // Moved to another book: one count down, the other up.
            let other = try context.existingObject(with: try XCTUnwrap(context.objectID(forURIString: "x-coredata://\(coordinator.storeIdentifier ?? "")/Book/p1")))
            try page.setValue(other, forKey: "book")
            try context.save()
            XCTAssertEqual(try self.pagesCount(store, book: 2), before2)
            XCTAssertEqual(try self.pagesCount(store, book: 1), before1 + 1)
            // Deleted: counted out.
            context.delete(page)
            try context.save()
            XCTAssertEqual(try self.pagesCount(store, book: 1), before1)
            // A new book with a page: the SOURCE_INSERT trigger counts its pages, the page's trigger adds it.
            let fresh = try context.insertNewObject(forEntityName: "Book")
            try fresh.setValue("A new book", forKey: "title")
            try fresh.setValue(UUID(), forKey: "uniqueID")
            try fresh.setValue(Decimal(1), forKey: "price")
            try fresh.setValue(Date(), forKey: "publishedAt")
            try fresh.setValue(try context.existingObject(with: try XCTUnwrap(context.objectID(forURIString: "x-coredata://\(coordinator.storeIdentifier ?? "")/Author/p1"))), forKey: "author")
            try fresh.setValue(book.value(forKey: "frontCover"), forKey: "frontCover")
            try insertPage(number: 1, into: context, book: fresh, contentOf: first)
            try context.save()
            context.refresh(fresh, mergeChanges: false)
            XCTAssertEqual(fresh.value(forKey: "pagesCount") as? Int64, 1, "counted at its insert, then its page's")
        }
    }

    /// Core Data's functions and collations on any connection: the time, the string helpers, a collation in an
    /// index, and an undocumented function refused by name.
    func testCoreDatasFunctionsAndCollationsAreRegistered() throws {
        let dir = TemporaryDirectory()
        let connection = try SQLiteConnection(path: dir.url.appendingPathComponent("f.sqlite").path, create: true)
        let now = try connection.prepare("SELECT NSCoreDataNow(), NSCoreDataToUpper('straße'), NSCoreDataToLower('ÉCOLE'), NSCoreDataCanonical('Élan'), NSCoreDataCanonical(NULL), NSCoreDataCanonical(12)")
        XCTAssertTrue(try now.step())
        XCTAssertEqual(now.double(at: 0), Date().timeIntervalSinceReferenceDate, accuracy: 60)
        XCTAssertEqual(now.text(at: 1), "STRASSE")
        XCTAssertEqual(now.text(at: 2), "école")
        XCTAssertEqual(now.text(at: 3), "elan")
        XCTAssertTrue(now.isNull(at: 4))
        XCTAssertEqual(now.int64(at: 5), 12)
        try connection.execute("CREATE TABLE T (NAME VARCHAR); CREATE INDEX T_NAME ON T (NAME COLLATE NSCollateNumericallyNoCase)")
        try connection.execute("INSERT INTO T VALUES ('item 10'), ('Item 9'), ('item 1')")
        let sorted = try connection.prepare("SELECT NAME FROM T ORDER BY NAME COLLATE NSCollateNumericallyNoCase")
        var names: [String] = []
        while try sorted.step() { names.append(sorted.text(at: 0)) }
        XCTAssertEqual(names, ["item 1", "Item 9", "item 10"])
        XCTAssertThrowsError(try connection.prepare("SELECT NSCoreDataLike('a', 'b', 0)").step()) { error in
            XCTAssertTrue("\(error)".contains("NSCoreDataLike"), "\(error)")
        }
    }

    /// A store Faultline creates for the fixture's model holds Core Data's own triggers, to the letter.
    func testNewStoresGetCoreDatasTriggers() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: Core Data's triggers are not compared") }
        let dir = TemporaryDirectory()
        let original = try copyStore(fixtures.appendingPathComponent("coredata-stores/coredataplus-samplemodel2/SampleModel2_V2.sqlite"), into: dir)
        let model = try XCTUnwrap(try ManagedObjectModel.cachedInStore(at: original))
        XCTAssertTrue(model.warnings.isEmpty, "\(model.warnings)")
        let fresh = dir.url.appendingPathComponent("fresh.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: fresh)
        func triggers(_ url: URL) throws -> [String: String] {
            let connection = try SQLiteConnection(path: url.path, create: false)
            let rows = try connection.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
            var result: [String: String] = [:]
            while try rows.step() { result[rows.text(at: 0)] = rows.text(at: 1) }
            return result
        }
        let theirs = try triggers(original)
        XCTAssertEqual(theirs.count, 5)
        XCTAssertEqual(try triggers(fresh), theirs)
    }

    /// Each form Faultline computes, in a store it creates, after inserts, updates and deletes: a count and a sum
    /// over a to-many, an own attribute copied and lower-cased, a to-one's attribute, and now().
    func testDerivedAttributesAreKeptInFaultlinesStores() throws {
        let dir = TemporaryDirectory()
        let derived = { (name: String, type: AttributeType, expression: String) -> AttributeDescription in
            let attribute = AttributeDescription(name: name, type: type)
            attribute.derivationExpression = expression
            return attribute
        }
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Author", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "books", destination: "Book", inverse: "author", isToMany: true),
            ]),
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "title", type: .string),
                derived("pageCount", .integer64, "pages.@count"),
                derived("wordCount", .integer64, "pages.@sum.words"),
                derived("searchTitle", .string, "lowercase:(title)"),
                derived("authorName", .string, "author.name"),
                derived("modified", .date, "now()"),
                derived("average", .double, "pages.@avg.words"),
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "pages", destination: "Page", inverse: "book", isToMany: true),
            ]),
            EntityDescription(name: "Page", properties: [
                AttributeDescription(name: "words", type: .integer64),
                RelationshipDescription(name: "book", destination: "Book", inverse: "pages"),
            ]),
        ])
        XCTAssertEqual(model.warnings.map { "\($0)" }.filter { $0.contains("average") }.count, 1, "the average is said not to be computed: \(model.warnings)")
        let (coordinator, context) = try makeStack(model, in: dir)
        _ = coordinator
        let store = dir.file("store.sqlite")
        func row(_ pk: Int64) throws -> [String: String] {
            let connection = try SQLiteConnection(path: store.path, create: false)
            let statement = try connection.prepare("SELECT ZPAGECOUNT, ZWORDCOUNT, ZSEARCHTITLE, ZAUTHORNAME, ZMODIFIED FROM ZBOOK WHERE Z_PK = ?")
            statement.bind(pk, at: 1)
            guard try statement.step() else { return [:] }
            return ["pages": statement.text(at: 0), "words": statement.text(at: 1), "search": statement.text(at: 2), "author": statement.text(at: 3),
                    "modified": statement.isNull(at: 4) ? "" : String(statement.double(at: 4))]
        }
        try context.performAndWait {
            let ann = try context.insertNewObject(forEntityName: "Author")
            try ann.setValue("Ann Leckie", forKey: "name")
            let book = try context.insertNewObject(forEntityName: "Book")
            try book.setValue("Ancillary JUSTICE", forKey: "title")
            try book.setValue(ann, forKey: "author")
            var pages: [ManagedObject] = []
            for words in [100, 250] {
                let page = try context.insertNewObject(forEntityName: "Page")
                try page.setValue(Int64(words), forKey: "words")
                try page.setValue(book, forKey: "book")
                pages.append(page)
            }
            try context.save()
            var values = try row(1)
            XCTAssertEqual(values["pages"], "2")
            XCTAssertEqual(values["words"], "350")
            XCTAssertEqual(values["search"], "ancillary justice")
            XCTAssertEqual(values["author"], "Ann Leckie")
            let stamped = try XCTUnwrap(Double(values["modified"] ?? ""))
            XCTAssertEqual(stamped, Date().timeIntervalSinceReferenceDate, accuracy: 60)
            // Updates: a page's words, the title, the author's name; the object refreshed reads them.
            try pages[0].setValue(Int64(120), forKey: "words")
            try book.setValue("Ancillary Sword", forKey: "title")
            try ann.setValue("A. Leckie", forKey: "name")
            try context.save()
            values = try row(1)
            XCTAssertEqual(values["words"], "370")
            XCTAssertEqual(values["search"], "ancillary sword")
            XCTAssertEqual(values["author"], "A. Leckie")
            context.refresh(book, mergeChanges: false)
            XCTAssertEqual(book.value(forKey: "wordCount") as? Int64, 370)
            XCTAssertEqual(book.value(forKey: "searchTitle") as? String, "ancillary sword")
            // A page moved to another book and one deleted.
            let other = try context.insertNewObject(forEntityName: "Book")
            try other.setValue("Provenance", forKey: "title")
            try pages[1].setValue(other, forKey: "book")
            try context.save()
            XCTAssertEqual(try row(1)["pages"], "1")
            XCTAssertEqual(try row(1)["words"], "120")
            XCTAssertEqual(try row(2)["pages"], "1")
            XCTAssertEqual(try row(2)["words"], "250")
            context.delete(pages[0])
            try context.save()
            XCTAssertEqual(try row(1)["pages"], "0")
            XCTAssertEqual(try row(1)["words"], "0")
            // The author deleted (nullify): the copied name goes with it.
            context.delete(ann)
            try context.save()
            XCTAssertEqual(try row(1)["author"], "")
        }
    }
}

