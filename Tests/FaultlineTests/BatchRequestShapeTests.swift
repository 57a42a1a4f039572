import Foundation
import XCTest
@testable import Faultline

/// Batch requests as Core Data code writes them: classes configured after they are made, `init(fetchRequest:)`,
/// `init(objectIDs:)`, a dictionary handler, results read through `result`, and the change dictionary merged with
/// `mergeChanges(fromRemoteContextSave:into:)`.
final class BatchRequestShapeTests: XCTestCase {
    func testBatchRequestsInCoreDataShapes() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            // Insert: rows from a handler, one NSMutableDictionary a call, until it returns true.
            var names = ["Rex", "Ada", "Bo", "Cy"][...]
            let insert = BatchInsertRequest(entityName: "Dog", dictionaryHandler: { row in
                guard let name = names.popFirst() else { return true }
                row["name"] = name
                return false
            })
            insert.resultType = .objectIDs
            let inserted = try context.execute(insert)
            XCTAssertEqual((inserted.result as? [ManagedObjectID])?.count, 4)
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), 4)
            let rex = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog", predicate: try ObjectPredicate(parsing: "name == 'Rex'"))).first)
            XCTAssertEqual(rex.value(forKey: "name") as? String, "Rex")

            // Update: configured after it is made; the count through `result`.
            let update = BatchUpdateRequest(entityName: "Dog")
            update.predicate = try ObjectPredicate(parsing: "name BEGINSWITH 'A' OR name BEGINSWITH 'B'")
            update.propertiesToUpdate = ["name": "renamed"]
            update.resultType = .updatedObjectsCountResultType
            XCTAssertEqual(try context.execute(update).result as? Int, 2)

            // Delete by a fetch request, then by object IDs; the IDs merged as Core Data code merges them.
            let fetch = FetchRequest<ManagedObject>(entityName: "Dog")
            fetch.predicate = try ObjectPredicate(parsing: "name == 'renamed'")
            let delete = BatchDeleteRequest(fetchRequest: fetch)
            delete.resultType = .resultTypeObjectIDs
            let deleted = try context.execute(delete)
            let ids = try XCTUnwrap(deleted.result as? [ManagedObjectID])
            XCTAssertEqual(ids.count, 2)
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: ids], into: [context])
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), 2)

            XCTAssertFalse(rex.isDeleted)
            let byID = BatchDeleteRequest(objectIDs: [rex.objectID])
            byID.resultType = .resultTypeCount
            XCTAssertEqual(try context.execute(byID).result as? Int, 1)
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: [rex]], into: [context])
            XCTAssertEqual(try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).compactMap { $0.value(forKey: "name") as? String }, ["Cy"])
            // Status only: `result` is true, as Core Data's NSNumber(true).
            XCTAssertEqual(try context.execute(BatchDeleteRequest(objectIDs: [])).result as? Bool, true)

            // Objects of two entities in one delete are refused in words; nothing is deleted.
            let walk = try context.insertNewObject(forEntityName: "Walk")
            let cy = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).first)
            try context.save()
            XCTAssertThrowsError(try context.execute(BatchDeleteRequest(objectIDs: [cy.objectID, walk.objectID]))) { error in
                XCTAssertEqual("\(error)", "batch delete by object IDs: the IDs are of Dog and of Walk; one request deletes one entity's rows")
            }
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), 1)
        }
    }

    /// A handler that never returns true ends in an error naming the limit, not a hang; nothing is inserted. (The
    /// request's limit is lowered here; the constant is `maximumHandlerRows`.)
    func testAHandlerThatNeverEndsIsRefusedAtTheLimit() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            var calls = 0
            let insert = BatchInsertRequest(entityName: "Dog", dictionaryHandler: { row in
                calls += 1
                row["name"] = "dog \(calls)"
                return false
            })
            insert.handlerRowLimit = 50
            XCTAssertThrowsError(try context.execute(insert)) { error in
                XCTAssertEqual("\(error)", "batch insert into Dog: the dictionary handler gave 50 rows without returning true (nothing was inserted)")
            }
            XCTAssertEqual(calls, 51)
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), 0)
            // A handler's row with a key the entity does not have is refused, naming it.
            var once = false
            let bad = BatchInsertRequest(entityName: "Dog", dictionaryHandler: { row in
                if once { return true }
                once = true
                row["nmae"] = "Rex"
                return false
            })
            XCTAssertThrowsError(try context.execute(bad)) { error in
                XCTAssertTrue("\(error)".contains("has no attribute 'nmae'"), "\(error)")
            }
        }
    }

    /// Core Data's change dictionary: objects or IDs, arrays or sets, under the objects or the object-IDs keys.
    func testRemoteChangesFromCoreDataDictionaries() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try context.save()
            let changes = RemoteChanges([InsertedObjectIDsKey: [dog.objectID], UpdatedObjectsKey: Set([dog.objectID]), DeletedObjectsKey: [dog], "other": 3])
            XCTAssertEqual(changes.inserted, [dog.objectID])
            XCTAssertEqual(changes.updated, [dog.objectID])
            XCTAssertEqual(changes.deleted, [dog.objectID])
        }
    }
}
