@testable import Faultline
import Foundation
import XCTest

final class SpinLockTests: XCTestCase {
    /// Four threads each add 100,000 under the lock: no increment is lost.
    func testIncrementsUnderContentionAreNotLost() {
        final class Counter: @unchecked Sendable {
            let lock = SpinLock()
            var value = 0
        }
        let counter = Counter()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<100_000 {
                counter.lock.lock()
                counter.value += 1
                counter.lock.unlock()
            }
        }
        XCTAssertEqual(counter.value, 400_000)
    }
}
