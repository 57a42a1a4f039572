import XCTest
@testable import Faultline

final class PagedMapTests: XCTestCase {
    func testModifyOrRemoveDecrementsAndRemovesInOneLookup() {
        let map = PagedMap<Int>()
        for key in 0..<130 { map[ObjectKey(table: 1, key: Int64(key))] = 2 }
        let last = ObjectKey(table: 1, key: 129)
        map.modifyOrRemove(last) { value in value -= 1; return value == 0 }
        XCTAssertEqual(map[last], 1)
        map.modifyOrRemove(last) { value in value -= 1; return value == 0 }
        XCTAssertNil(map[last])
        XCTAssertEqual(map.count, 129)
        // Absent keys are left alone; the emptied page (keys 128…191) is dropped with its last value.
        map.modifyOrRemove(ObjectKey(table: 2, key: 5)) { _ in XCTFail("absent"); return true }
        map.modifyOrRemove(ObjectKey(table: 1, key: 128)) { _ in true }
        XCTAssertEqual(map.count, 128)
        XCTAssertNil(map[ObjectKey(table: 1, key: 128)])
        map[ObjectKey(table: 1, key: 200)] = 7
        XCTAssertEqual(map[ObjectKey(table: 1, key: 200)], 7)
    }

    /// A value that counts how many of its kind are alive.
    private final class Counted {
        nonisolated(unsafe) static var alive = 0
        let n: Int
        init(_ n: Int) { self.n = n; Counted.alive += 1 }
        deinit { Counted.alive -= 1 }
    }

    func testEmptiedPagesAreKeptUpToTheLimitHoldingNoValuesAndCounted() {
        let limit = 200
        let threadBefore = SparePages.bytesChangedOnThisThread
        var map: PagedMap<Counted>? = PagedMap<Counted>(maxSpares: limit)
        let pages = limit + 300
        // One value a page, on scattered keys (a range query's rows), then all removed: the pages are emptied.
        let keys = (0..<pages).map { ObjectKey(table: 3, key: Int64($0 * PagedMap<Counted>.pageSize + $0 % 7)) }
        for round in 0..<3 {
            for (i, key) in keys.enumerated() { map![key] = Counted(i + round) }
            XCTAssertEqual(Counted.alive, pages)
            for (i, key) in keys.enumerated() { XCTAssertEqual(map![key]?.n, i + round) }
            // While the pages hold values, none is a spare.
            XCTAssertEqual(map!.spareCount, 0)
            for key in keys { map![key] = nil }
            XCTAssertEqual(Counted.alive, 0, "an emptied page kept for reuse holds no value")
            XCTAssertTrue(map!.isEmpty)
            XCTAssertEqual(map!.spareCount, limit, "at most maxSpares emptied pages are kept")
            // Counted at the allocator's sizes, and in the process's total (which other maps may add to).
            let kept = map!.spareBytes
            // All but the first, which every map keeps.
            XCTAssertGreaterThanOrEqual(kept, (limit - 1) * (PagedMap<Counted>.pageSize * MemoryLayout<Counted>.stride))
            XCTAssertLessThan(kept, (limit - 1) * (PagedMap<Counted>.pageSize * MemoryLayout<Counted>.stride + 128))
            XCTAssertGreaterThanOrEqual(SparePages.bytes, kept)
            XCTAssertEqual(SparePages.bytesChangedOnThisThread - threadBefore, kept)
        }
        // A reused page starts empty.
        XCTAssertNil(map![keys[0]])
        map![ObjectKey(table: 3, key: 1)] = Counted(1)
        XCTAssertNil(map![ObjectKey(table: 3, key: 0)])
        XCTAssertEqual(map!.count, 1)
        map!.removeAll()
        XCTAssertEqual(map!.spareCount, 0, "removeAll frees the spare pages too")
        XCTAssertEqual(map!.spareBytes, 0)
        XCTAssertEqual(SparePages.bytesChangedOnThisThread, threadBefore)
        map = nil
        XCTAssertEqual(Counted.alive, 0)
    }

    func testEachThreadSeesTheSparePagesItKept() {
        let before = SparePages.bytesChangedOnThisThread
        let done = expectation(description: "the other thread's map")
        DispatchQueue.global().async {
            let map = PagedMap<Int>(maxSpares: 8)
            let start = SparePages.bytesChangedOnThisThread
            for key in 0..<8 { map[ObjectKey(table: 1, key: Int64(key * PagedMap<Int>.pageSize))] = key }
            for key in 0..<8 { map[ObjectKey(table: 1, key: Int64(key * PagedMap<Int>.pageSize))] = nil }
            XCTAssertEqual(SparePages.bytesChangedOnThisThread - start, map.spareBytes)
            XCTAssertGreaterThan(map.spareBytes, 0)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(SparePages.bytesChangedOnThisThread, before, "another thread's pages are not this thread's")
    }

    func testAMapKeepsOneEmptiedPageByDefault() {
        let map = PagedMap<Int>()
        for key in 0..<10 { map[ObjectKey(table: 1, key: Int64(key * PagedMap<Int>.pageSize))] = key }
        for key in 0..<10 { map[ObjectKey(table: 1, key: Int64(key * PagedMap<Int>.pageSize))] = nil }
        XCTAssertEqual(map.spareCount, 1)
        XCTAssertEqual(map.spareBytes, 0, "the one page every map keeps is not counted")
    }

    func testObjectsComingAndGoingOneAtATimeKeepOneUncountedPage() {
        let map = PagedMap<Int>(maxSpares: 8)
        let before = SparePages.bytesChangedOnThisThread
        for key in stride(from: 0, to: 100 * PagedMap<Int>.pageSize, by: PagedMap<Int>.pageSize) {
            map[ObjectKey(table: 1, key: Int64(key))] = key
            map[ObjectKey(table: 1, key: Int64(key))] = nil
        }
        XCTAssertEqual(map.spareCount, 1)
        XCTAssertEqual(SparePages.bytesChangedOnThisThread, before)
    }

    func testTheInlinedReadsFlagMaskIsTheFlagsThatMakeAReadWork() {
        // `slot(at:)` is inlined into programs with the mask as a literal: it must stay these three flags.
        XCTAssertEqual(ManagedObject.Flags.accessWork, ManagedObject.Flags([.fault, .checksQueue, .watched]).rawValue)
    }

    func testBehavesAsAMapForAnyKeys() {
        let map = PagedMap<Int>()
        var reference: [ObjectKey: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        // Keys and tables on both sides of the indexed directory's bounds (keys below 2²³, tables below 1,024)
        // and of zero, which go through the hashed directory.
        let keys: [Int64] = [0, 1, -1, 127, 128, -128, -129, Int64.max, Int64.min, 1 << 40, (1 << 23) - 1, 1 << 23, (1 << 23) + 1]
            + (0..<2_000).map { _ in Int64.random(in: -5_000...50_000, using: &generator) }
        let tables: [Int32] = [0, 1, 2, 1_023, 1_024, -1, .max, .min]
        for (i, key) in keys.enumerated() {
            let objectKey = ObjectKey(table: tables[i % tables.count], key: key)
            map[objectKey] = i
            reference[objectKey] = i
        }
        XCTAssertEqual(map.count, reference.count)
        for (key, value) in reference { XCTAssertEqual(map[key], value) }
        XCTAssertNil(map[ObjectKey(table: 7, key: 1)])
        var visited: [ObjectKey: Int] = [:]
        map.forEachKeyed { key, value in visited[key] = value }
        XCTAssertEqual(visited, reference)
        XCTAssertEqual(map.values.sorted(), reference.values.sorted())
        for (n, key) in reference.keys.enumerated() where n % 2 == 0 {
            map[key] = nil
            reference[key] = nil
        }
        XCTAssertEqual(map.count, reference.count)
        for (key, value) in reference { XCTAssertEqual(map[key], value) }
        let updated = map.update(ObjectKey(table: 9, key: 5), default: { 40 }) { value -> Int in
            value += 2
            return value
        }
        XCTAssertEqual(updated, 42)
        XCTAssertTrue(map.modifyIfPresent(ObjectKey(table: 9, key: 5)) { $0 += 1 })
        XCTAssertEqual(map[ObjectKey(table: 9, key: 5)], 43)
        XCTAssertFalse(map.modifyIfPresent(ObjectKey(table: 9, key: 6)) { $0 += 1 })
        // One table's values go, the others stay.
        _ = map[ObjectKey(table: 1, key: 1)]  // leaves the lookup cache on table 1
        map.removeAll(table: 1)
        map.removeAll(table: .max)
        reference = reference.filter { $0.key.table != 1 && $0.key.table != .max }
        reference[ObjectKey(table: 9, key: 5)] = 43
        XCTAssertEqual(map.count, reference.count)
        for (key, value) in reference { XCTAssertEqual(map[key], value) }
        XCTAssertNil(map[ObjectKey(table: 1, key: 1)])
        map.removeAll()
        XCTAssertTrue(map.isEmpty)
        XCTAssertEqual(map.values, [])
    }
}
