import Foundation
import XCTest
@testable import Faultline

/// Core Data's batched fetch (`fetchBatchSize`): the rows' IDs up front, a batch's objects fetched when one of them
/// is read. Counts are exact: statements and objects.
final class BatchedResultsTests: XCTestCase {
    private let rows = 100

    private func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [
                AttributeDescription(name: "number", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                AttributeDescription(name: "title", type: .string),
            ]),
            EntityDescription(name: "Memo", parent: "Note", properties: [AttributeDescription(name: "urgent", type: .boolean)]),
        ])
    }

    /// A store of `rows` notes (every tenth a Memo), and a context on it whose probes record in memory.
    private func stack(_ dir: TemporaryDirectory) throws -> (ManagedObjectContext, InMemoryProbeRecorder) {
        let recorder = InMemoryProbeRecorder()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model(),
                                                     probes: Probes(configuration: ProbeConfiguration(), recorders: [recorder]))
        try coordinator.addPersistentStore(at: dir.file("Notes.sqlite"))
        let setup = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try setup.performAndWait {
            for number in 0..<rows {
                let note = try setup.insertNewObject(forEntityName: number % 10 == 9 ? "Memo" : "Note")
                try note.setValue(Int64(number), forKey: "number")
                try note.setValue("note \(number)", forKey: "title")
            }
            try setup.save()
        }
        recorder.removeAll()
        return (ManagedObjectContext(.privateQueue, coordinator: coordinator), recorder)
    }

    private func request(batch: Int = 20) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Note", sortDescriptors: [FetchSortDescriptor(key: "number", ascending: true)])
        request.fetchBatchSize = batch
        return request
    }

    private func statements(_ recorder: InMemoryProbeRecorder) -> Int {
        recorder.events.reduce(0) { count, event in if case .statement = event { return count + 1 }; return count }
    }

    /// Core Data's documentation of `fetchBatchSize`: the fetch returns all the objects' IDs, and an object's data is
    /// fetched with its batch when the object is read. One statement for the fetch, none for an object ID, one for
    /// each batch read; no object is registered before its batch is read.
    func testABatchedFetchReadsOnlyTheBatchesThatAreRead() throws {
        let dir = TemporaryDirectory()
        let (context, recorder) = try stack(dir)
        try context.performAndWait {
            let results: FetchedResults<ManagedObject> = try context.fetch(request())
            XCTAssertEqual(results.count, rows)
            XCTAssertEqual(results.batchSize, 20)
            XCTAssertEqual(statements(recorder), 1, "the keys, in one statement")
            XCTAssertEqual(context.registeredObjects.count, 0, "no object before its batch is read")
            XCTAssertEqual(results.objectID(at: 42).primaryKey, 43)
            XCTAssertEqual(statements(recorder), 1, "an object ID needs no statement")

            let first = results[0]
            XCTAssertFalse(first.isFault, "a batch's objects come with their values")
            XCTAssertEqual(first.value(forKey: "number") as? Int64, 0)
            XCTAssertEqual(statements(recorder), 2, "one statement for the batch")
            XCTAssertEqual(context.registeredObjects.count, 20)
            XCTAssertEqual((1..<20).map { results[$0].value(forKey: "number") as? Int64 }, (1..<20).map { Int64($0) })
            XCTAssertEqual(statements(recorder), 2, "the rest of the batch is there")

            XCTAssertEqual(results[45].value(forKey: "number") as? Int64, 45)
            XCTAssertEqual(statements(recorder), 3)
            XCTAssertEqual(results.materializedBatchCount, 2)
            XCTAssertTrue(results[0] === first, "the same object while it is held")
        }
    }

    /// The results keep `Limits.batchedResultsBatches` batches: reading on lets the oldest go, and reading it again
    /// fetches it again — objects the program still holds come back as the same objects (uniquing).
    func testTheResultsKeepABoundedNumberOfBatches() throws {
        let dir = TemporaryDirectory()
        let (context, recorder) = try stack(dir)
        try context.performAndWait {
            let results: FetchedResults<ManagedObject> = try context.fetch(request(batch: 10))
            let held = results[0]
            var sum: Int64 = 0
            for object in results { sum += object.value(forKey: "number") as? Int64 ?? 0 }
            XCTAssertEqual(sum, Int64(rows * (rows - 1) / 2))
            XCTAssertEqual(statements(recorder), 1 + rows / 10, "one statement per batch")
            XCTAssertEqual(results.materializedBatchCount, Limits.batchedResultsBatches)
            XCTAssertLessThanOrEqual(context.registeredObjects.count, Limits.batchedResultsBatches * 10 + 1,
                                     "objects of batches let go of leave the context (one is held here)")
            XCTAssertTrue(results[0] === held, "fetched again, the object the program holds is the one returned")
            XCTAssertEqual(statements(recorder), 2 + rows / 10)
        }
    }

    /// Rows of sub-entities come back as objects of their entity, in the fetch's order.
    func testSubentityRowsKeepTheirEntity() throws {
        let dir = TemporaryDirectory()
        let (context, _) = try stack(dir)
        try context.performAndWait {
            let results: FetchedResults<ManagedObject> = try context.fetch(request(batch: 7))
            XCTAssertEqual(results.map(\.entity.name), (0..<rows).map { $0 % 10 == 9 ? "Memo" : "Note" })
            XCTAssertEqual(results.objectID(at: 9).entity.name, "Memo")
            XCTAssertEqual(results.map { $0.value(forKey: "number") as? Int64 }, (0..<rows).map { Int64($0) })
        }
    }

    /// With pending changes of the fetched entity the results hold the objects (the fetch merges the unsaved changes
    /// in memory, as the `[T]` form does); objects deleted in the context are left out either way.
    func testPendingChangesAreIncluded() throws {
        let dir = TemporaryDirectory()
        let (context, _) = try stack(dir)
        try context.performAndWait {
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
            let doomed = try XCTUnwrap(all.first { $0.value(forKey: "number") as? Int64 == 3 })
            context.delete(doomed)
            let lazy: FetchedResults<ManagedObject> = try context.fetch(request())
            XCTAssertEqual(lazy.batchSize, 20, "a delete only leaves a row out")
            XCTAssertEqual(lazy.count, rows - 1)
            XCTAssertFalse(lazy.contains { $0 === doomed })

            let added = try context.insertNewObject(forEntityName: "Note")
            try added.setValue(Int64(-1), forKey: "number")
            let merged: FetchedResults<ManagedObject> = try context.fetch(request())
            XCTAssertEqual(merged.batchSize, 0, "pending inserts: the objects, merged in order")
            XCTAssertEqual(merged.count, rows)
            XCTAssertTrue(merged[0] === added)
        }
    }

    /// The `[T]` form stays Core Data's `fetch(_:) -> [T]`: code written for Core Data compiles unchanged.
    func testTheArrayFormIsStillTheDefault() throws {
        let dir = TemporaryDirectory()
        let (context, _) = try stack(dir)
        try context.performAndWait {
            let inferred = try context.fetch(request())
            let array: [ManagedObject] = inferred
            XCTAssertEqual(array.count, rows)
            let empty: FetchedResults<ManagedObject> = []
            XCTAssertTrue(empty.isEmpty)
        }
    }
}
