import Foundation

/// A column of a dictionary fetch: a key path (attribute, or to-one relationship giving object IDs), or an
/// aggregate of one (`count`, `sum`, `avg`, `min`, `max`) under a name — Core Data's properties to fetch and
/// expression descriptions.
public struct PropertyToFetch: Hashable, Sendable, CustomStringConvertible {
    /// Aggregate functions.
    public enum Function: String, Hashable, Sendable, CaseIterable {
        /// `count:`.
        case count
        /// `sum:`.
        case sum
        /// `average:`.
        case avg
        /// `min:`.
        case min
        /// `max:`.
        case max
    }

    /// The key in each result dictionary.
    public var name: String
    /// The key path (`*` with `count` counts rows).
    public var keyPath: String
    /// The aggregate, if any.
    public var function: Function?

    /// A plain key path, named after itself.
    public init(_ keyPath: String) {
        self.name = keyPath
        self.keyPath = keyPath
        self.function = nil
    }

    /// An aggregate of a key path, under `name`.
    public init(_ function: Function, _ keyPath: String, as name: String? = nil) {
        self.function = function
        self.keyPath = keyPath
        self.name = name ?? "\(function.rawValue)(\(keyPath))"
    }

    /// Parses `key.path`, `function(key.path)` or `function(key.path) as name` (`count(*)` counts rows).
    public init(parsing text: String) throws {
        var body = text.trimmingCharacters(in: .whitespaces)
        var name: String?
        if let range = body.range(of: " as ", options: .caseInsensitive) {
            name = String(body[range.upperBound...]).trimmingCharacters(in: .whitespaces)
            body = String(body[..<range.lowerBound]).trimmingCharacters(in: .whitespaces)
        }
        if let open = body.firstIndex(of: "("), body.hasSuffix(")") {
            let functionName = String(body[..<open]).lowercased()
            guard let function = Function(rawValue: functionName) else {
                throw ObjectPredicateError(.syntax, "unknown function '\(functionName)' in '\(text)' (known: count, sum, avg, min, max)")
            }
            let key = String(body[body.index(after: open)..<body.index(before: body.endIndex)]).trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { throw ObjectPredicateError(.syntax, "'\(text)': \(functionName)() needs a key path") }
            self.init(function, key, as: name)
        } else {
            guard !body.isEmpty, !body.contains("("), !body.contains(" ") else {
                throw ObjectPredicateError(.syntax, "'\(text)' is not a key path or function(key path)")
            }
            self.init(body)
            if let name { self.name = name }
        }
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        let base = function.map { "\($0.rawValue)(\(keyPath))" } ?? keyPath
        return base == name ? base : "\(base) as \(name)"
    }
}
