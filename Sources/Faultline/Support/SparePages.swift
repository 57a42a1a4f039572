import Synchronization

/// Memory the engine keeps for reuse rather than returning it to the allocator: emptied pages of the row cache and
/// of contexts' registries (docs/performance-notes.md).
///
/// Objects and row snapshots are freed when nothing holds them, as Core Data's are; the pages that indexed them by
/// primary key are kept, up to a bound per map (`PersistentStoreCoordinator`'s row cache: 1,024 pages of 64 rows;
/// a context's registry: 512), for the next rows: a query whose rows are scattered over a table takes a page for
/// nearly every row, and allocating and freeing them on every query cost more than the rows' objects. The pages
/// hold no values; a context's `reset()` and the owner's end free them.
public enum SparePages {
    /// Bytes of emptied pages kept for reuse, across the process (the allocator's usable sizes).
    public static var bytes: Int { total.load(ordering: .relaxed) }

    static func add(_ bytes: Int) { total.add(bytes, ordering: .relaxed) }
}

private let total = Atomic<Int>(0)
