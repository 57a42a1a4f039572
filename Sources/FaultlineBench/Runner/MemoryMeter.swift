import Faultline
import Foundation

/// What a run of a variant cost in memory (docs/results-format.md).
public struct MemoryMeasurement: Codable, Sendable, Equatable {
    /// Allocations (malloc, calloc, realloc) the run made on its thread, and their bytes; nil where nothing counts
    /// them.
    public var allocations: Int?
    public var bytesAllocated: Int?
    /// Bytes the run allocated on its thread and did not free (usable sizes; blocks it freed that were allocated
    /// before count against it): what the run kept. Nil where nothing counts them.
    public var liveBytes: Int?
    /// Bytes of emptied pages the engine kept for reuse at the end of the run beyond those it kept at its start,
    /// on the run's thread as allocations are counted (`SparePages`): free memory held for the next rows, counted
    /// out of `liveBytes` and shown beside it. Nil where allocations are not counted, and in older results.
    public var spareBytes: Int?
    /// The process's peak resident size during the run (its high-water mark, reset just before), when the system
    /// tells it.
    public var peakResidentBytes: Int?
}

/// Counts a thread's allocations: the `faultline` executable's malloc (the CMallocCounter target) provides one.
/// The engine's library does not define malloc itself, so that a program linking it (or package-benchmark's own
/// interposer in Benchmarks/) keeps its allocator.
public struct AllocationCounter: Sendable {
    /// Starts counting on the calling thread, from zero.
    public var start: @Sendable () -> Void
    /// Stops counting on the calling thread.
    public var stop: @Sendable () -> Void
    /// Allocations, bytes allocated, and usable bytes allocated minus freed, since `start`.
    public var read: @Sendable () -> (allocations: Int, bytes: Int, net: Int)

    public init(start: @escaping @Sendable () -> Void, stop: @escaping @Sendable () -> Void,
                read: @escaping @Sendable () -> (allocations: Int, bytes: Int, net: Int)) {
        self.start = start
        self.stop = stop
        self.read = read
    }
}

/// Measures a run's memory: allocations and frees counted by the allocation counter, when there is one, and the
/// resident high-water mark, reset before the run through /proc/self/clear_refs.
public enum MemoryMeter {
    public static func measure(counter: AllocationCounter?, _ body: () throws -> Void) rethrows -> MemoryMeasurement {
        let resetPeak = resetResidentPeak()
        let sparesBefore = SparePages.bytesChangedOnThisThread
        counter?.start()
        defer { counter?.stop() }
        try body()
        counter?.stop()
        let totals = counter?.read()
        let spares = SparePages.bytesChangedOnThisThread - sparesBefore
        return MemoryMeasurement(allocations: totals?.allocations, bytesAllocated: totals?.bytes, liveBytes: totals.map { $0.net - spares },
                                 spareBytes: totals == nil ? nil : spares, peakResidentBytes: resetPeak ? residentPeak() : nil)
    }

    /// Resets the process's resident high-water mark (Linux: "5" to /proc/self/clear_refs).
    static func resetResidentPeak() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// VmHWM from /proc/self/status, in bytes.
    static func residentPeak() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        return kilobytes.map { $0 * 1024 }
    }
}
