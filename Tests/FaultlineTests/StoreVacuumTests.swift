import Foundation
import XCTest
@testable import Faultline

/// Giving deleted rows' space back: the file shrinks by exactly the pages each vacuum reports.
final class StoreVacuumTests: XCTestCase {
    private func kennelWithHoles(_ dir: TemporaryDirectory, name: String = "kennel.sqlite", pragmas: [StorePragma] = []) throws -> (PersistentStoreCoordinator, URL) {
        let url = dir.file(name)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
        try coordinator.addPersistentStore(type: .sqlite, at: url, pragmas: pragmas)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            for i in 0..<2_000 { try context.insertNewObject(forEntityName: "Dog").setValue(String(repeating: "dog \(i) ", count: 20), forKey: "name") }
            try context.save()
            for dog in try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).prefix(1_500) { context.delete(dog) }
            try context.save()
        }
        return (coordinator, url)
    }

    private func fileSize(_ url: URL) throws -> Int {
        try XCTUnwrap((FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue)
    }

    func testIncrementalThenFullVacuumShrinkTheFileByWhatTheyReport() throws {
        let dir = TemporaryDirectory()
        let (coordinator, url) = try kennelWithHoles(dir)
        let some = try coordinator.vacuum(.incremental(pages: 10))
        XCTAssertGreaterThan(some.freePagesBefore, 10, "deleting rows left free pages")
        XCTAssertEqual(some.pagesAfter, some.pagesBefore - 10)
        XCTAssertEqual(some.freePagesAfter, some.freePagesBefore - 10)
        XCTAssertEqual(try fileSize(url), some.pagesAfter * some.pageSize, "the checkpointed file is the size reported")
        let rest = try coordinator.vacuum(.incremental())
        XCTAssertEqual(rest.freePagesAfter, 0)
        XCTAssertEqual(rest.bytesFreed, some.freePagesAfter * some.pageSize)
        XCTAssertEqual(try fileSize(url), rest.pagesAfter * rest.pageSize)
        let full = try coordinator.vacuum(.full)
        XCTAssertLessThanOrEqual(full.pagesAfter, full.pagesBefore)
        XCTAssertEqual(try fileSize(url), full.pagesAfter * full.pageSize)
        // The rows left are all there.
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")) }, 500)
    }

    func testAStoreWithoutIncrementalAutoVacuumOrReadOnlyIsRefusedAndUnchanged() throws {
        let dir = TemporaryDirectory()
        let (coordinator, url) = try kennelWithHoles(dir, pragmas: [try StorePragma("auto_vacuum", "0")])
        XCTAssertThrowsError(try coordinator.vacuum(.incremental())) { error in
            XCTAssertTrue("\(error)".contains("auto_vacuum mode is NONE"), "\(error)")
        }
        let full = try coordinator.vacuum(.full)
        XCTAssertEqual(full.freePagesAfter, 0, "a full vacuum works whatever the mode")
        XCTAssertGreaterThan(full.bytesFreed, 0)
        XCTAssertEqual(try fileSize(url), full.pagesAfter * full.pageSize)
        XCTAssertThrowsError(try coordinator.vacuum(.incremental(pages: -1)))

        let readOnly = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
        try readOnly.addPersistentStore(at: url, options: .readOnly)
        let size = try fileSize(url)
        XCTAssertThrowsError(try readOnly.vacuum(.full)) { XCTAssertTrue("\($0)".contains("read-only"), "\($0)") }
        XCTAssertEqual(try fileSize(url), size)
    }
}
