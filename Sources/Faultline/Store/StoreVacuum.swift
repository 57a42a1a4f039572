import Foundation

/// Giving the space of deleted rows back to the file system. Deleting rows leaves free pages inside the store file,
/// which SQLite reuses but does not return (Apple's guide, "SQLite File Size and Record Deletion"); Core Data's and
/// Faultline's stores are created with incremental auto-vacuum, which returns them only when asked.
public enum StoreVacuum: Sendable, Equatable {
    /// `PRAGMA incremental_vacuum(pages)`: moves up to `pages` free pages (every one when nil) to the end of the file
    /// and truncates it. Quick, done in place; needs a store whose auto-vacuum mode is incremental.
    case incremental(pages: Int? = nil)
    /// `VACUUM`: rebuilds the whole file, packed (it needs as much temporary space as the store, and holds the
    /// coordinator meanwhile). Works whatever the auto-vacuum mode.
    case full
}

/// What a vacuum did: the store file's pages before and after (the write-ahead log checkpointed into the file
/// first, so that these are the file's size), and the free pages left.
public struct StoreVacuumResult: Sendable, Equatable {
    /// The store's page size in bytes.
    public var pageSize: Int
    /// Pages in the file before the vacuum.
    public var pagesBefore: Int
    /// Free pages (deleted rows' space) in the file before the vacuum.
    public var freePagesBefore: Int
    /// Pages in the file after the vacuum.
    public var pagesAfter: Int
    /// Free pages left in the file after the vacuum.
    public var freePagesAfter: Int
    /// Bytes the file gave back.
    public var bytesFreed: Int { (pagesBefore - pagesAfter) * pageSize }
}

extension PersistentStoreCoordinator {
    /// Returns the free pages of the store file to the file system (`StoreVacuum`), checkpointing the write-ahead
    /// log before and after so that the file's size is what it reports. Refused for a read-only store, and
    /// `.incremental` for a store whose auto-vacuum mode is not incremental (it would free nothing: use `.full`).
    @discardableResult
    public func vacuum(_ kind: StoreVacuum) throws -> StoreVacuumResult {
        try withLock {
            let store = try requireStore()
            guard !store.isReadOnly else { throw StoreError.invalidConfiguration("the store is open read-only: it cannot be vacuumed") }
            store.purpose(.other)
            let pragma = { (name: String) throws -> Int in
                let statement = try store.statement("PRAGMA \(name)")
                defer { statement.reset() }
                _ = try store.wrap { try statement.step() }
                return Int(statement.int64(at: 0))
            }
            if !store.isInMemory { try store.wrap { try store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") } }
            let pageSize = try pragma("page_size"), before = try pragma("page_count"), freeBefore = try pragma("freelist_count")
            switch kind {
            case .incremental(let pages):
                let mode = try pragma("auto_vacuum")
                guard mode == 2 else {
                    throw StoreError.invalidConfiguration("the store's auto_vacuum mode is \(mode == 1 ? "FULL" : "NONE"), not INCREMENTAL: an incremental vacuum would free nothing (use a full vacuum)")
                }
                if let pages, pages < 0 { throw StoreError.invalidConfiguration("an incremental vacuum frees 0 or more pages (got \(pages))") }
                // incremental_vacuum(N) frees N pages (every one for 0): it steps once per page freed.
                if pages != 0 {
                    let statement = try store.statement("PRAGMA incremental_vacuum(\(pages ?? 0))")
                    defer { statement.reset() }
                    while try store.wrap({ try statement.step() }) {}
                }
            case .full:
                try store.wrap { try store.connection.execute("VACUUM") }
            }
            if !store.isInMemory { try store.wrap { try store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") } }
            return StoreVacuumResult(pageSize: pageSize, pagesBefore: before, freePagesBefore: freeBefore,
                                     pagesAfter: try pragma("page_count"), freePagesAfter: try pragma("freelist_count"))
        }
    }
}
