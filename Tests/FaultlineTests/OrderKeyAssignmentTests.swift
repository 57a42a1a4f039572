import XCTest
@testable import Faultline

/// Which order keys a change to an ordered relationship writes: nil keeps the stored key.
final class OrderKeyAssignmentTests: XCTestCase {
    func testNewMembersOfANewRelationshipAreNumberedAsCoreDataDoes() {
        XCTAssertEqual(OrderKeyAssignment.keys([nil, nil, nil]), [2048, 3072, 4096])
        XCTAssertEqual(OrderKeyAssignment.keys([]), [])
    }

    func testAppendedInsertedAndMovedMembersTakeKeysInTheGaps() {
        // Appended after the last.
        XCTAssertEqual(OrderKeyAssignment.keys([2048, 3072, nil, nil]), [nil, nil, 4096, 5120])
        // Put first: below the first, 1024 apart.
        XCTAssertEqual(OrderKeyAssignment.keys([nil, 2048, 3072]), [1024, nil, nil])
        // Between two: spread over the gap.
        XCTAssertEqual(OrderKeyAssignment.keys([2048, nil, nil, nil, 3072]), [nil, 2304, 2560, 2816, nil])
        // A member moved from the end to the front keeps the others' keys.
        XCTAssertEqual(OrderKeyAssignment.keys([5120, 2048, 3072, 4096]), [1024, nil, nil, nil])
        // Reversed: one member keeps its key, the rest are placed around it.
        let reversed = OrderKeyAssignment.keys([4096, 3072, 2048])
        XCTAssertEqual(reversed.filter { $0 == nil }.count, 1)
    }

    func testAFullGapRenumbersEveryMember() {
        // No integer between 2048 and 2049.
        XCTAssertEqual(OrderKeyAssignment.keys([2048, nil, 2049]), [2048, 3072, 4096])
        // Nothing above 0 below the first: keys at or below zero are not extended downwards.
        XCTAssertEqual(OrderKeyAssignment.keys([nil, 1]), [2048, 3072])
        XCTAssertEqual(OrderKeyAssignment.keys([nil, -5, 0]), [2048, 3072, 4096])
    }

    func testKeysAnyStoreCanHoldNeitherTrapNorOverflow() {
        // Near Int64.max, nothing fits after the last: renumbered.
        XCTAssertEqual(OrderKeyAssignment.keys([Int64.max - 10, nil]), [2048, 3072])
        // A gap wider than Int64 can hold (from Int64.min to Int64.max): renumbered, not overflowed.
        XCTAssertEqual(OrderKeyAssignment.keys([Int64.min, nil, Int64.max]), [2048, 3072, 4096])
        XCTAssertEqual(OrderKeyAssignment.keys([-4096, nil, 4096]), [nil, 0, nil])
        // Duplicated keys (a damaged or foreign store): only strictly increasing ones are kept.
        let duplicated = OrderKeyAssignment.keys([3072, 3072, 3072])
        XCTAssertEqual(duplicated.filter { $0 == nil }.count, 1)
        XCTAssertEqual(OrderKeyAssignment.longestIncreasing([5, nil, 1, 2, 9, 3, 4]), [false, false, true, true, false, true, true])
    }

    /// Whatever the stored keys, the keys after the change are strictly increasing in the new order.
    func testTheResultIsAlwaysInOrder() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...12, using: &random)
            let stored: [Int64?] = (0..<count).map { _ in
                Bool.random(using: &random) ? nil : [Int64.min, -1, 0, 1, 2, 1024, 2048, 3000, Int64.max, Int64.random(in: -5_000...5_000, using: &random)].randomElement(using: &random)!
            }
            let keys = OrderKeyAssignment.keys(stored)
            let final = zip(stored, keys).map { $1 ?? $0! }
            XCTAssertEqual(final, final.sorted(), "\(stored) → \(keys)")
            XCTAssertEqual(Set(final).count, final.count, "\(stored) → \(keys)")
        }
    }
}
