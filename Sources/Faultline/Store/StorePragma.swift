/// An SQLite pragma a store runs when it opens (Core Data's `NSSQLitePragmasOption`, or
/// `PersistentStoreDescription.setValue(_:forPragmaNamed:)`): `journal_mode`, `synchronous`, `cache_size`…
///
/// SQLite cannot bind a pragma's value, so both parts are checked to be plain tokens — a name of letters and
/// underscores, a value of letters, digits, `_`, `-` and `.` — before they reach SQL.
public struct StorePragma: Hashable, Sendable, CustomStringConvertible {
    /// The pragma's name, such as `journal_mode`.
    public let name: String
    /// Its value, such as `DELETE`.
    public let value: String

    /// The longest name or value accepted.
    public static let maximumLength = 64

    /// A pragma; throws `StoreError.invalidConfiguration` when the name or value is not a plain token.
    public init(_ name: String, _ value: String) throws {
        func plain(_ text: String, _ allowed: (UInt8) -> Bool) -> Bool {
            !text.isEmpty && text.utf8.count <= Self.maximumLength && text.utf8.allSatisfy(allowed)
        }
        func letter(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F }
        guard plain(name, letter) else {
            throw StoreError.invalidConfiguration("the pragma name '\(name)' is not a name of letters and underscores (at most \(Self.maximumLength))")
        }
        guard plain(value, { letter($0) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E }) else {
            throw StoreError.invalidConfiguration("the value '\(value)' of pragma \(name) is not a plain value of letters, digits, '_', '-' and '.' (at most \(Self.maximumLength))")
        }
        self.name = name
        self.value = value
    }

    /// The statement that sets it.
    var sql: String { "PRAGMA \(name) = \(value)" }

    /// The text `print` and `String(describing:)` show.
    public var description: String { "\(name) = \(value)" }
}
