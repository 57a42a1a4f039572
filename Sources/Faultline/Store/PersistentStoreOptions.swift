/// How a store is opened (Core Data's store options dictionary, as a set).
public struct PersistentStoreOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Core Data's `NSReadOnlyPersistentStoreOption`: the file is opened read only and never created, converted or
    /// written; a missing or empty file is an error rather than a new store, and a save fails.
    public static let readOnly = PersistentStoreOptions(rawValue: 1)
}
