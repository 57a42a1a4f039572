/// A predicate that cannot be parsed, bound or used: what is wrong and, for format strings, where.
public struct ObjectPredicateError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of problem.
    public enum Kind: Sendable, Equatable {
        /// The format string is not valid syntax.
        case syntax
        /// A format argument is missing, extra, or of the wrong type for its specifier.
        case argument
        /// A key the entity does not have.
        case unknownKey
        /// Values of incompatible types compared.
        case typeMismatch
        /// Valid syntax the engine cannot evaluate (custom selectors, functions it does not know).
        case unsupported
        /// Beyond one of `Limits` (nesting depth, key path length, format length).
        case limit
    }

    /// What kind of problem.
    public let kind: Kind
    /// The problem, in words.
    public let message: String
    /// The format string, when the predicate came from one.
    public let format: String?
    /// The character offset in `format` where the problem is.
    public let position: Int?

    /// An error of `kind`, at `position` in `format` when known.
    public init(_ kind: Kind, _ message: String, format: String? = nil, position: Int? = nil) {
        self.kind = kind
        self.message = message
        self.format = format
        self.position = position
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        if let position { return "\(message) (at character \(position + 1))" }
        return message
    }

    /// The message, then the format string indented with a caret under the position: for terminals.
    public var caretDescription: String {
        guard let format, let position else { return description }
        let characters = PredicateParser.lexicalCharacters(format).map { $0 == "\n" || $0 == "\t" || $0 == "\r" ? " " : $0 }
        let at = min(position, characters.count)
        // A long format shows the 60 characters either side of the position.
        let start = max(0, at - 60), end = min(characters.count, at + 60)
        let prefix = start > 0 ? "…" : "", suffix = end < characters.count ? "…" : ""
        let line = prefix + String(characters[start..<end]) + suffix
        return description + "\n  " + line + "\n  " + String(repeating: " ", count: prefix.count + at - start) + "^"
    }
}
