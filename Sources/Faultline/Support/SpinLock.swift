import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock for critical sections of a few instructions taken on every probe event: one compare-and-swap to take it,
/// one store to give it back (a mutex costs both a locked instruction and a call each way). A thread that finds it
/// taken spins briefly, then yields its processor, so a holder that was preempted gets to finish.
final class SpinLock: @unchecked Sendable {
    private let locked = Atomic<Bool>(false)

    init() {}

    @inline(__always) func lock() {
        if locked.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
        contendedLock()
    }

    @inline(__always) func unlock() {
        locked.store(false, ordering: .releasing)
    }

    @inline(never) private func contendedLock() {
        var spins = 0
        while true {
            if !locked.load(ordering: .relaxed),
               locked.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { return }
            spins += 1
            if spins >= 64 { sched_yield(); spins = 0 }
        }
    }
}
