import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// The engine on stores whose key columns hold what Core Data never writes, in process (so that `make test-asan`
/// checks every step): each bad value is refused with `StoreError.invalidStoredValue` naming the table, column and
/// row, the context stays usable, and the same store reads again once the row is mended.
final class DamagedStoreTests: XCTestCase {
    var dir: TemporaryDirectory!

    override func setUpWithError() throws { try makeStore() }

    /// A new store in a new folder: Rex (owned by Ann, tagged, with a walk), and France in Europe.
    func makeStore() throws {
        dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let rex = try context.insertNewObject(forEntityName: "Dog")
            try rex.setValue("Rex", forKey: "name")
            let ann = try context.insertNewObject(forEntityName: "Person")
            try ann.setValue("Ann", forKey: "name")
            try rex.setValue(ann, forKey: "owner")
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue("good", forKey: "label")
            try rex.setValue([tag], forKey: "tags")
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try walk.setValue(rex, forKey: "dog")
            let europe = try context.insertNewObject(forEntityName: "Continent")
            let france = try context.insertNewObject(forEntityName: "Country")
            try france.setValue(europe, forKey: "continent")
            try context.save()
        }
    }

    override func tearDown() { dir = nil }

    func execute(_ sql: String) {
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(dir.file("store.sqlite").path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        XCTAssertEqual(sqlite3_exec(db, sql, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    }

    /// The first column of every row `sql` returns, as text.
    func strings(_ sql: String) -> [String] {
        var db: OpaquePointer?, statement: OpaquePointer?
        XCTAssertEqual(sqlite3_open(dir.file("store.sqlite").path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        XCTAssertEqual(sqlite3_prepare_v2(db, sql, -1, &statement, nil), SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        var result: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { result.append(String(cString: sqlite3_column_text(statement, 0))) }
        return result
    }

    /// A context over a fresh coordinator (an empty row cache), as a new process would have.
    func reader() throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel())
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        return ManagedObjectContext(.privateQueue, coordinator: coordinator)
    }

    /// The table, column and row `body`'s error names (nil when it succeeds or fails otherwise).
    func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch FetchError.store(.invalidStoredValue(let table, let column, let row, let value, _)) {
            return "\(table).\(column) \(row): \(value)"
        } catch StoreError.invalidStoredValue(let table, let column, let row, let value, _) {
            return "\(table).\(column) \(row): \(value)"
        } catch {
            return "another error: \(error)"
        }
    }

    func fetch(_ context: ManagedObjectContext, _ entity: String) throws -> [ManagedObject] {
        try context.fetch(FetchRequest<ManagedObject>(entityName: entity))
    }

    func testBadPrimaryKeysAreRefusedAndTheContextGoesOn() throws {
        for (key, shown) in [("-1", "-1"), ("0", "0"), ("-9223372036854775808", "-9223372036854775808"),
                             ("9223372036854775807", "9223372036854775807"), ("281474976710656", "281474976710656")] {
            execute("UPDATE ZDOG SET Z_PK = \(key) WHERE Z_PK = 1")
            let context = try reader()
            try context.performAndWait {
                XCTAssertEqual(refusal { _ = try fetch(context, "Dog") }, "ZDOG.Z_PK the row with Z_PK \(shown): \(shown)")
                // Nothing of the refused fetch stays: the context reads other entities, and again the same.
                let tags = try fetch(context, "Tag")
                XCTAssertEqual(tags.count, 1)
                XCTAssertEqual(refusal { _ = try fetch(context, "Dog") }, "ZDOG.Z_PK the row with Z_PK \(shown): \(shown)")
                XCTAssertEqual(context.registeredObjects.map(\.entity.name), ["Tag"], "only the tag the test holds")
            }
            execute("UPDATE ZDOG SET Z_PK = 1 WHERE Z_PK = \(key)")
            let mended = try reader()
            try mended.performAndWait { XCTAssertEqual(try fetch(mended, "Dog").map { $0.value(forKey: "name") as? String }, ["Rex"]) }
        }
    }

    func testBadForeignKeysEntityNumbersAndVersionsAreRefused() throws {
        let cases: [(String, String, String)] = [
            ("UPDATE ZWALK SET ZDOG = -4", "Walk", "ZWALK.ZDOG the row with Z_PK 1: -4"),
            ("UPDATE ZWALK SET ZDOG = 'one'", "Walk", "ZWALK.ZDOG the row with Z_PK 1: the text 'one'"),
            ("UPDATE ZWALK SET ZDOG = 1.5", "Walk", "ZWALK.ZDOG the row with Z_PK 1: the real 1.5"),
            ("UPDATE ZREGION SET Z_ENT = 99 WHERE Z_PK = 1", "Region", "ZREGION.Z_ENT the row with Z_PK 1: 99"),
            ("UPDATE ZREGION SET Z_ENT = NULL WHERE Z_PK = 1", "Region", "ZREGION.Z_ENT the row with Z_PK 1: NULL"),
            ("UPDATE ZDOG SET Z_OPT = 'v2'", "Dog", "ZDOG.Z_OPT the row with Z_PK 1: the text 'v2'"),
        ]
        for (sql, entity, expected) in cases {
            try makeStore()
            execute(sql)
            let context = try reader()
            try context.performAndWait { XCTAssertEqual(refusal { _ = try fetch(context, entity) }, expected, sql) }
        }
        try makeStore()
        // Versions of any whole number, and NULL, are read.
        execute("UPDATE ZDOG SET Z_OPT = NULL; UPDATE ZTAG SET Z_OPT = -7; UPDATE ZWALK SET Z_OPT = 9223372036854775807")
        let context = try reader()
        try context.performAndWait {
            XCTAssertEqual(try fetch(context, "Dog").first?.value(forKey: "name") as? String, "Rex")
            XCTAssertEqual(try fetch(context, "Tag").count, 1)
            // A save past Int64.max wraps to a new version rather than trapping.
            let walk = try XCTUnwrap(try fetch(context, "Walk").first)
            try walk.setValue(2.5, forKey: "distance")
            try context.save()
        }
        XCTAssertEqual(strings("SELECT Z_OPT FROM ZWALK"), ["-9223372036854775808"], "the version wrapped")
    }

    func testARelationshipThatCannotBeReadIsEmptyWithItsError() throws {
        // Dog.tags ↔ Tag.dogs: one join table, named by Core Data's rule; the tag's key is in its tags column.
        let join = try XCTUnwrap(strings("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')").first)
        let column = try XCTUnwrap(strings("SELECT name FROM pragma_table_info('\(join)') WHERE name LIKE '%TAGS'").first)
        execute("UPDATE \(join) SET \(column) = -5")
        let context = try reader()
        try context.performAndWait {
            let rex = try XCTUnwrap(try fetch(context, "Dog").first)
            XCTAssertEqual(rex.objects(forRelationship: "tags").count, 0)
            guard case .invalidStoredValue(let table, let refused, _, let value, _)? = context.lastFaultError else {
                return XCTFail("the error is kept: \(String(describing: context.lastFaultError))")
            }
            XCTAssertEqual([table, refused, value], [join, column, "-5"])
        }
    }

    func testARowOfAnotherEntityThanItsReferenceSaysIsRefused() throws {
        // Spain joins France in Europe; then France's continent points at Spain's row: a Country where a Continent is
        // expected (Continent has no sub-entities, so no entity column says otherwise).
        let context0 = try reader()
        try context0.performAndWait {
            let france = try XCTUnwrap(try fetch(context0, "Country").first)
            try france.setValue(Int64(33), forKey: "code")
            let spain = try context0.insertNewObject(forEntityName: "Country")
            try spain.setValue(Int64(34), forKey: "code")
            try spain.setValue(france.value(forKey: "continent"), forKey: "continent")
            try context0.save()
        }
        execute("UPDATE ZREGION SET ZCONTINENT = (SELECT Z_PK FROM ZREGION WHERE ZCODE = 34) WHERE ZCODE = 33")
        let france = FetchRequest<ManagedObject>(entityName: "Country")
        france.predicate = try ObjectPredicate(parsing: "code == 33")
        // Fired as a fault: the object is inaccessible and the context says why.
        let context = try reader()
        try context.performAndWait {
            let country = try XCTUnwrap(try context.fetch(france).first)
            let continent = try XCTUnwrap(country.value(forKey: "continent") as? ManagedObject)
            XCTAssertNil(continent.value(forKey: "numberOfCountries"))
            guard case .invalidStoredValue(_, "Z_ENT", _, _, let expected)? = context.lastFaultError else {
                return XCTFail("\(String(describing: context.lastFaultError))")
            }
            XCTAssertTrue(expected.contains("as Continent"), expected)
        }
        // Prefetched: the fetch is refused.
        france.relationshipKeyPathsForPrefetching = ["continent"]
        let prefetching = try reader()
        try prefetching.performAndWait {
            let message = refusal { _ = try prefetching.fetch(france) }
            XCTAssertTrue(message?.hasPrefix("ZREGION.Z_ENT the row with Z_PK") == true, message ?? "no error")
        }
        // Uniqued with a registered object of the other entity: not that object, an inaccessible one.
        let both = try reader()
        try both.performAndWait {
            let countries = try fetch(both, "Country")
            let country = try XCTUnwrap(countries.first { "\($0.value(forKey: "code") ?? "")" == "33" })
            let continent = try XCTUnwrap(country.value(forKey: "continent") as? ManagedObject)
            XCTAssertFalse(countries.contains { $0 === continent })
            XCTAssertEqual(continent.entity.name, "Continent")
            XCTAssertNotNil(both.lastFaultError)
        }
    }

    func testKeysPastTheLimitAreNotAllocated() throws {
        execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_NAME = 'Tag'")
        let context = try reader()
        try context.performAndWait {
            let tag = try context.insertNewObject(forEntityName: "Tag")
            try tag.setValue("new", forKey: "label")
            XCTAssertThrowsError(try context.save()) { error in
                XCTAssertTrue("\(error)".contains("table Z_PRIMARYKEY, column Z_MAX, the row with Z_ENT 7 (Tag): 9223372036854775807"), "\(error)")
            }
            XCTAssertTrue(tag.objectID.isTemporaryID, "nothing saved")
        }
    }

    /// A row whose Z_OPT is NULL reads as version 0; changing it saves (the version becomes 1) rather than failing
    /// as a conflict with itself.
    func testAnObjectWithoutAVersionSaves() throws {
        execute("UPDATE ZDOG SET Z_OPT = NULL")
        let context = try reader()
        try context.performAndWait {
            let rex = try XCTUnwrap(try fetch(context, "Dog").first)
            try rex.setValue("Rex II", forKey: "name")
            try context.save()
        }
        XCTAssertEqual(strings("SELECT ZNAME || ' ' || Z_OPT FROM ZDOG"), ["Rex II 1"])
    }

    /// The same for a deletion.
    func testAnObjectWithoutAVersionIsDeleted() throws {
        execute("UPDATE ZTAG SET Z_OPT = NULL")
        let context = try reader()
        try context.performAndWait {
            context.delete(try XCTUnwrap(try fetch(context, "Tag").first))
            try context.save()
        }
        XCTAssertEqual(strings("SELECT count(*) FROM ZTAG"), ["0"])
    }
}
