import CFaultInjection
import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// Core Data: when a save fails, "the context's changes are left in place" — `hasChanges`, the inserted, updated
/// and deleted objects and their values — and a later `save()` can succeed. Proved by failing SQLite's k-th write,
/// sync or truncate (`SQLITE_IOERR`, `SQLITE_FULL`) during a save with inserts, updates, deletes, relationships
/// (to-one, ordered to-many, many-to-many), derived attributes and history on: afterwards the store holds what it
/// held, the context is as it was, and the retried save stores what a save without the fault stores.
///
/// `make test` tries a sample of k (every third, and the first and last of each kind); `make test-faults`
/// (`FAULTLINE_FAULTS=all`) every k.
final class FailedSaveTests: XCTestCase {
    private static func model() throws -> ManagedObjectModel {
        let derived = { (name: String, type: AttributeType, expression: String) -> AttributeDescription in
            let attribute = AttributeDescription(name: name, type: type)
            attribute.derivationExpression = expression
            return attribute
        }
        return try ManagedObjectModel(entities: [
            EntityDescription(name: "Author", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "books", destination: "Book", inverse: "author", isToMany: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "title", type: .string),
                derived("pageCount", .integer64, "pages.@count"),
                derived("authorName", .string, "author.name"),
                RelationshipDescription(name: "author", destination: "Author", inverse: "books"),
                RelationshipDescription(name: "pages", destination: "Page", inverse: "book", isToMany: true, isOrdered: true, deleteRule: .cascade),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", isToMany: true),
            ]),
            EntityDescription(name: "Page", properties: [
                AttributeDescription(name: "words", type: .integer64),
                RelationshipDescription(name: "book", destination: "Book", inverse: "pages"),
            ]),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "label", type: .string),
                RelationshipDescription(name: "books", destination: "Book", inverse: "tags", isToMany: true),
            ]),
        ])
    }

    /// A store of two authors, three books with pages and tags (history on), and a context on it holding unsaved
    /// inserts, updates and deletes of each kind.
    private func prepare(_ url: URL, pragmas: [String: String] = [:]) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [PersistentHistoryTrackingKey: true, SQLitePragmasOption: pragmas])
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        context.transactionAuthor = "tests"
        try context.performAndWait {
            func insert(_ entity: String, _ values: [String: Any]) throws -> ManagedObject {
                let object = try context.insertNewObject(forEntityName: entity)
                for (key, value) in values { try object.setValue(value, forKey: key) }
                return object
            }
            let ann = try insert("Author", ["name": "Ann"]), bob = try insert("Author", ["name": "Bob"])
            let red = try insert("Tag", ["label": "red"]), blue = try insert("Tag", ["label": "blue"])
            for (title, author, tags, pages) in [("One", ann, [red], 2), ("Two", ann, [red, blue], 3), ("Three", bob, [blue], 1)] {
                let book = try insert("Book", ["title": title, "author": author, "tags": Set(tags)])
                try book.setValue((0..<pages).map { try insert("Page", ["words": Int64(100 * ($0 + 1))]) }, forKey: "pages")
            }
            try context.save()
            context.reset()

            // The changes the failing save carries.
            let books = try context.fetch(FetchRequest<ManagedObject>(entityName: "Book", sortDescriptors: [FetchSortDescriptor(keyPath: "title")]))
            let authors = try context.fetch(FetchRequest<ManagedObject>(entityName: "Author", sortDescriptors: [FetchSortDescriptor(keyPath: "name")]))
            let tags = try context.fetch(FetchRequest<ManagedObject>(entityName: "Tag", sortDescriptors: [FetchSortDescriptor(keyPath: "label")]))
            let cy = try insert("Author", ["name": "Cy"])
            let green = try insert("Tag", ["label": "green"])
            let four = try insert("Book", ["title": "Four", "author": cy, "tags": Set([green, tags[0]])])
            try four.setValue([try insert("Page", ["words": Int64(7)]), try insert("Page", ["words": Int64(8)])], forKey: "pages")
            try books[2].setValue("Two, revised", forKey: "title")                       // "Two"
            let firstPage = try XCTUnwrap((books[2].value(forKey: "pages") as? [ManagedObject])?.first)
            try firstPage.setValue(Int64(999), forKey: "words")
            try books[1].setValue(authors[1], forKey: "author")                           // "Three" stays Bob's; "One"…
            try books[0].setValue(authors[1], forKey: "author")                           // "One" moves to Bob
            context.delete(books[1])                                                      // "Three", its page cascading
            try tags[1].setValue("crimson", forKey: "label")                              // "red"
            // The event ends, as a `perform` block's does: the delete's rules run now (Core Data's
            // `propagatesDeletesAtEndOfEvent`), so the state compared is the one the save starts from.
            context.processPendingChanges()
        }
        return (coordinator, context)
    }

    /// What a context holds, in words: whether it has changes, its inserted, updated and deleted objects, and every
    /// registered object's values and relationships (by object ID).
    private func state(of context: ManagedObjectContext) -> [String] {
        context.performAndWait {
            func describe(_ object: ManagedObject) -> String {
                var parts = [object.objectID.uriString]
                for property in object.entity.properties.sorted(by: { $0.name < $1.name }) {
                    let value = object.value(forKey: property.name)
                    let ordered = (property as? RelationshipDescription)?.isOrdered == true
                    switch value {
                    case let objects as [ManagedObject]:
                        let ids = objects.map(\.objectID.uriString)
                        parts.append("\(property.name)=[\((ordered ? ids : ids.sorted()).joined(separator: ","))]")
                    case let objects as Set<ManagedObject>: parts.append("\(property.name)={\(objects.map(\.objectID.uriString).sorted().joined(separator: ","))}")
                    case let object as ManagedObject: parts.append("\(property.name)=\(object.objectID.uriString)")
                    default: parts.append("\(property.name)=\(value.map { "\($0)" } ?? "nil")")
                    }
                }
                return parts.joined(separator: " ")
            }
            var lines = ["hasChanges \(context.hasChanges)"]
            lines.append("inserted " + context.insertedObjects.map(\.objectID.uriString).sorted().joined(separator: ","))
            lines.append("updated " + context.updatedObjects.map(\.objectID.uriString).sorted().joined(separator: ","))
            lines.append("deleted " + context.deletedObjects.map(\.objectID.uriString).sorted().joined(separator: ","))
            lines += context.registeredObjects.map(describe).sorted()
            return lines
        }
    }

    /// Every table's rows as SQLite holds them, but `Z_PRIMARYKEY` (a save reserves keys in a transaction of its
    /// own, as Core Data's does: a failed save leaves them used).
    private func rows(of url: URL) throws -> [String] { try storeRows(of: url, excluding: ["Z_PRIMARYKEY"]) }

    /// The store's objects by their values, keys left out (a retried save may take other keys than a first one).
    private func content(of url: URL) throws -> [String] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [ReadOnlyPersistentStoreOption: true])
        return try content(in: ManagedObjectContext(.privateQueue, coordinator: coordinator), history: url)
    }

    /// The objects `context` fetches, by their values (and the store's history).
    private func content(in context: ManagedObjectContext, history url: URL) throws -> [String] {
        try context.performAndWait {
            func name(_ object: ManagedObject) -> String {
                ["name", "title", "label", "words"].compactMap { object.entity.attribute(named: $0).flatMap { object.value(forKey: $0.name).map { "\($0)" } } }.first ?? "?"
            }
            var lines: [String] = []
            for entity in ["Author", "Book", "Page", "Tag"] {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
                    var parts = [entity]
                    for property in object.entity.properties.sorted(by: { $0.name < $1.name }) {
                        let ordered = (property as? RelationshipDescription)?.isOrdered == true
                        switch object.value(forKey: property.name) {
                        case let objects as [ManagedObject]:
                            let names = objects.map(name)
                            parts.append("\(property.name)=[\((ordered ? names : names.sorted()).joined(separator: ","))]")
                        case let objects as Set<ManagedObject>: parts.append("\(property.name)={\(objects.map(name).sorted().joined(separator: ","))}")
                        case let object as ManagedObject: parts.append("\(property.name)=\(name(object))")
                        case let value?: parts.append("\(property.name)=\(value)")
                        case nil: parts.append("\(property.name)=nil")
                        }
                    }
                    lines.append(parts.joined(separator: " "))
                }
            }
            let history = try PersistentHistory.read(storeAt: url, model: try Self.model())
            lines += history.transactions.map { "transaction by \($0.author ?? "-"): " + $0.changes.map { "\($0.kind) \($0.entity)" }.sorted().joined(separator: ", ") }
            return lines.sorted()
        }
    }

    /// Compares two descriptions line by line, reporting only the lines that differ (at most three each way).
    private func assertSame(_ actual: [String], _ expected: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        guard actual != expected else { return }
        let missing = expected.filter { !actual.contains($0) }.prefix(3), extra = actual.filter { !expected.contains($0) }.prefix(3)
        XCTFail("\(message): missing \(Array(missing)), unexpected \(Array(extra))", file: file, line: line)
    }


    func testASaveFailingAtAnyWriteSyncOrTruncateLeavesStoreAndContextAsTheyWere() throws {
        let dir = TemporaryDirectory()
        // The save without a fault: what a retried save must store.
        let reference = dir.file("reference.sqlite")
        do {
            let (_, context) = try prepare(reference)
            try context.performAndWait { try context.save() }
        }
        let expected = try content(of: reference)
        XCTAssertTrue(expected.contains { $0.hasPrefix("Book author=Cy authorName=Cy pageCount=2") }, "derived values are in: \(expected)")

        // Faultline's default (WAL, synchronous=NORMAL: a commit writes the log and syncs only at checkpoints), and a
        // rollback journal with synchronous=FULL (a commit syncs the journal and the file, and truncates the journal).
        let journals: [[String: String]] = [[:], ["journal_mode": "DELETE", "synchronous": "FULL"]]
        try withFaultInjection {
            var run = 0
            var tried = 0, failed = 0
            for pragmas in journals {
            for (kinds, code) in [(InjectedFault.write, SQLITE_IOERR | (3 << 8)), (InjectedFault.write, SQLITE_FULL),
                                  (InjectedFault.sync, SQLITE_IOERR | (4 << 8)), (InjectedFault.truncate, SQLITE_IOERR | (6 << 8))] {
                run += 1
                let counting = dir.file("count-\(run).sqlite")
                let (_, context) = try prepare(counting, pragmas: pragmas)
                let n = try countingFaults(kinds) { try context.performAndWait { try context.save() } }
                for k in faultSample(n) {
                    let fault = InjectedFault(kinds: kinds, code: code, k: k)
                    let url = dir.file("run\(run)-k\(k).sqlite")
                    let (coordinator, context) = try prepare(url, pragmas: pragmas)
                    let storeBefore = try rows(of: url)
                    // Describing fires relationship faults, which registers their destinations: the second look is
                    // the one compared.
                    _ = state(of: context)
                    let contextBefore = state(of: context)
                    fault.arm()
                    let outcome = Result { try context.performAndWait { try context.save() } }
                    faultinjection_disarm()
                    tried += 1
                    if case .failure(let error) = outcome {
                        failed += 1
                        assertSame(try rows(of: url), storeBefore, "\(fault): the store holds what it held (\(error))")
                        assertSame(state(of: context), contextBefore, "\(fault): the context is as it was")
                        try context.performAndWait { try context.save() }
                    }
                    assertSame(try content(of: url), expected, "\(fault): the save stores what a save without the fault stores")
                    try context.performAndWait { context.refreshAllObjects() }
                    XCTAssertFalse(try context.performAndWait { context.hasChanges }, "\(fault)")
                    // The context that failed, its registry and the coordinator's row cache agree with the store.
                    assertSame(try content(in: context, history: url), expected, "\(fault): the context reads what the store holds")
                    _ = coordinator
                }
            }
            }
            XCTAssertGreaterThan(failed, tried / 2, "most injected faults fail the save (\(failed) of \(tried))")
            print("failed saves: \(failed) of \(tried) injected faults failed the save; each left store and context as they were")
        }
    }

    /// Core Data: a save refused by validation or by a uniqueness constraint (the error merge policy) leaves the
    /// context's changes in place, exactly; fixed, the next save succeeds.
    func testASaveRefusedByValidationOrAConstraintLeavesTheContextAsItWas() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Member", properties: [
                AttributeDescription(name: "email", type: .string, isOptional: false),
                AttributeDescription(name: "age", type: .integer16, maxValue: 150),
            ], uniquenessConstraints: [["email"]]),
        ])
        let dir = TemporaryDirectory()
        let url = dir.file("Members.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let ann = try context.insertNewObject(forEntityName: "Member")
            try ann.setValue("ann@example.com", forKey: "email")
            try context.save()
            try ann.setValue(Int16(30), forKey: "age")
            let bob = try context.insertNewObject(forEntityName: "Member")
            try bob.setValue(Int16(200), forKey: "age")                  // no email, and too old
            _ = self.state(of: context)
            let before = self.state(of: context), storeBefore = try self.rows(of: url)
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.validation(let failures) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(Set(failures.map(\.key)), ["email", "age"])
            }
            self.assertSame(self.state(of: context), before, "refused by validation: the context is as it was")
            self.assertSame(try self.rows(of: url), storeBefore, "refused by validation: nothing written")

            try bob.setValue(Int16(40), forKey: "age")
            try bob.setValue("ann@example.com", forKey: "email")        // Ann's: a uniqueness conflict
            let conflicted = self.state(of: context)
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.constraintConflicts = error else { return XCTFail("\(error)") }
            }
            self.assertSame(self.state(of: context), conflicted, "refused by a constraint: the context is as it was")
            self.assertSame(try self.rows(of: url), storeBefore, "refused by a constraint: nothing written")

            try bob.setValue("bob@example.com", forKey: "email")
            try context.save()
            XCTAssertFalse(context.hasChanges)
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Member")), 2)
        }
    }
}
