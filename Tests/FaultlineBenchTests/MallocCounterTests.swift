import CMallocCounter
import Foundation
import XCTest

/// The allocation counter behind `faultline bench`'s memory figures counts every allocator glibc offers: Swift's
/// `UnsafeMutablePointer.allocate` calls `memalign`, which does not go through `malloc`.
final class MallocCounterTests: XCTestCase {
    func testAlignedAllocationsAreCountedAndTheirFreesBalance() throws {
        try XCTSkipUnless(fl_allocations_counted(), "malloc is not the counting one here (a sanitizer interposes it)")
        fl_allocation_counting(true)
        let pointer = UnsafeMutablePointer<Int64>.allocate(capacity: 1_000)
        var raw: UnsafeMutableRawPointer?
        let status = posix_memalign(&raw, 64, 4_096)
        let aligned = aligned_alloc(32, 1_024)
        let afterAllocating = fl_allocation_read()
        pointer.deallocate()
        free(raw)
        free(aligned)
        let afterFreeing = fl_allocation_read()
        fl_allocation_counting(false)
        XCTAssertEqual(status, 0)
        XCTAssertEqual(afterAllocating.allocations, 3)
        XCTAssertGreaterThanOrEqual(afterAllocating.bytes, 8_000 + 4_096 + 1_024)
        XCTAssertGreaterThanOrEqual(afterAllocating.net, 8_000 + 4_096 + 1_024)
        XCTAssertEqual(afterFreeing.net, 0, "each free takes back what its allocation counted")
        XCTAssertEqual(Int(bitPattern: raw) % 64, 0)
        XCTAssertEqual(Int(bitPattern: aligned) % 32, 0)
    }

    func testPosixMemalignRefusesABadAlignment() throws {
        try XCTSkipUnless(fl_allocations_counted(), "malloc is not the counting one here (a sanitizer interposes it)")
        var raw: UnsafeMutableRawPointer?
        XCTAssertEqual(posix_memalign(&raw, 24, 64), EINVAL)
        XCTAssertNil(raw)
    }
}
