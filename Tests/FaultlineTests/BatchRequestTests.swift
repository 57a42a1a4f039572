import Foundation
import XCTest
@testable import Faultline

/// Batch update, delete and insert on real stores, and merging their IDs into live contexts.
final class BatchRequestTests: XCTestCase {
    var dir: TemporaryDirectory!
    var coordinator: PersistentStoreCoordinator!
    var context: ManagedObjectContext!

    override func setUpWithError() throws {
        dir = TemporaryDirectory()
        (coordinator, context) = try makeStack(try makeTestModel(), in: dir)
    }

    // XCTest keeps each test case object until the run ends; without this, every test's folder would stay behind.
    override func tearDown() {
        context = nil
        coordinator = nil
        dir = nil
    }

    /// `count` walks of distance 1…count, each of the dogs Rex and Fido in turn; Ann owns Rex.
    func seed(walks count: Int) throws {
        try context.performAndWait {
            let ann = try context.insertNewObject(forEntityName: "Person")
            try ann.setValue("Ann", forKey: "name")
            var dogs: [ManagedObject] = []
            for name in ["Rex", "Fido"] {
                let dog = try context.insertNewObject(forEntityName: "Dog")
                try dog.setValue(name, forKey: "name")
                dogs.append(dog)
            }
            try dogs[0].setValue(ann, forKey: "owner")
            for i in 0..<count {
                let walk = try context.insertNewObject(forEntityName: "Walk")
                try walk.setValue(Double(i + 1), forKey: "distance")
                try walk.setValue(dogs[i % 2], forKey: "dog")
            }
            try context.save()
            context.reset()
        }
    }

    func fetch(_ entity: String, _ format: String? = nil, _ args: Any?...) throws -> [ManagedObject] {
        let request = FetchRequest<ManagedObject>(entityName: entity, predicate: try format.map { try ObjectPredicate(parsing: $0, argumentArray: args) })
        request.returnsObjectsAsFaults = false
        return try context.fetch(request)
    }

    func testBatchUpdateBypassesContextsUntilMerged() throws {
        try seed(walks: 100)
        try context.performAndWait {
            let materialized = try XCTUnwrap(try fetch("Walk", "distance == 3").first)
            let fault = context.object(with: try XCTUnwrap(try fetch("Walk", "distance == 4").first).objectID)
            context.refresh(fault, mergeChanges: false)
            let request = BatchUpdateRequest(entityName: "Walk", predicate: try ObjectPredicate(parsing: "distance <= 10"), propertiesToUpdate: ["distance": 0.5])
            request.resultType = .objectIDs
            let statements = coordinator.statistics.statementsExecuted
            let result = try context.execute(request)
            XCTAssertEqual(result.count, 10)
            XCTAssertEqual(Set(result.objectIDs.compactMap(\.primaryKey)).count, 10)
            XCTAssertLessThanOrEqual(coordinator.statistics.statementsExecuted - statements, 4, "BEGIN, SELECT, UPDATE, COMMIT: no object loaded")
            // Bypassed: the materialized object keeps its value; a fault fired now reads the store.
            XCTAssertEqual(materialized.value(forKey: "distance") as? Double, 3)
            XCTAssertEqual(fault.value(forKey: "distance") as? Double, 0.5)
            // Saving a stale change conflicts instead of overwriting the batch's value.
            try materialized.setValue(7.0, forKey: "distance")
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.conflicts? = error as? SaveError else { return XCTFail("\(error)") }
            }
            context.rollback()
            ManagedObjectContext.mergeChanges(fromRemoteSave: RemoteChanges(updated: result.objectIDs), into: [context])
            XCTAssertEqual(materialized.value(forKey: "distance") as? Double, 0.5, "merged")
            XCTAssertEqual(try fetch("Walk", "distance == 0.5").count, 10)
        }
        // Without IDs asked for: one UPDATE with the selection as a subquery; the count is still right, and faults
        // fired afterwards read the new values.
        try context.performAndWait {
            context.reset()
            let walk = try XCTUnwrap(try fetch("Walk", "distance == 50").first)
            let id = walk.objectID
            context.reset()
            let statements = coordinator.statistics.statementsExecuted
            let countOnly = BatchUpdateRequest(entityName: "Walk", predicate: try ObjectPredicate(parsing: "distance >= 50"), propertiesToUpdate: ["distance": 99.0])
            countOnly.resultType = .count
            XCTAssertEqual(try context.execute(countOnly).count, 51)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - statements, 3, "BEGIN, UPDATE, COMMIT")
            XCTAssertEqual(context.object(with: id).value(forKey: "distance") as? Double, 99)
        }
        XCTAssertThrowsError(try context.performAndWait { try context.execute(BatchUpdateRequest(entityName: "Walk", propertiesToUpdate: ["nope": 1])) }) {
            XCTAssertTrue("\($0)".contains("entity 'Walk' has no attribute 'nope'"), "\($0)")
        }
        XCTAssertThrowsError(try context.performAndWait { try context.execute(BatchUpdateRequest(entityName: "Walk", propertiesToUpdate: ["distance": "far"])) })
        XCTAssertThrowsError(try context.performAndWait { try context.execute(BatchUpdateRequest(entityName: "Person", propertiesToUpdate: ["name": Optional<String>.none])) }) {
            XCTAssertTrue("\($0)".contains("Person.name: required"), "\($0)")
        }
    }

    /// 10,000 rows deleted in SQL, then merged: no context shows a deleted object, relationships reload.
    func testBatchDeleteOfTenThousandRowsThenMergeLeavesNothingStale() throws {
        try seed(walks: 10_000)
        let observer = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let (rex, someWalks) = try observer.performAndWait { () throws -> (ManagedObject, [ManagedObject]) in
            let request = FetchRequest<ManagedObject>(entityName: "Dog", predicate: try ObjectPredicate(parsing: "name == 'Rex'"))
            request.returnsObjectsAsFaults = false
            let rex = try XCTUnwrap(try observer.fetch(request).first)
            XCTAssertEqual(rex.objects(forRelationship: "walks").count, 5_000)
            return (rex, Array(rex.objects(forRelationship: "walks").prefix(10)))
        }
        let result = try context.performAndWait { () throws -> BatchResult in
            let request = BatchDeleteRequest(entityName: "Walk", predicate: try ObjectPredicate(parsing: "distance > 10"))
            request.resultType = .objectIDs
            return try context.execute(request)
        }
        XCTAssertEqual(result.count, 9_990)
        ManagedObjectContext.mergeChanges(fromRemoteSave: RemoteChanges(deleted: result.objectIDs), into: [observer])
        try observer.performAndWait {
            XCTAssertEqual(rex.objects(forRelationship: "walks").count, 5, "the relationship reloads without the deleted walks")
            XCTAssertFalse(observer.registeredObjects.contains { $0.entity.name == "Walk" && ($0.value(forKey: "distance") as? Double ?? 0) > 10 })
            XCTAssertTrue(someWalks.filter { $0.managedObjectContext == nil }.allSatisfy(\.isFault))
            XCTAssertEqual(try observer.count(for: FetchRequest<ManagedObject>(entityName: "Walk")), 10)
        }
    }

    func testBatchDeleteAppliesDeleteRulesInSQL() throws {
        try seed(walks: 6)
        try context.performAndWait {
            // Person.dogs is Deny: Ann owns Rex, so nothing is deleted.
            XCTAssertThrowsError(try context.execute(BatchDeleteRequest(entityName: "Person"))) {
                XCTAssertTrue("\($0)".contains("Person.dogs has the Deny rule and 1 destination"), "\($0)")
            }
            XCTAssertEqual(try fetch("Person").count, 1)
            // Dog.walks cascades (the walks go too); Dog.owner nullifies nothing on Ann's side (to-many, no column).
            let request = BatchDeleteRequest(entityName: "Dog", predicate: try ObjectPredicate(parsing: "name == 'Fido'"))
            request.resultType = .objectIDs
            let result = try context.execute(request)
            XCTAssertEqual(result.count, 4, "Fido and his three walks")
            XCTAssertEqual(Set(result.objectIDs.map(\.entity.name)), ["Dog", "Walk"])
            XCTAssertEqual(try fetch("Walk").count, 3)
            // Walk.dog nullifies: deleting Rex's walks leaves Rex, whose walks are then empty.
            _ = try context.execute(BatchDeleteRequest(entityName: "Walk"))
            context.reset()
            XCTAssertEqual(try fetch("Dog").first?.objects(forRelationship: "walks").count, 0)
            // Deleting Rex: Person.dogs's inverse (Dog.owner) is stored on Rex's row; Ann stays, her dogs empty.
            _ = try context.execute(BatchDeleteRequest(entityName: "Dog"))
            context.reset()
            XCTAssertEqual(try fetch("Person").first?.objects(forRelationship: "dogs").count, 0)
        }
    }

    func testBatchInsertIsAllOrNothing() throws {
        try context.performAndWait {
            let request = BatchInsertRequest(entityName: "Person", objects: [["name": "A", "age": 3], ["name": "B"]])
            request.resultType = .objectIDs
            let result = try context.execute(request)
            XCTAssertEqual(result.count, 2)
            let people = try fetch("Person")
            XCTAssertEqual(people.compactMap { $0.value(forKey: "name") as? String }.sorted(), ["A", "B"])
            XCTAssertEqual(people.first { $0.value(forKey: "name") as? String == "B" }?.value(forKey: "age") as? Int16, 0, "the default")
            XCTAssertThrowsError(try context.execute(BatchInsertRequest(entityName: "Person", objects: [["name": "C"], ["age": 4]]))) {
                XCTAssertTrue("\($0)".contains("object 1: Person.name is required"), "\($0)")
            }
            XCTAssertThrowsError(try context.execute(BatchInsertRequest(entityName: "Person", objects: [["name": "D"], ["name": "A"]]))) {
                XCTAssertTrue("\($0)".contains("uniqueness constraint"), "\($0)")
            }
            XCTAssertThrowsError(try context.execute(BatchInsertRequest(entityName: "Person", objects: [["nick": "x"]])))
            XCTAssertEqual(try fetch("Person").count, 2, "nothing of the refused requests was written")
            // The keys came from Z_PRIMARYKEY: a later save's keys do not collide.
            let e = try context.insertNewObject(forEntityName: "Person")
            try e.setValue("E", forKey: "name")
            try context.save()
            XCTAssertEqual(try fetch("Person").count, 3)
        }
    }

    func testBatchRequestsAndMergesAreProbeEvents() throws {
        try seed(walks: 4)
        let recorder = InMemoryProbeRecorder()
        let traced = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel, probes: Probes(recorders: [recorder]))
        try traced.addPersistentStore(at: dir.file("store.sqlite"))
        let other = ManagedObjectContext(.privateQueue, coordinator: traced)
        let request = BatchUpdateRequest(entityName: "Walk", propertiesToUpdate: ["distance": 2.0])
        request.resultType = .objectIDs
        let result = try other.performAndWait { try other.execute(request) }
        ManagedObjectContext.mergeChanges(fromRemoteSave: RemoteChanges(updated: result.objectIDs), into: [other])
        let batch = recorder.events.compactMap { event -> BatchEvent? in if case .batch(let b) = event { return b }; return nil }
        XCTAssertEqual(batch.map(\.kind), ["update"])
        XCTAssertEqual(batch.first?.rows, 4)
        XCTAssertTrue(batch.first?.callSite?.description.hasPrefix("FaultlineTests/BatchRequestTests.swift:") == true)
        let merges = recorder.events.compactMap { event -> MergeEvent? in if case .merge(let m) = event { return m }; return nil }
        XCTAssertEqual(merges.map(\.updated), [4])
        XCTAssertTrue(recorder.events.contains { if case .statement(let s) = $0 { return s.purpose == .batch && s.sql.hasPrefix("UPDATE ZWALK") }; return false })
        // Every statement the batch ran (its key query included) is labelled as the batch's.
        let batchLines = recorder.events.compactMap { event -> StatementEvent? in if case .statement(let s) = event, s.sql.contains("ZWALK") { return s }; return nil }
        XCTAssertFalse(batchLines.isEmpty)
        XCTAssertTrue(batchLines.allSatisfy { $0.purpose == .batch }, "\(batchLines.map(\.purpose))")
    }
}
