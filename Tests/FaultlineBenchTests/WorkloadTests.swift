import Foundation
import XCTest
import Faultline
@testable import FaultlineBench

/// The speed check compares like with like only if both sides really read and write the same rows.
final class WorkloadTests: XCTestCase {
    func testEngineAndRawPeerWorkOnTheSameRows() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let count = 1_000
        let model = try RowWorkload.model()
        let engineStore = dir.appendingPathComponent("engine.sqlite")
        try RowWorkload.insert(count: count, into: engineStore, model: model)
        let rawStore = dir.appendingPathComponent("raw.sqlite")
        try RawSQLite.insertRows(path: rawStore.path, count: count)

        // Row i holds a_j = 10i + j, Z_PK = i + 1, Z_ENT = Z_OPT = 1: the raw reader sums every column.
        let values = (0..<count).reduce(Int64(0)) { sum, i in sum + (0..<10).reduce(Int64(0)) { $0 + Int64(i * 10 + $1) } }
        let keys = Int64(count * (count + 1) / 2)
        let expected = values + keys + 2 * Int64(count) + Int64(count)
        XCTAssertEqual(try RawSQLite.selectRows(path: rawStore.path), expected)
        XCTAssertEqual(try RawSQLite.selectRows(path: engineStore.path), expected, "the engine wrote the same rows")

        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: engineStore)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        // a0 + a9 of row i = 20i + 9.
        let fetched = (0..<count).reduce(Int64(0)) { $0 + Int64(20 * $1 + 9) }
        let first = try RowWorkload.fetchMaterializedObjects(context)
        XCTAssertEqual(first.sum, fetched)
        let statements = coordinator.statistics.statementsExecuted
        let second = try RowWorkload.fetchMaterializedObjects(context)
        XCTAssertEqual(second.sum, fetched)
        XCTAssertTrue(zip(first.objects, second.objects).allSatisfy { $0 === $1 }, "a second fetch reuses the registered objects the program holds")
        XCTAssertEqual(coordinator.statistics.statementsExecuted - statements, 1, "and issues one SELECT")
    }

    /// The point lookups fetch each row once, by primary key, one statement a lookup, whatever the table's size.
    func testPointLookupsFetchEveryRowOnceByPrimaryKey() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for rows in [500, 7_919 * 2] {
            let store = dir.appendingPathComponent("lookups-\(rows).sqlite")
            try PointLookupWorkload.generate(rows: rows, into: store)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try PointLookupWorkload.model())
            try coordinator.addPersistentStore(at: store)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            context.retainsRegisteredObjects = true // to count the objects the lookups fetched
            let statements = coordinator.statistics.statementsExecuted
            XCTAssertEqual(try PointLookupWorkload.lookups(context, count: rows, rows: rows), rows)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - statements, rows, "one SELECT a lookup")
            let (distinct, lengths) = context.performAndWait {
                let objects = context.registeredObjects
                return (Set(objects.map(\.objectID)).count, Set(objects.map { $0[Attribute<String>("t3")].count }))
            }
            XCTAssertEqual(distinct, rows, "every row once (\(rows) rows)")
            XCTAssertEqual(lengths, [12], "values of twelve characters")
        }
    }
}
