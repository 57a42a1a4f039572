import Foundation
import Synchronization

/// Memory the engine keeps for reuse rather than returning it to the allocator: emptied pages of the row cache and
/// of contexts' registries (docs/performance-notes.md).
///
/// Objects and row snapshots are freed when nothing holds them, as Core Data's are; the pages that indexed them by
/// primary key are kept, up to a bound per map (a coordinator's row cache: 1,024 pages of 64 rows, about 2.7 MB; a
/// context's registry: 512, about 0.3 MB), for the next rows: a query whose rows are scattered over a table takes a
/// page for nearly every row, and allocating and freeing them on every query cost more than the rows' objects. The
/// pages hold no values; a context's `reset()` and the owner's end free them.
public enum SparePages {
    /// Bytes of emptied pages kept for reuse, across the process (the allocator's usable sizes), beyond the one
    /// page each map keeps (as every map did before pages were pooled).
    public static var bytes: Int { total.load(ordering: .relaxed) }

    /// The change in `bytes` made on the calling thread since it started (pages kept minus pages taken back or
    /// freed there): what a per-thread allocation count sees of them.
    public static var bytesChangedOnThisThread: Int { threadCounter().pointee }

    static func add(_ bytes: Int) {
        total.add(bytes, ordering: .relaxed)
        threadCounter().pointee += bytes
    }

    @inline(__always) private static func threadCounter() -> UnsafeMutablePointer<Int> {
        if let counter = pthread_getspecific(threadKey) { return counter.assumingMemoryBound(to: Int.self) }
        let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        counter.initialize(to: 0)
        pthread_setspecific(threadKey, counter)
        return counter
    }
}

private let total = Atomic<Int>(0)

/// Each thread's counter, freed when the thread ends.
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { $0?.deallocate() }
    return key
}()
