/// A property of an entity: an attribute or a relationship.
///
/// Descriptions are built freely, then frozen when a `ManagedObjectModel` is created from them; after that they
/// are immutable and may be shared across threads.
public class PropertyDescription: @unchecked Sendable, CustomStringConvertible {
    /// The property's name, unique within its entity and the entity's ancestors.
    public let name: String
    /// Whether the property may be nil (or, for a to-many relationship, empty) when saved.
    public var isOptional: Bool
    /// Transient properties are tracked in memory but never stored.
    public var isTransient: Bool
    /// Free-form metadata from the model file.
    public var userInfo: [String: String]
    /// The property's name in an earlier model version when it was renamed (Xcode's "Renaming ID", `elementID`):
    /// an inferred migration carries the old property's values over.
    public var renamingIdentifier: String?
    /// Xcode's "Version Hash Modifier": changes the property's Core Data version hash (`coreDataVersionHash`) alone.
    public var versionHashModifier: String?

    /// The entity that declares the property (set when the model is built).
    public internal(set) unowned(unsafe) var entity: EntityDescription!
    /// The property's position in the object layout of its entity and of every sub-entity.
    public internal(set) var index: Int = -1
    /// The SQL column that stores it, nil for transient attributes and to-many relationships.
    public internal(set) var columnName: String?

    init(name: String, isOptional: Bool, isTransient: Bool, userInfo: [String: String]) {
        self.name = name
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.userInfo = userInfo
    }

    /// True when the value lives in a column of the entity's table.
    public var isStored: Bool { columnName != nil }

    /// The text `print` and `String(describing:)` show.
    public var description: String { "\(type(of: self))(\(entity?.name ?? "?").\(name))" }

    func hashInput() -> String { name }
}
