/// What kind of store a coordinator opens (Core Data's `NSPersistentStore.StoreType`).
public struct PersistentStoreType: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Core Data's name of the type (`NSSQLiteStoreType` is "SQLite", `NSInMemoryStoreType` "InMemory").
    public let rawValue: String

    /// A store file in Core Data's SQLite layout.
    public static let sqlite = PersistentStoreType(rawValue: "SQLite")
    /// An SQLite database in memory, in the same layout, read and written by the same code (SQL, probes and all);
    /// nothing is kept after the coordinator goes. Core Data's in-memory store is not SQLite; this one is, so that
    /// tests of an app's fetches see the SQL its store would run. (Core Data users also get one by describing an
    /// SQLite store at `/dev/null`; `PersistentContainer` reads such a description the same way.)
    public static let inMemory = PersistentStoreType(rawValue: "InMemory")

    /// The type named `rawValue` (Core Data's store type strings).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The type named by a string literal (`"SQLite"`), as Core Data's string constants are used.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The text `print` and `String(describing:)` show.
    public var description: String { rawValue }
}
