import Foundation

/// Monotonic timing of repeated runs.
public enum Stopwatch {
    /// Seconds `body` took, on the monotonic clock.
    public static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
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
