/// How a store is opened (Core Data's store options dictionary, as a set).
public struct PersistentStoreOptions: OptionSet, Sendable {
    public let rawValue: Int
    /// The options whose bits `rawValue` holds.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Core Data's `NSReadOnlyPersistentStoreOption`: the file is opened read only and never created, converted or
    /// written; a missing or empty file is an error rather than a new store, and a save fails.
    public static let readOnly = PersistentStoreOptions(rawValue: 1)

    /// Core Data's `NSMigratePersistentStoresAutomaticallyOption`: a store made with another version of the model is
    /// migrated to the coordinator's model when it is added (with `.infersMappingAutomatically`; the model must have
    /// been loaded from its `.xcdatamodeld` or `.momd`, which holds the store's version).
    public static let migratesAutomatically = PersistentStoreOptions(rawValue: 2)

    /// Core Data's `NSInferMappingModelAutomaticallyOption`: the migration's mapping is inferred
    /// (`MappingModel.inferred(from:to:)`).
    public static let infersMappingAutomatically = PersistentStoreOptions(rawValue: 4)

    /// Core Data's `NSPersistentHistoryTrackingKey`: each save records a transaction and its changes in the
    /// store's history tables (created when absent), in Core Data's layout (`PersistentHistory` reads them).
    public static let persistentHistoryTracking = PersistentStoreOptions(rawValue: 8)

    /// Core Data's `NSPersistentStoreRemoteChangeNotificationPostOptionKey`: the coordinator posts
    /// `Notification.Name.PersistentStoreRemoteChange` after each change to its store (see there for which).
    public static let postsRemoteChangeNotifications = PersistentStoreOptions(rawValue: 16)
}
