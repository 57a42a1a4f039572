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
    }

    public let kind: Kind
    public let message: String
    /// The format string, when the predicate came from one.
    public let format: String?
    /// The character offset in `format` where the problem is.
    public let position: Int?

    public init(_ kind: Kind, _ message: String, format: String? = nil, position: Int? = nil) {
        self.kind = kind
        self.message = message
        self.format = format
        self.position = position
    }

    public var description: String {
        if let position { return "\(message) (at character \(position + 1))" }
        return message
    }

    /// The message, then the format string indented with a caret under the position: for terminals.
    public var caretDescription: String {
        guard let format, let position else { return description }
        let line = format.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")
        return description + "\n  " + line + "\n  " + String(repeating: " ", count: min(position, line.count)) + "^"
    }
}
