import Foundation

/// Core Data's `NSSQLiteStoreType` (a `PersistentStoreType`, where Core Data's is a string: every use of the constant
/// compiles — `description.type = SQLiteStoreType`, `addPersistentStore(ofType: SQLiteStoreType, …)`).
public let SQLiteStoreType = PersistentStoreType.sqlite
/// Core Data's `NSInMemoryStoreType`.
public let InMemoryStoreType = PersistentStoreType.inMemory

/// Core Data's option keys (`NSMigratePersistentStoresAutomaticallyOption`, …) with Core Data's string values.
public let MigratePersistentStoresAutomaticallyOption = "NSMigratePersistentStoresAutomaticallyOption"
/// Core Data's `NSInferMappingModelAutomaticallyOption`.
public let InferMappingModelAutomaticallyOption = "NSInferMappingModelAutomaticallyOption"
/// Core Data's `NSPersistentHistoryTrackingKey`.
public let PersistentHistoryTrackingKey = "NSPersistentHistoryTrackingKey"
/// Core Data's `NSReadOnlyPersistentStoreOption`.
public let ReadOnlyPersistentStoreOption = "NSReadOnlyPersistentStoreOption"
/// Core Data's `NSSQLitePragmasOption`: a dictionary of pragma name → value.
public let SQLitePragmasOption = "NSSQLitePragmasOption"

/// A store a coordinator has added (Core Data's `NSPersistentStore`): its type, file, identifier and options. The
/// coordinator holds one; `persistentStores` lists it.
public final class PersistentStore: @unchecked Sendable, CustomStringConvertible {
    /// `SQLiteStoreType` or `InMemoryStoreType`.
    public let type: PersistentStoreType
    /// The store's file (nil in memory).
    public let url: URL?
    /// The store's UUID (`NSStoreUUID`).
    public let identifier: String
    /// Core Data's default configuration: Faultline's stores hold every entity.
    public let configurationName = "PF_DEFAULT_CONFIGURATION_NAME"
    /// The options it was added with, as Core Data's dictionary (`options`) would hold them.
    public let storeOptions: PersistentStoreOptions
    /// Core Data's `options`: the options it was added with, under Core Data's keys (pass it to
    /// `addPersistentStore(ofType:configurationName:at:options:)` to add the store again the same way).
    public var options: [AnyHashable: Any]? {
        var dictionary: [AnyHashable: Any] = [:]
        let keys: [(PersistentStoreOptions, String)] = [
            (.readOnly, ReadOnlyPersistentStoreOption), (.migratesAutomatically, MigratePersistentStoresAutomaticallyOption),
            (.infersMappingAutomatically, InferMappingModelAutomaticallyOption), (.persistentHistoryTracking, PersistentHistoryTrackingKey),
            (.postsRemoteChangeNotifications, PersistentStoreRemoteChangeNotificationPostOptionKey),
        ]
        for (option, key) in keys where storeOptions.contains(option) { dictionary[key] = true }
        return dictionary
    }
    /// True when it was added read only.
    public var isReadOnly: Bool { storeOptions.contains(.readOnly) }
    /// The coordinator that added it.
    public private(set) weak var persistentStoreCoordinator: PersistentStoreCoordinator?

    init(type: PersistentStoreType, url: URL?, identifier: String, options: PersistentStoreOptions, coordinator: PersistentStoreCoordinator) {
        self.type = type
        self.url = url
        self.identifier = identifier
        self.storeOptions = options
        self.persistentStoreCoordinator = coordinator
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String { "<PersistentStore \(type) \(url?.path ?? "(in memory)") \(identifier)>" }
}

extension PersistentStoreOptions {
    /// The options a Core Data options dictionary sets, and its pragmas; a known key with a value of the wrong kind
    /// is an error naming it (unknown keys are ignored, as Core Data ignores them).
    /// An options dictionary's Boolean (a `Bool` or an `NSNumber`); another kind of value is an error naming `key`.
    static func flag(_ value: Any, key: String) throws -> Bool {
        if let b = value as? Bool { return b }
        if let n = value as? NSNumber { return n.boolValue }
        throw StoreError.invalidConfiguration("the option \(key) must be a Boolean, got \(type(of: value))")
    }

    static func parsing(_ dictionary: [AnyHashable: Any]?) throws -> (PersistentStoreOptions, [StorePragma]) {
        var options: PersistentStoreOptions = []
        var pragmas: [StorePragma] = []
        for (key, value) in dictionary ?? [:] {
            let name = "\(key)"
            func flag() throws -> Bool { try Self.flag(value, key: name) }
            switch name {
            case MigratePersistentStoresAutomaticallyOption: if try flag() { options.insert(.migratesAutomatically) }
            case InferMappingModelAutomaticallyOption: if try flag() { options.insert(.infersMappingAutomatically) }
            case PersistentHistoryTrackingKey: if try flag() { options.insert(.persistentHistoryTracking) }
            case ReadOnlyPersistentStoreOption: if try flag() { options.insert(.readOnly) }
            case PersistentStoreRemoteChangeNotificationPostOptionKey: if try flag() { options.insert(.postsRemoteChangeNotifications) }
            case SQLitePragmasOption:
                guard let given = value as? [String: Any] ?? (value as? NSDictionary as? [String: Any]) else {
                    throw StoreError.invalidConfiguration("the option \(name) must be a dictionary of pragma names to values")
                }
                for (pragma, setting) in given.sorted(by: { $0.key < $1.key }) { pragmas.append(try StorePragma(pragma, "\(setting)")) }
            default: break
            }
        }
        return (options, pragmas)
    }
}

extension PersistentStoreCoordinator {
    /// The stores added (Core Data's `persistentStores`): Faultline's coordinator holds one.
    public var persistentStores: [PersistentStore] {
        withLock { persistentStoreObject.map { [$0] } ?? [] }
    }

    /// The store at `url`, when this coordinator added it (Core Data's `persistentStore(for:)`).
    public func persistentStore(for url: URL) -> PersistentStore? {
        persistentStores.first { $0.url?.standardizedFileURL.path == url.standardizedFileURL.path }
    }

    /// Core Data's `addPersistentStore(ofType:configurationName:at:options:)`: `SQLiteStoreType` or
    /// `InMemoryStoreType`, Core Data's option keys; the store it added. Configurations other than the default are
    /// refused (one store per coordinator holds every entity).
    @discardableResult
    public func addPersistentStore(ofType storeType: PersistentStoreType, configurationName: String? = nil, at url: URL?,
                                   options: [AnyHashable: Any]? = nil) throws -> PersistentStore {
        if let configurationName, configurationName != "PF_DEFAULT_CONFIGURATION_NAME" {
            throw StoreError.invalidConfiguration("the configuration '\(configurationName)': Faultline's coordinator holds one store with every entity")
        }
        let (parsed, pragmas) = try PersistentStoreOptions.parsing(options)
        // Core Data's `/dev/null` habit: an SQLite store in memory.
        let type: PersistentStoreType = storeType == InMemoryStoreType || url?.path == "/dev/null" ? .inMemory : storeType
        try addPersistentStore(type: type, at: type == .inMemory ? nil : url, options: parsed, pragmas: pragmas)
        return persistentStores[0]
    }

    /// A store's metadata (Core Data's `metadata(for:)`).
    public func metadata(for store: PersistentStore) throws -> [String: Any] {
        guard let url = store.url, store.persistentStoreCoordinator === self else {
            throw StoreError.invalidConfiguration("the store \(store) is not one of this coordinator's stores on file")
        }
        return try Self.metadataForPersistentStore(at: url)
    }

    /// Core Data's `metadataForPersistentStore(ofType:at:options:)`.
    public static func metadataForPersistentStore(ofType storeType: PersistentStoreType, at url: URL, options: [AnyHashable: Any]? = nil) throws -> [String: Any] {
        guard storeType == SQLiteStoreType else {
            throw StoreError.invalidConfiguration("a store of type \(storeType) has no file to read metadata from")
        }
        return try metadataForPersistentStore(at: url)
    }
}
