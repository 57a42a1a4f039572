import CSQLite
import Foundation

/// Core Data's `NSPersistentStoreForceDestroyOption`: destroy a store even while another connection writes to it.
public let PersistentStoreForceDestroyOption = "NSPersistentStoreForceDestroyOption"

/// Core Data's store file operations: removing a store from its coordinator, destroying, replacing and moving
/// stores. Each handles the store's `-wal`, `-shm` and `-journal` siblings and its external values with it, and a
/// failure at any step leaves the files as they were (said in the error where it cannot).
extension PersistentStoreCoordinator {
    /// Removes `store` from the coordinator (Core Data's `remove(_:)`): its connections close, the row cache
    /// empties, and contexts' fetches and faults fail with `StoreError.noStore` until a store is added again.
    public func remove(_ store: PersistentStore) throws {
        try withLock {
            guard persistentStoreObject === store else {
                throw StoreError.invalidConfiguration("\(store) is not one of this coordinator's stores, so it cannot be removed")
            }
            exchangeStoreLocked(nil, object: nil)
            installed(nil, readerConnections: 0, options: [])
        }
    }

    /// Destroys the store at `url` (Core Data's `destroyPersistentStore(at:ofType:options:)`): empties it in one
    /// transaction, so that a connection elsewhere sees an empty store rather than a file removed under it, then
    /// removes it with its siblings and external values. If this coordinator has the store, it is removed first. No
    /// file there: nothing to do. A file that is not an SQLite database is left alone (an error).
    /// `PersistentStoreForceDestroyOption` destroys it even while another connection writes to it.
    public func destroyPersistentStore(at url: URL, ofType storeType: PersistentStoreType, options: [AnyHashable: Any]? = nil) throws {
        guard storeType == SQLiteStoreType else {
            guard storeType == InMemoryStoreType else { throw Self.unknownType(storeType, "destroy") }
            return
        }
        if url.path == "/dev/null" { return }
        let force = try Self.flag(options, PersistentStoreForceDestroyOption)
        let files = StoreFileSet(url)
        let kind = files.kind()
        if case .other(let why) = kind {
            throw StoreError.storeFiles(operation: "destroy", path: files.path, detail: "\(why), so it is not a store; nothing was removed")
        }
        let added = persistentStore(for: url)
        if let added { try remove(added) }
        do {
            try StoreFileOperations.destroy(files, kind: kind, force: force)
        } catch StoreError.storeFiles(let operation, let path, let detail) where added != nil {
            throw StoreError.storeFiles(operation: operation, path: path, detail: detail + " (the store was removed from this coordinator first)")
        }
    }

    /// `destroyPersistentStore(at:ofType:options:)` with a store type (Core Data's `destroyPersistentStore(at:type:options:)`).
    public func destroyPersistentStore(at url: URL, type: PersistentStoreType, options: [AnyHashable: Any]? = nil) throws {
        try destroyPersistentStore(at: url, ofType: type, options: options)
    }

    /// Replaces the store at `destinationURL` with a copy of the one at `sourceURL` (Core Data's
    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)`); with no store
    /// at the destination, makes a copy there. The database is copied by SQLite's backup (its write-ahead log
    /// included, in one transaction on the destination), and the external values with it. The source is not
    /// changed. A destination this coordinator has added is refused: remove it first.
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
                                       ofType storeType: PersistentStoreType) throws {
        guard storeType == SQLiteStoreType else { throw Self.unknownType(storeType, "replace") }
        if persistentStore(for: destinationURL) != nil {
            throw StoreError.storeFiles(operation: "replace", path: destinationURL.path,
                                        detail: "this coordinator has the store added: remove it first (nothing was changed)")
        }
        try StoreFileOperations.replace(StoreFileSet(destinationURL), with: StoreFileSet(sourceURL))
    }

    /// `replacePersistentStore(at:destinationOptions:withPersistentStoreFrom:sourceOptions:ofType:)` with a store type.
    public func replacePersistentStore(at destinationURL: URL, destinationOptions: [AnyHashable: Any]? = nil,
                                       withPersistentStoreFrom sourceURL: URL, sourceOptions: [AnyHashable: Any]? = nil,
                                       type: PersistentStoreType) throws {
        try replacePersistentStore(at: destinationURL, destinationOptions: destinationOptions, withPersistentStoreFrom: sourceURL,
                                   sourceOptions: sourceOptions, ofType: type)
    }

    /// Moves `store` to a new SQLite file at `url` (Core Data's `migratePersistentStore(_:to:options:withType:)`):
    /// copies it there with its external values, then puts the copy in its place in the coordinator and returns it.
    /// The original files stay; the copy keeps the store's UUID, so object IDs stay valid. The destination must not
    /// exist. From an in-memory store too; to one, not (Faultline's in-memory stores start empty).
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
                                       withType storeType: PersistentStoreType) throws -> PersistentStore {
        guard storeType == SQLiteStoreType, url.path != "/dev/null" else {
            throw StoreError.storeFiles(operation: "migrate", path: url.path,
                                        detail: storeType == InMemoryStoreType || url.path == "/dev/null"
                                            ? "Faultline moves a store to an SQLite file, not into memory (nothing was changed)"
                                            : "the store type '\(storeType)' is not one Faultline writes (SQLite)")
        }
        let (parsed, pragmas) = try PersistentStoreOptions.parsing(options)
        return try withLock {
            guard let current = storeLocked, persistentStoreObject === store else {
                throw StoreError.invalidConfiguration("\(store) is not one of this coordinator's stores, so it cannot be migrated")
            }
            let destination = StoreFileSet(url)
            let source = current.filePath.map { StoreFileSet(URL(fileURLWithPath: $0)) }
            let opened = try StoreFileOperations.copy(current.connection, externalValuesOf: source, to: destination,
                                                      operation: "migrate", replacing: false) {
                let opened = try SQLiteStore(path: destination.path, model: managedObjectModel, readOnly: parsed.contains(.readOnly),
                                             pragmas: pragmas, probes: probes)
                if parsed.contains(.persistentHistoryTracking) && !parsed.contains(.readOnly) { try opened.startHistoryTracking() }
                return opened
            }
            let object = PersistentStore(type: SQLiteStoreType, url: url, identifier: opened.identifier, options: parsed, coordinator: self)
            exchangeStoreLocked(opened, object: object)
            installed(opened, readerConnections: Self.defaultReaderConnections, options: parsed)
            return object
        }
    }

    /// `migratePersistentStore(_:to:options:withType:)` with a store type.
    public func migratePersistentStore(_ store: PersistentStore, to url: URL, options: [AnyHashable: Any]? = nil,
                                       type: PersistentStoreType) throws -> PersistentStore {
        try migratePersistentStore(store, to: url, options: options, withType: type)
    }

    private static func unknownType(_ type: PersistentStoreType, _ operation: String) -> StoreError {
        .invalidConfiguration("the store type '\(type)' is not one Faultline can \(operation) (SQLite, InMemory)")
    }

    private static func flag(_ options: [AnyHashable: Any]?, _ key: String) throws -> Bool {
        guard let value = options?[key] else { return false }
        return try PersistentStoreOptions.flag(value, key: key)
    }
}
