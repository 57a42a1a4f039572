import Foundation

/// The phases of a read workload, timed apart within one run: getting rows into the program's objects or records
/// (`fetch`), reading every value (`use`), and letting them go (`release`).
public enum BenchPhase: String, Codable, Sendable, CaseIterable {
    case fetch, use, release

    var index: Int {
        switch self {
        case .fetch: 0
        case .use: 1
        case .release: 2
        }
    }
}

/// Times the phases of one run: each `lap` adds the time since the previous lap (or `start`) to a phase, so a
/// loop of many small fetches sums its phases. The runner starts it before each timed run; `Benchmarks/` reads it
/// the same way, so both tools time the same phases.
public final class PhaseClock {
    private var last: UInt64 = 0
    private var totals: (Double, Double, Double) = (0, 0, 0)
    /// True once a lap was recorded since `start`.
    public private(set) var recorded = false

    public init() {}

    /// Starts a run: every phase at zero.
    public func start() {
        totals = (0, 0, 0)
        recorded = false
        last = DispatchTime.now().uptimeNanoseconds
    }

    /// Adds the time since the previous lap to `phase`.
    @inline(__always) public func lap(_ phase: BenchPhase) {
        let now = DispatchTime.now().uptimeNanoseconds
        let seconds = Double(now &- last) / 1e9
        last = now
        recorded = true
        switch phase {
        case .fetch: totals.0 += seconds
        case .use: totals.1 += seconds
        case .release: totals.2 += seconds
        }
    }

    /// Seconds spent in `phase` since `start`.
    public func seconds(_ phase: BenchPhase) -> Double {
        switch phase {
        case .fetch: totals.0
        case .use: totals.1
        case .release: totals.2
        }
    }

    /// Lets go of `value` here, and not earlier: the caller's variable stays alive until this call (an `inout`
    /// argument), and the release happens inside it, so it is timed by the lap that follows.
    @inline(never) public static func release<T>(_ value: inout T?) {
        value = nil
    }
}
