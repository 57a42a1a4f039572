import Foundation
import XCTest
@testable import Faultline

final class SaveTests: XCTestCase {
    func testConflictBetweenTwoCoordinatorsIsDetectedAndNothingIsLost() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let (first, firstContext) = try makeStack(model, in: dir)
        // The program keeps the dog it saved: it was read (written) at version 1.
        let rex = try firstContext.performAndWait {
            let dog = try firstContext.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Rex", forKey: "name")
            try firstContext.save()
            return dog
        }
        let id = rex.objectID
        // A second coordinator (as another process would) on the same file.
        let second = PersistentStoreCoordinator(managedObjectModel: model)
        try second.addPersistentStore(at: dir.file("store.sqlite"))
        let secondContext = ManagedObjectContext(.privateQueue, coordinator: second)
        let secondID = try XCTUnwrap(secondContext.objectID(forURIString: id.uriString))
        try secondContext.performAndWait {
            let dog = try secondContext.existingObject(with: secondID)
            try dog.setValue("Max", forKey: "name")
            try secondContext.save()
        }
        try firstContext.performAndWait {
            let dog = firstContext.object(with: id)
            XCTAssertTrue(dog === rex)
            try dog.setValue("Buddy", forKey: "name")
            XCTAssertThrowsError(try firstContext.save()) { error in
                guard case SaveError.conflicts(let conflicts) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(conflicts.count, 1)
                XCTAssertEqual(conflicts[0].oldVersionNumber, 1)
                XCTAssertEqual(conflicts[0].newVersionNumber, 2)
                XCTAssertTrue("\(error)".contains("was read at version 1, now version 2 in the store"), "\(error)")
            }
            // Nothing lost: the store keeps the other writer's value, the context keeps its change.
            XCTAssertEqual(dog.value(forKey: "name") as? String, "Buddy")
            XCTAssertTrue(dog.hasChanges)
            // Resolving: refresh merging the change, then save again.
            firstContext.refresh(dog, mergeChanges: true)
            XCTAssertEqual(dog.value(forKey: "name") as? String, "Buddy")
            try firstContext.save()
        }
        _ = first
        let check = PersistentStoreCoordinator(managedObjectModel: model)
        try check.addPersistentStore(at: dir.file("store.sqlite"))
        let checkContext = ManagedObjectContext(.privateQueue, coordinator: check)
        try checkContext.performAndWait {
            let dog = try XCTUnwrap(checkContext.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).first)
            XCTAssertEqual(dog.value(forKey: "name") as? String, "Buddy")
            XCTAssertEqual(dog.version, 3, "Z_OPT went 1 → 2 (other writer) → 3")
        }
    }

    func testRefreshAllObjectsTakesOtherWritersValuesAndKeepsUnsavedChanges() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let (_, context) = try makeStack(model, in: dir)
        let ids: [ManagedObjectID] = try context.performAndWait {
            let walks = try (0..<2).map { i -> ManagedObject in
                let walk = try context.insertNewObject(forEntityName: "Walk")
                try walk.setValue(Double(i), forKey: "distance")
                try walk.setValue(Date(timeIntervalSinceReferenceDate: 0), forKey: "date")
                return walk
            }
            try context.save()
            return walks.map(\.objectID)
        }
        // Another coordinator changes both walks' distance.
        let (_, other) = try makeStack(model, in: dir)
        try other.performAndWait {
            for id in ids {
                let walk = try other.existingObject(with: try XCTUnwrap(other.objectID(forURIString: id.uriString)))
                try walk.setValue(42.0, forKey: "distance")
            }
            try other.save()
        }
        try context.performAndWait {
            let first = context.object(with: ids[0]), second = context.object(with: ids[1])
            let changedDate = Date(timeIntervalSinceReferenceDate: 86_400)
            try first.setValue(changedDate, forKey: "date")
            let inserted = try context.insertNewObject(forEntityName: "Walk")
            try inserted.setValue(7.0, forKey: "distance")
            context.refreshAllObjects()
            XCTAssertEqual(first.value(forKey: "distance") as? Double, 42)
            XCTAssertEqual(second.value(forKey: "distance") as? Double, 42)
            XCTAssertEqual(first.value(forKey: "date") as? Date, changedDate, "the unsaved change is kept")
            XCTAssertTrue(first.hasChanges)
            XCTAssertEqual(inserted.value(forKey: "distance") as? Double, 7, "inserted objects are left alone")
            try context.save()
        }
    }

    func testSaveStatementsHaveCoreDataShape() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let (coordinator, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try context.save()
            // One insert and one related update: key allocation transaction, then the data transaction.
            let before = coordinator.statistics.statementsExecuted
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try dog.setValue("Rex", forKey: "name")
            try walk.setValue(dog, forKey: "dog")
            try context.save()
            // BEGIN, SELECT Z_MAX, UPDATE Z_PRIMARYKEY, COMMIT; BEGIN, the order keys of the dog's saved walks (SELECT),
            // INSERT (with its order key), UPDATE, COMMIT.
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 9)
        }
    }

    func testFailedSaveWritesNothing() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let alice = try context.insertNewObject(forEntityName: "Person")
            try alice.setValue("Alice", forKey: "name")
            try context.save()
            // A batch with a uniqueness violation in the middle: nothing of it may land.
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Rex", forKey: "name")
            let duplicate = try context.insertNewObject(forEntityName: "Person")
            try duplicate.setValue("Alice", forKey: "name")
            try alice.setValue(Int16(30), forKey: "age")
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.constraintConflicts(let violations) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(violations.map(\.constraint), [["name"]])
            }
            XCTAssertTrue(duplicate.objectID.isTemporaryID, "a failed save keeps temporary IDs")
            XCTAssertTrue(context.hasChanges)
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: {
            let c = PersistentStoreCoordinator(managedObjectModel: model)
            try! c.addPersistentStore(at: dir.file("store.sqlite"))
            return c
        }())
        try reader.performAndWait {
            XCTAssertEqual(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).count, 0)
            let people = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
            XCTAssertEqual(people.count, 1)
            XCTAssertEqual(people[0].value(forKey: "age") as? Int16, 0)
        }
    }

    func testValidationReportsEveryFailureTogether() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            _ = try context.insertNewObject(forEntityName: "Person")
            _ = try context.insertNewObject(forEntityName: "Person")
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.validation(let failures) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(failures.count, 2)
                XCTAssertEqual(Set(failures.map(\.key)), ["name"])
                XCTAssertTrue(failures[0].description.hasPrefix("Person.name of x-coredata:///Person/t"))
                XCTAssertTrue(failures[0].description.hasSuffix("= nil: required (not optional)"))
            }
        }
    }

    /// Every validation rule fires, each with its exact text, all failures of a save reported together.
    func testEveryValidationRuleFires() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Form", properties: [
                AttributeDescription(name: "required", type: .string, isOptional: false),
                AttributeDescription(name: "small", type: .integer32, minValue: 10, maxValue: 20),
                AttributeDescription(name: "ratio", type: .double, minValue: 0, maxValue: 1),
                AttributeDescription(name: "code", type: .string, minValue: 2, maxValue: 4, regularExpression: "[A-Z]+"),
                AttributeDescription(name: "broken", type: .string, regularExpression: "(unclosed"),
                AttributeDescription(name: "when", type: .date, minValue: 0),
                RelationshipDescription(name: "owner", destination: "Item", inverse: "ownedForm", isOptional: false),
                RelationshipDescription(name: "items", destination: "Item", inverse: "form", isToMany: true, isOptional: false, minCount: 2, maxCount: 3),
            ]),
            EntityDescription(name: "Item", properties: [
                RelationshipDescription(name: "form", destination: "Form", inverse: "items"),
                RelationshipDescription(name: "ownedForm", destination: "Form", inverse: "owner"),
            ]),
        ])
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(model, in: dir)
        func failures(_ configure: (ManagedObject) throws -> Void) throws -> [String] {
            try context.performAndWait {
                defer { context.rollback() }
                let form = try context.insertNewObject(forEntityName: "Form")
                try form.setValue("x", forKey: "required")
                try form.setValue(try context.insertNewObject(forEntityName: "Item"), forKey: "owner")
                try form.setValue(try (0..<2).map { _ in try context.insertNewObject(forEntityName: "Item") }, forKey: "items")
                try configure(form)
                do { try context.save() } catch SaveError.validation(let list) {
                    return list.map { "\($0.key) = \($0.value): \($0.rule)" }
                }
                return []
            }
        }
        XCTAssertEqual(try failures { _ in }, [], "a valid form saves")
        let cases: [(String, (ManagedObject) throws -> Void, [String])] = [
            ("required attribute", { try $0.setValue(nil, forKey: "required") }, ["required = nil: required (not optional)"]),
            ("minimum", { try $0.setValue(9, forKey: "small") }, ["small = 9: less than the minimum 10.0"]),
            ("maximum", { try $0.setValue(21, forKey: "small") }, ["small = 21: greater than the maximum 20.0"]),
            ("double bounds", { try $0.setValue(1.5, forKey: "ratio") }, ["ratio = 1.5: greater than the maximum 1.0"]),
            ("shorter", { try $0.setValue("A", forKey: "code") }, ["code = \"A\": shorter than 2 characters"]),
            ("longer", { try $0.setValue("ABCDE", forKey: "code") }, ["code = \"ABCDE\": longer than 4 characters"]),
            ("pattern", { try $0.setValue("ab", forKey: "code") }, ["code = \"ab\": does not match /[A-Z]+/"]),
            ("broken pattern", { try $0.setValue("anything", forKey: "broken") },
             ["broken = \"anything\": cannot be checked: the model's pattern /(unclosed/ is not a valid regular expression"]),
            ("date minimum", { try $0.setValue(Date(timeIntervalSinceReferenceDate: -1), forKey: "when") }, ["when = -1: less than the minimum 0.0"]),
            ("required to-one", { try $0.setValue(nil, forKey: "owner") }, ["owner = nil: required (not optional)"]),
            ("required to-many", { try $0.setValue([ManagedObject](), forKey: "items") }, ["items = 0 objects: required (not optional)"]),
            ("fewer", { form in try form.setValue([try context.insertNewObject(forEntityName: "Item")], forKey: "items") }, ["items = 1 objects: fewer than 2"]),
            ("more", { form in try form.setValue(try (0..<4).map { _ in try context.insertNewObject(forEntityName: "Item") }, forKey: "items") },
             ["items = 4 objects: more than 3"]),
            ("together", { form in try form.setValue(nil, forKey: "required"); try form.setValue(30, forKey: "small") },
             ["required = nil: required (not optional)", "small = 30: greater than the maximum 20.0"]),
        ]
        for (name, configure, expected) in cases {
            XCTAssertEqual(try failures(configure), expected, name)
        }
    }

    func testTypeMismatchesAreErrorsNotCrashes() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let person = try context.insertNewObject(forEntityName: "Person")
            XCTAssertThrowsError(try person.setValue("old", forKey: "age")) { error in
                XCTAssertEqual("\(error)", "Person.age: expected a value of type Integer 16, got String")
            }
            XCTAssertThrowsError(try person.setValue(40_000, forKey: "age")) { error in
                XCTAssertEqual("\(error)", "Person.age: 40000 does not fit in Integer 16 (-32768 to 32767)")
            }
            let walk = try context.insertNewObject(forEntityName: "Walk")
            XCTAssertThrowsError(try walk.setValue(Date(timeIntervalSinceReferenceDate: 1e300), forKey: "date")) { error in
                XCTAssertEqual("\(error)", "Walk.date: 1e+300 seconds since 2001 is outside the dates a Date attribute holds (years 1 to 4001)")
            }
            XCTAssertThrowsError(try person.setValue(1, forKey: "height")) { error in
                XCTAssertEqual("\(error)", "entity 'Person' has no property 'height'")
            }
            let tag = try context.insertNewObject(forEntityName: "Tag")
            XCTAssertThrowsError(try person.setValue([tag], forKey: "dogs")) { error in
                XCTAssertEqual("\(error)", "Person.dogs: expected a Dog, got a Tag")
            }
        }
    }

    func testAllAttributeTypesRoundTrip() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Everything", properties: [
                AttributeDescription(name: "i16", type: .integer16), AttributeDescription(name: "i32", type: .integer32),
                AttributeDescription(name: "i64", type: .integer64), AttributeDescription(name: "d", type: .double),
                AttributeDescription(name: "f", type: .float), AttributeDescription(name: "dec", type: .decimal),
                AttributeDescription(name: "s", type: .string), AttributeDescription(name: "b", type: .boolean),
                AttributeDescription(name: "date", type: .date), AttributeDescription(name: "bin", type: .binary, allowsExternalBinaryDataStorage: true),
                AttributeDescription(name: "u", type: .uuid), AttributeDescription(name: "uri", type: .uri),
                AttributeDescription(name: "t", type: .transformable),
                AttributeDescription(name: "temp", type: .string, isTransient: true, defaultValue: "scratch"),
            ]),
        ])
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(model, in: dir)
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 123.5)
        try context.performAndWait {
            let object = try context.insertNewObject(forEntityName: "Everything")
            let values: [String: Any] = ["i16": Int16(-7), "i32": Int32(70_000), "i64": Int64.max, "d": 2.5, "f": Float(1.25),
                                         "dec": Decimal(string: "1234567890.12345")!, "s": "héllo", "b": true, "date": date,
                                         "bin": Data([0, 1, 2]), "u": uuid, "uri": URL(string: "https://example.com/a?b=c")!,
                                         "t": ["a": 7, "b": [true, "x"]], "temp": "changed"]
            for (key, value) in values { try object.setValue(value, forKey: key) }
            try context.save()
            context.reset()
            let read = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Everything")).first)
            XCTAssertEqual(read.value(forKey: "i16") as? Int16, -7)
            XCTAssertEqual(read.value(forKey: "i32") as? Int32, 70_000)
            XCTAssertEqual(read.value(forKey: "i64") as? Int64, Int64.max)
            XCTAssertEqual(read.value(forKey: "d") as? Double, 2.5)
            XCTAssertEqual(read.value(forKey: "f") as? Float, 1.25)
            XCTAssertEqual(read.value(forKey: "dec") as? Decimal, Decimal(string: "1234567890.12345"))
            XCTAssertEqual(read.value(forKey: "s") as? String, "héllo")
            XCTAssertEqual(read.value(forKey: "b") as? Bool, true)
            XCTAssertEqual(read.value(forKey: "date") as? Date, date)
            XCTAssertEqual(read.value(forKey: "bin") as? Data, Data([0, 1, 2]))
            XCTAssertEqual(read.value(forKey: "u") as? UUID, uuid)
            XCTAssertEqual(read.value(forKey: "uri") as? URL, URL(string: "https://example.com/a?b=c"))
            let t = try XCTUnwrap(read.value(forKey: "t") as? [String: Any])
            XCTAssertEqual(t["a"] as? Int, 7)
            XCTAssertEqual(t["b"] as? [AnyHashable], [true, "x"])
            XCTAssertEqual(read.value(forKey: "temp") as? String, "scratch", "transient values are never stored")
        }
        // Dates are stored as seconds since 2001-01-01, as Core Data stores them.
        let connection = try SQLiteConnection(path: dir.file("store.sqlite").path, create: false)
        let statement = try connection.prepare("SELECT ZDATE, typeof(ZDEC), length(ZU) FROM ZEVERYTHING")
        XCTAssertTrue(try statement.step())
        XCTAssertEqual(statement.double(at: 0), 123.5)
        XCTAssertEqual(statement.text(at: 1), "real", "DECIMAL columns have NUMERIC affinity, as Core Data's")
        XCTAssertEqual(statement.int64(at: 2), 16)
    }
}

final class StoreOpeningTests: XCTestCase {
    func testCorruptFileIsAClearErrorAndIsLeftAlone() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("junk.sqlite")
        let junk = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try junk.write(to: path)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel())
        XCTAssertThrowsError(try coordinator.addPersistentStore(at: path)) { error in
            XCTAssertTrue("\(error)".hasPrefix("'\(path.path)' is not a Faultline store: not an SQLite database"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: path), junk, "the file is untouched")
    }

    func testForeignSQLiteDatabaseIsRejected() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("other.sqlite")
        let connection = try SQLiteConnection(path: path.path, create: true)
        try connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel())
        XCTAssertThrowsError(try coordinator.addPersistentStore(at: path)) { error in
            XCTAssertEqual("\(error)", "'\(path.path)' is not a Faultline store: it has no Z_METADATA and Z_PRIMARYKEY tables")
        }
    }

    func testModelMismatchNamesTheEntities() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("store.sqlite")
        let v1 = try ManagedObjectModel(entities: [EntityDescription(name: "A", properties: [AttributeDescription(name: "x", type: .string)]),
                                                   EntityDescription(name: "Gone")])
        try PersistentStoreCoordinator(managedObjectModel: v1).addPersistentStore(at: path)
        let v2 = try ManagedObjectModel(entities: [EntityDescription(name: "A", properties: [AttributeDescription(name: "x", type: .integer64)]),
                                                   EntityDescription(name: "New")])
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: v2).addPersistentStore(at: path)) { error in
            XCTAssertEqual("\(error)", "the store '\(path.path)' was made with a different model (migration needed): entity 'A' changed; entity 'New' is not in the store; entity 'Gone' is in the store but not in the model")
        }
    }

    func testForeignValuesInColumnsReadWithoutTrapping() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let person = try context.insertNewObject(forEntityName: "Person")
            try person.setValue("Ann", forKey: "name")
            try context.save()
        }
        // Another program wrote values of the wrong storage class into the integer column.
        let connection = try SQLiteConnection(path: dir.file("store.sqlite").path, create: false)
        let expected: [(String, Int16?, Int64)] = [("1e300", .max, .max), ("-1e300", .min, .min), ("'12'", 12, 12), ("'twelve'", nil, 0), ("x'00'", nil, 0)]
        for (value, kvc, typed) in expected {
            try connection.execute("UPDATE ZPERSON SET ZAGE = \(value)")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
            let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try reader.performAndWait {
                let person = try XCTUnwrap(reader.fetch(FetchRequest<ManagedObject>(entityName: "Person")).first)
                XCTAssertEqual(person.value(forKey: "age") as? Int16, kvc, value)
                XCTAssertEqual(person[Attribute<Int64>("age")], typed, value)
            }
        }
    }

    func testTruncatedStoreIsAClearError() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("store.sqlite")
        let model = try makeTestModel()
        do {
            let (_, context) = try makeStack(model, in: dir)
            try context.performAndWait {
                for i in 0..<200 {
                    let dog = try context.insertNewObject(forEntityName: "Dog")
                    try dog.setValue(String(repeating: "x", count: 200) + "\(i)", forKey: "name")
                }
                try context.save()
            }
        }
        // Checkpoint the WAL into the main file, then cut the file in half.
        let connection = try SQLiteConnection(path: path.path, create: false)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE")
        let data = try Data(contentsOf: path)
        try data.prefix(data.count / 2).write(to: path)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.addPersistentStore(at: path)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")) }
            XCTFail("a truncated store must not read as valid")
        } catch {
            let text = "\(error)"
            XCTAssertTrue(text.contains(path.path) && (text.contains("malformed") || text.contains("not an SQLite database") || text.contains("disk image")), text)
        }
    }
}

final class ConcurrencyTests: XCTestCase {
    func testContextsOnTheirOwnQueuesShareOneCoordinator() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let group = DispatchGroup()
        let failures = LockedList()
        for worker in 0..<4 {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            group.enter()
            context.perform {
                defer { group.leave() }
                do {
                    for batch in 0..<10 {
                        for i in 0..<20 {
                            let dog = try context.insertNewObject(forEntityName: "Dog")
                            try dog.setValue("w\(worker)-b\(batch)-\(i)", forKey: "name")
                        }
                        try context.save()
                        _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).map { $0.value(forKey: "name") }
                    }
                } catch {
                    failures.append("\(error)")
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(failures.items, [])
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let dogs = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
            XCTAssertEqual(dogs.count, 800)
            XCTAssertEqual(Set(dogs.map(\.objectID)).count, 800, "every object got its own key")
        }
    }
}

final class LockedList: @unchecked Sendable {
    private var values: [String] = []
    private let lock = NSLock()
    func append(_ value: String) { lock.lock(); values.append(value); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return values }
}
