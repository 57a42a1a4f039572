import Foundation

/// How a fetch orders its results: a key path (through to-one relationships), a direction and a comparison.
public struct FetchSortDescriptor: Hashable, Sendable, CustomStringConvertible {
    /// How values compare.
    public enum Comparison: Hashable, Sendable {
        /// Byte order of the stored values, in SQL (`ORDER BY t0.ZNAME`).
        case binary
        /// Unicode case-insensitive, in SQL (`ORDER BY FL_FOLD(t0.ZNAME, 1)`).
        case caseInsensitive
        /// `localizedStandardCompare`, in memory after the fetch (SQLite cannot; the fetch records it).
        case localized
    }

    /// The key path sorted on (`name`, `department.name`).
    public var keyPath: String
    /// True: smallest first.
    public var ascending: Bool
    /// How values compare.
    public var comparison: Comparison

    /// A sort on `keyPath`.
    public init(keyPath: String, ascending: Bool = true, comparison: Comparison = .binary) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.comparison = comparison
    }

    /// A sort on `key` (Core Data's `NSSortDescriptor(key:ascending:)`, which swift-corelibs-foundation does not
    /// offer: key-value coding needs the Objective-C runtime).
    public init(key: String, ascending: Bool = true) {
        self.init(keyPath: key, ascending: ascending)
    }

    /// Parses `key`, `key:desc`, `key:asc`, with an optional `:ci` (case-insensitive) or `:localized` suffix.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ":").map { String($0) }
        guard let key = parts.first, !key.isEmpty else { throw ObjectPredicateError(.syntax, "empty sort key") }
        self.init(keyPath: key)
        for option in parts.dropFirst() {
            switch option.lowercased() {
            case "asc": ascending = true
            case "desc": ascending = false
            case "ci": comparison = .caseInsensitive
            case "localized": comparison = .localized
            default: throw ObjectPredicateError(.syntax, "unknown sort option '\(option)' in '\(text)' (known: asc, desc, ci, localized)")
            }
        }
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        keyPath + (ascending ? "" : ":desc") + (comparison == .caseInsensitive ? ":ci" : comparison == .localized ? ":localized" : "")
    }
}
