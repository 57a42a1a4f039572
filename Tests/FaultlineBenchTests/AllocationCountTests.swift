import CMallocCounter
import Faultline
import FaultlineBench
import Foundation
import XCTest

/// Allocations per object, counted exactly (glibc's malloc, counted on the test's thread): what a fetched object
/// and an inserted one cost in heap blocks, beyond what SQLite itself allocates. Times stay in benchmarks; counts are
/// tests. The difference between two sizes cancels what a fetch or a save allocates once.
///
/// The counts are the optimized build's (a debug build allocates for its unspecialized generics and closure
/// contexts: about 15 blocks a fetched object): `make test-counts` runs these in a release build; `make test` skips
/// them with that message.
final class AllocationCountTests: XCTestCase {
    var dir: URL!
    let model = try! RowWorkload.model()

    override func setUpWithError() throws {
        #if DEBUG
        throw XCTSkip("allocation counts are the optimized build's: `make test-counts` runs these tests in a release build")
        #endif
        try XCTSkipUnless(fl_allocations_counted(), "malloc is not the counting one here (a sanitizer interposes it)")
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-allocations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    /// Allocations on this thread while `body` runs.
    func allocations(_ body: () throws -> Void) rethrows -> Int {
        fl_allocation_counting(true)
        defer { fl_allocation_counting(false) }
        try body()
        return Int(fl_allocation_read().allocations)
    }

    func testAFetchedObjectCostsOneAllocation() throws {
        let store = dir.appendingPathComponent("rows.sqlite")
        try withExtendedLifetime(RowWorkload.insert(count: 4_096, into: store, model: model)) {}
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: store)
        func fetch(_ count: Int) throws -> Int {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            let request = FetchRequest<ManagedObject>(entityName: "Row")
            request.returnsObjectsAsFaults = false
            request.fetchLimit = count
            return try context.performAndWait {
                var held: [ManagedObject] = []
                let counted = try allocations { held = try context.fetch(request) }
                XCTAssertEqual(held.count, count)
                return counted
            }
        }
        _ = try fetch(128) // the statement and the compiled request, once per coordinator
        let small = try fetch(1_024), large = try fetch(2_048)
        let perObject = Double(large - small) / 1_024
        // The object; its values are cut from a block of 128 rows that the row cache's snapshots share. The
        // blocks, the registry's and the row cache's pages (two blocks each per 128 rows) and the growth of the
        // result array are what is left: under 1/20 a row.
        XCTAssertEqual(Int(perObject), 1, "\(large - small) allocations for 1,024 more objects")
        XCTAssertLessThanOrEqual(perObject, 1.05, "\(large - small) allocations for 1,024 more objects")
    }

    func testAnInsertedObjectCostsOneAllocationBeyondSQLites() throws {
        func insert(_ count: Int) throws -> Int {
            let store = dir.appendingPathComponent("insert-\(count).sqlite")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
            try coordinator.addPersistentStore(at: store)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try RowWorkload.insert(count: 16, into: context) // the statements, once per coordinator
            return try context.performAndWait {
                let entity = context.model.entity(named: "Row")!
                return try allocations {
                    for i in 0..<count {
                        let row = ManagedObject(entity: entity, insertInto: context)
                        for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(i * 10 + j) }
                    }
                    try context.save()
                }
            }
        }
        // SQLite's own allocations for the same rows, inserted raw (one transaction, one prepared statement).
        func raw(_ count: Int) throws -> Int {
            let connection = try RawSQLite.emptyRowStore(path: dir.appendingPathComponent("raw-\(count).sqlite").path)
            return try allocations { try RawSQLite.insertRows(connection, count: count) }
        }
        let small = try insert(1_024), large = try insert(2_048)
        let sqlite = Double(try raw(2_048) - raw(1_024)) / 1_024
        let perObject = Double(large - small) / 1_024 - sqlite
        // Beyond SQLite's own (about two a row: its records and pages): the object. Its values are cut from the
        // context's block of 32 rows and written in place; the save shares them with the row cache.
        XCTAssertEqual(Int(perObject), 1, "\(large - small) allocations for 1,024 more objects, SQLite \(sqlite) a row")
        XCTAssertLessThanOrEqual(perObject, 1.1, "\(large - small) allocations for 1,024 more objects, SQLite \(sqlite) a row")
    }
}
