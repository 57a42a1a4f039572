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
    /// The store the readers read (its plans are fixed once it is open; they are read without the coordinator).
    let store: SQLiteStore
    let maximum: Int
    /// Guards `idle` and `openedCount` (a connection is used by one thread at a time: the one that checked it out).
    private let lock = NSLock()
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
    func checkout() -> SQLiteConnection? {
        lock.lock()
        if let connection = idle.popLast() {
            lock.unlock()
            return connection
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
            return connection
        } catch {
            lock.lock()
            openedCount -= 1
            lock.unlock()
            return nil
        }
    }

    func checkin(_ connection: SQLiteConnection) {
        lock.lock()
        idle.append(connection)
        lock.unlock()
    }

    /// Connections open now.
    var opened: Int {
        lock.lock()
        defer { lock.unlock() }
        return openedCount
    }
}
