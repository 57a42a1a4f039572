/// A data file that cannot be loaded: names the file, entity, record and key, and what is wrong.
public struct DataFileError: Error, CustomStringConvertible, Sendable {
    /// The data file.
    public var file: String
    /// The entity, when the problem is inside one.
    public var entity: String?
    /// The record: its position (1-based) and `@id`, when known.
    public var record: String?
    /// The key, when the problem is one value.
    public var key: String?
    /// What is wrong.
    public var problem: String

    public init(file: String, entity: String? = nil, record: String? = nil, key: String? = nil, problem: String) {
        self.file = file
        self.entity = entity
        self.record = record
        self.key = key
        self.problem = problem
    }

    public var description: String {
        var place = "data '\(file)'"
        if let entity { place += ", entity '\(entity)'" }
        if let record { place += ", record \(record)" }
        if let key { place += ", key '\(key)'" }
        return place + ": " + problem
    }
}
