import CSQLite
import Foundation
import Synchronization

/// Reader connections beside a store's own (Core Data's connection pool): a fetch that finds the coordinator busy —
/// another context fetching, a save writing — reads on one of these instead of waiting, and takes the coordinator
/// only to hand its rows over. In WAL mode readers never wait for the writer, and each statement reads one
/// committed state of the store (a read transaction of its own).
///
/// Made only for a store file in WAL mode; connections are opened on first need, up to `maximum`, and kept.
final class ReaderPool: @unchecked Sendable {
    /// A connection checked out, with the store it reads (its plans are fixed once it is open; they are read
    /// without the coordinator).
    struct Reader {
        let connection: SQLiteConnection
        let store: SQLiteStore
        fileprivate let generation: Int
    }

    let maximum: Int
    /// Guards everything below (a connection is used by one thread at a time: the one that checked it out).
    private let lock = NSLock()
    /// The store read now; nil once it was removed from its coordinator (no reader is handed out then).
    private var store: SQLiteStore?
    /// Bumped when the store changes (`retarget`): a connection checked out before is closed when checked in.
    private var generation = 0
    private var idle: [SQLiteConnection] = []
    private var openedCount = 0
    /// Reads done on a pooled connection (for `PersistentStoreCoordinator.Statistics`).
    let reads = Atomic<Int>(0)
    /// Called as a pooled read starts (tests meet two readers here to prove they overlap).
    nonisolated(unsafe) var readWillBegin: (() -> Void)?

    init(store: SQLiteStore, maximum: Int) {
        self.store = store
        self.maximum = maximum
    }

    /// An idle connection, a new one while fewer than `maximum` are open, or nil (the caller waits its turn
    /// instead). A connection that cannot be opened counts as none.
    func checkout() -> Reader? {
        lock.lock()
        guard let store else {
            lock.unlock()
            return nil
        }
        let generation = generation
        if let connection = idle.popLast() {
            lock.unlock()
            return Reader(connection: connection, store: store, generation: generation)
        }
        guard openedCount < maximum else {
            lock.unlock()
            return nil
        }
        openedCount += 1
        lock.unlock()
        do {
            let connection = try SQLiteConnection(path: store.path, create: false)
            try connection.execute("PRAGMA query_only = 1")
            return Reader(connection: connection, store: store, generation: generation)
        } catch {
            lock.lock()
            if generation == self.generation { openedCount -= 1 }
            lock.unlock()
            return nil
        }
    }

    func checkin(_ reader: Reader) {
        lock.lock()
        if reader.generation == generation {
            idle.append(reader.connection)
        }
        lock.unlock()
    }

    /// Reads `store` from now on (nil: none, the store was removed): idle connections are closed, and ones checked
    /// out are closed when they come back.
    func retarget(_ store: SQLiteStore?) {
        lock.lock()
        let closing = idle
        idle = []
        openedCount = 0
        generation += 1
        self.store = store
        lock.unlock()
        _ = closing
    }

    /// Connections open now.
    var opened: Int {
        lock.lock()
        defer { lock.unlock() }
        return openedCount
    }
}
