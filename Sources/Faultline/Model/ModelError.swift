/// A malformed or inconsistent model: names where (file, entity, property) and what is wrong.
public struct ModelError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file the model came from, if any.
    public var source: String?
    /// The entity at fault, if any.
    public var entity: String?
    /// The property at fault, if any.
    public var property: String?
    /// What is wrong.
    public var problem: String

    /// An error about `problem`, naming the source, entity and property when given.
    public init(source: String? = nil, entity: String? = nil, property: String? = nil, problem: String) {
        self.source = source
        self.entity = entity
        self.property = property
        self.problem = problem
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        var parts: [String] = []
        if let source { parts.append("model '\(source)'") }
        if let entity { parts.append("entity '\(entity)'") }
        if let property { parts.append("property '\(property)'") }
        return parts.isEmpty ? problem : parts.joined(separator: ", ") + ": " + problem
    }

    func from(_ source: String) -> ModelError {
        var copy = self
        if copy.source == nil { copy.source = source }
        return copy
    }
}
