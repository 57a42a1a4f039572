@testable import Faultline
import Foundation
import XCTest

final class ProbeClockTests: XCTestCase {
    /// The probes' clock never goes back and, once it reads the cycle counter (after its 10 ms calibration),
    /// runs at CLOCK_MONOTONIC's rate: durations stay comparable with it. The rate is compared over 200 ms, with room
    /// for a calibration disturbed by a millisecond's preemption (a slow or loaded machine, a sanitizer); a counter
    /// read unscaled or scaled wrongly is off by far more.
    func testClockIsMonotonicAndRunsAtTheMonotonicClocksRate() {
        var previous = ProbeClock.now()
        let deadline = ProbeClock.monotonic() + 30_000_000
        while ProbeClock.monotonic() < deadline {
            let now = ProbeClock.now()
            XCTAssertGreaterThanOrEqual(now, previous)
            previous = now
        }
        let (probeStart, monotonicStart) = (ProbeClock.now(), ProbeClock.monotonic())
        usleep(200_000)
        let (probeEnd, monotonicEnd) = (ProbeClock.now(), ProbeClock.monotonic())
        XCTAssertGreaterThanOrEqual(probeEnd, probeStart)
        let rate = Double(probeEnd - probeStart) / Double(monotonicEnd - monotonicStart)
        XCTAssertTrue((0.8...1.25).contains(rate), "the probe clock ran at \(rate)× CLOCK_MONOTONIC")
    }
}
