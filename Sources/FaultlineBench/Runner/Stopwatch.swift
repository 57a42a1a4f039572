import Foundation

/// Monotonic timing of repeated runs.
public enum Stopwatch {
    /// Seconds `body` took, on the monotonic clock.
    public static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Seconds `body` took on the monotonic clock, and the processor seconds the whole process used meanwhile
    /// (every thread's, so a trace writer's work is counted too).
    public static func measure(_ body: () throws -> Void) rethrows -> (seconds: Double, processorSeconds: Double) {
        let cpu = processorSeconds()
        let seconds = try time(body)
        return (seconds, processorSeconds() - cpu)
    }

    /// The process's processor time so far, user and system, in seconds.
    static func processorSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The median of `repetitions` timed runs, each preceded by `setUp` (untimed).
    public static func median(repetitions: Int, setUp: () throws -> Void = {}, _ body: () throws -> Void) rethrows -> Double {
        var samples: [Double] = []
        for _ in 0..<max(1, repetitions) {
            try setUp()
            samples.append(try time(body))
        }
        samples.sort()
        return samples[samples.count / 2]
    }
}
