#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-recursive mutex with nothing on its fast path but the lock itself. (On Linux, `Synchronization.Mutex`
/// asks the kernel for the thread ID on every lock.) The mutex has a cache line of its own, so that another thread
/// working on neighbouring memory does not slow every lock down. For the few instructions of a probe event's
/// queueing, `SpinLock` costs less.
final class PlainLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        let line = 128
        mutex = UnsafeMutableRawPointer.allocate(byteCount: max(line, MemoryLayout<pthread_mutex_t>.stride), alignment: line)
            .bindMemory(to: pthread_mutex_t.self, capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    @inline(__always) func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) func unlock() { pthread_mutex_unlock(mutex) }
}
