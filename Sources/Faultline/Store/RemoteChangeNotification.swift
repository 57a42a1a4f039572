import CSQLite
import Foundation
import Synchronization

/// Core Data's `NSPersistentStoreRemoteChangeNotificationPostOptionKey`: the coordinator posts
/// `Notification.Name.PersistentStoreRemoteChange` whenever its store changes.
public let PersistentStoreRemoteChangeNotificationPostOptionKey = "NSPersistentStoreRemoteChangeNotificationOptionKey"
/// Core Data's `NSPersistentHistoryTokenKey`: the remote-change notification's history token (history tracking on).
public let PersistentHistoryTokenKey = "historyToken"

extension Notification.Name {
    /// Core Data's `NSPersistentStoreRemoteChange`: posted by a coordinator whose store was added with
    /// `PersistentStoreRemoteChangeNotificationPostOptionKey`, after each save or batch request on that store by any
    /// coordinator of this process (its own included, as Core Data). `object` is the coordinator; `userInfo` has
    /// "storeURL", "storeUUID" and, with history tracking, `PersistentHistoryTokenKey`. Another process's writes are
    /// not seen (Core Data learns of them through Darwin notifications, which Linux lacks).
    public static let PersistentStoreRemoteChange = Notification.Name("NSPersistentStoreRemoteChangeNotification")
}

/// The coordinators that post remote-change notifications, by store file (an in-memory store by its coordinator).
enum RemoteChangeObservers {
    private struct Observer {
        weak var coordinator: PersistentStoreCoordinator?
    }

    private static let observers = Mutex<[String: [Observer]]>([:])
    /// True once any coordinator asked: until then a save pays one atomic load.
    private static let anyObserver = Atomic<Bool>(false)

    /// The key a store is observed by.
    static func key(path: String?, coordinator: PersistentStoreCoordinator) -> String {
        path ?? "memory:\(ObjectIdentifier(coordinator).hashValue)"
    }

    /// Makes `coordinator` post for the store at `key` (nil: for none), instead of any store before.
    static func observe(_ key: String?, by coordinator: PersistentStoreCoordinator) {
        observers.withLock { all in
            for (k, list) in all {
                let kept = list.filter { $0.coordinator != nil && $0.coordinator !== coordinator }
                all[k] = kept.isEmpty ? nil : kept
            }
            if let key { all[key, default: []].append(Observer(coordinator: coordinator)) }
        }
        if key != nil { anyObserver.store(true, ordering: .relaxed) }
    }

    /// The store at `key` changed: each coordinator observing it posts (on this thread, after the change committed).
    static func storeChanged(_ key: @autoclosure () -> String, url: URL?, identifier: String?, token: () -> PersistentHistoryToken?) {
        guard anyObserver.load(ordering: .relaxed) else { return }
        let key = key()
        let posting = observers.withLock { $0[key]?.compactMap(\.coordinator) ?? [] }
        guard !posting.isEmpty else { return }
        var info: [AnyHashable: Any] = [:]
        if let url { info["storeURL"] = url }
        if let identifier { info["storeUUID"] = identifier }
        if let token = token() { info[PersistentHistoryTokenKey] = token }
        for coordinator in posting {
            NotificationCenter.default.post(name: .PersistentStoreRemoteChange, object: coordinator, userInfo: info)
        }
    }
}

extension PersistentStoreCoordinator {
    /// Posts the remote-change notification for this coordinator's store, when any coordinator observes it.
    func noteStoreChanged() {
        let path = storePath
        RemoteChangeObservers.storeChanged(RemoteChangeObservers.key(path: path, coordinator: self), url: path.map { URL(fileURLWithPath: $0) },
                                           identifier: storeIdentifier, token: { latestHistoryToken() })
    }

    /// The token of the store's newest history transaction (nil without history).
    private func latestHistoryToken() -> PersistentHistoryToken? {
        try? withLock {
            guard let store = storeLocked, store.tracksHistory, let identifier = storeIdentifier else { return nil }
            let statement = try store.statement("SELECT max(Z_PK) FROM ATRANSACTION")
            defer { statement.reset() }
            guard try statement.step(), statement.columnType(at: 0) != SQLITE_NULL else { return nil }
            return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: statement.int64(at: 0))
        }
    }
}
