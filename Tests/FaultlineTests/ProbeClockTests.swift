@testable import Faultline
import Foundation
import XCTest

final class ProbeClockTests: XCTestCase {
    /// The probes' clock never goes back and, once it reads the cycle counter (after its 10 ms calibration),
    /// keeps to CLOCK_MONOTONIC: durations and event times stay comparable with it.
    func testClockIsMonotonicAndKeepsToTheMonotonicClock() {
        var previous = ProbeClock.now()
        let deadline = ProbeClock.monotonic() + 30_000_000
        while ProbeClock.monotonic() < deadline {
            let now = ProbeClock.now()
            XCTAssertGreaterThanOrEqual(now, previous)
            previous = now
        }
        for _ in 0..<5 {
            let before = ProbeClock.monotonic()
            let probe = ProbeClock.now()
            let after = ProbeClock.monotonic()
            // Within 0.5 ms of CLOCK_MONOTONIC read around it (the calibration error over 30 ms is far smaller).
            XCTAssertGreaterThanOrEqual(probe + 500_000, before)
            XCTAssertLessThanOrEqual(probe, after + 500_000)
            usleep(2_000)
        }
    }
}
