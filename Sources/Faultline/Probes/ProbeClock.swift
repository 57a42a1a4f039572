import CProcessor
import Foundation
import Synchronization

/// The probes' clock: monotonic nanoseconds. A traced fetch reads it four times, so its cost counts: where the
/// kernel itself keeps time with the processor's time-stamp counter (Linux on x86-64 with the `tsc`
/// clocksource), the probes read the counter directly, at about a third of the cost of `clock_gettime`, scaled
/// to nanoseconds by a calibration against `CLOCK_MONOTONIC` over its first 10 ms of use. Until then, elsewhere,
/// and with `FAULTLINE_PROBE_CLOCK=monotonic`, it is `clock_gettime(CLOCK_MONOTONIC)`.
enum ProbeClock {
    @inline(__always) static func now() -> UInt64 {
        guard cycleClockReady.load(ordering: .acquiring) else { return CycleCalibration.shared.calibrating() }
        let cycle = faultline_cycle_counter()
        // A counter read on another core may be a little behind the anchor: it counts as the anchor's time.
        let elapsed = cycle > cycleClock.anchorCycles ? cycle &- cycleClock.anchorCycles : 0
        return cycleClock.anchorNanoseconds &+ UInt64(Double(elapsed) * cycleClock.nanosecondsPerCycle)
    }

    /// Seconds from `start` to `end`.
    @inline(__always) static func seconds(_ start: UInt64, _ end: UInt64) -> Double { Double(end &- start) / 1e9 }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    static func monotonic() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// The cycle counter's scale to nanoseconds and its anchor: set once, by the calibration, before
/// `cycleClockReady`; never changed afterwards. Globals with constant initial values, so that reading them costs no
/// lazy-initialization check.
private struct CycleClock {
    var anchorNanoseconds: UInt64 = 0
    var anchorCycles: UInt64 = 0
    var nanosecondsPerCycle = 0.0
}
nonisolated(unsafe) private var cycleClock = CycleClock()
private let cycleClockReady = Atomic<Bool>(false)

/// Measures the cycle counter's scale, once per process.
private final class CycleCalibration: @unchecked Sendable {
    static let shared = CycleCalibration()
    static let span: UInt64 = 10_000_000

    /// False where the counter is not to be used: calibration never starts.
    private let usable: Bool
    /// Guards the first reading, taken at the first use.
    private let lock = PlainLock()
    private var startNanoseconds: UInt64 = 0
    private var startCycles: UInt64 = 0
    /// Set when the measured scale is implausible: the clock stays `CLOCK_MONOTONIC`.
    private var abandoned = false

    private init() {
        usable = FAULTLINE_HAS_CYCLE_COUNTER == 1 && Self.kernelUsesCycleCounter()
            && ProcessInfo.processInfo.environment["FAULTLINE_PROBE_CLOCK"] != "monotonic"
    }

    /// `CLOCK_MONOTONIC`, taking calibration readings on the way: the first, then, 10 ms later, the second, which
    /// fixes the scale and becomes the anchor (so the clock does not jump when it switches to the counter).
    func calibrating() -> UInt64 {
        let now = ProbeClock.monotonic()
        guard usable else { return now }
        let cycles = faultline_cycle_counter()
        lock.lock()
        defer { lock.unlock() }
        if cycleClockReady.load(ordering: .relaxed) || abandoned { return now }
        if startNanoseconds == 0 {
            startNanoseconds = now
            startCycles = cycles
        } else if now &- startNanoseconds >= Self.span && cycles > startCycles {
            let scale = Double(now &- startNanoseconds) / Double(cycles &- startCycles)
            // A counter between 100 MHz and 20 GHz; anything else means it cannot be trusted here.
            guard scale > 0.05 && scale < 10 else { abandoned = true; return now }
            cycleClock = CycleClock(anchorNanoseconds: now, anchorCycles: cycles, nanosecondsPerCycle: scale)
            cycleClockReady.store(true, ordering: .releasing)
        }
        return now
    }

    /// True when the kernel's own clocksource is the time-stamp counter (it checked that the counter is invariant
    /// and synchronized across processors).
    private static func kernelUsesCycleCounter() -> Bool {
        #if os(Linux)
        let path = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
        return text.trimmingCharacters(in: .whitespacesAndNewlines) == "tsc"
        #else
        return false
        #endif
    }
}
