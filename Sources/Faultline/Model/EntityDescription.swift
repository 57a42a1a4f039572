import Foundation

/// An entity: a kind of managed object, with attributes and relationships, optionally inheriting from a parent.
///
/// Sub-entities share their inheritance root's table and are told apart by the `Z_ENT` column.
public final class EntityDescription: @unchecked Sendable, CustomStringConvertible {
    /// The entity's name.
    public let name: String
    /// Abstract entities have no instances of their own.
    public var isAbstract: Bool
    /// The parent entity's name, if any.
    public let parentName: String?
    /// The properties the entity declares itself (not inherited ones).
    public let declaredProperties: [PropertyDescription]
    /// The fetched properties declared by this entity (not inherited ones).
    public let declaredFetchedProperties: [FetchedPropertyDescription]
    /// Every fetched property, inherited ones first (set when the model is built).
    public internal(set) var fetchedProperties: [FetchedPropertyDescription] = []
    /// Compound indexes: each an ordered list of property names.
    public var compoundIndexes: [[String]]
    /// Uniqueness constraints: each a list of property names whose values together must be unique.
    public var uniquenessConstraints: [[String]]
    /// Named fetch indexes (Xcode's "Indexes" with a name).
    public var fetchIndexes: [FetchIndexDescription]
    /// Mixed into the version hash so that a model change without a structural change still counts.
    public var versionHashModifier: String?
    /// The class name given in the model file (informational).
    public var representedClassName: String?
    /// The entity's name in an earlier model version when it was renamed (Xcode's "Renaming ID", `elementID`); a
    /// store Core Data migrated keeps that name in `Z_PRIMARYKEY`.
    public var renamingIdentifier: String?
    /// Free-form metadata from the model file.
    public var userInfo: [String: String]

    // MARK: Resolved when the model is built
    // Set while the model is built and read on every fetch and fault afterwards: a run-time exclusivity check on
    // each read would cost more than the read, and nothing writes them once the model is in use.

    /// The model the entity belongs to.
    @exclusivity(unchecked) public internal(set) unowned(unsafe) var model: ManagedObjectModel!
    /// The parent entity.
    @exclusivity(unchecked) public internal(set) unowned(unsafe) var superentity: EntityDescription?
    /// Direct sub-entities, sorted by name.
    @exclusivity(unchecked) public internal(set) var subentities: [EntityDescription] = []
    /// All properties, inherited ones first, each at its `index`.
    @exclusivity(unchecked) public internal(set) var properties: [PropertyDescription] = []
    /// Entity number, stored in `Z_ENT`. Numbers of a hierarchy are contiguous, the parent's first.
    @exclusivity(unchecked) public internal(set) var entityNumber: Int = 0
    /// The root entity's number: the table's number in object keys (kept, as an object's release needs it).
    @exclusivity(unchecked) var rootNumber: Int32 = 0
    /// The last entity number in this entity's sub-tree (itself when it has no sub-entities).
    @exclusivity(unchecked) public internal(set) var lastDescendantNumber: Int = 0
    /// The table shared by this entity's inheritance hierarchy.
    @exclusivity(unchecked) public internal(set) var table: TableDescription!
    /// SHA-256 of the entity's structure, as stored in the store's metadata.
    @exclusivity(unchecked) public internal(set) var versionHash: Data = Data()

    @exclusivity(unchecked) var propertyIndex: [String: Int] = [:]
    /// Values of a newly inserted object: attribute defaults, null elsewhere (an inserted object's null to-many
    /// slot means empty).
    @exclusivity(unchecked) var insertTemplate: [Slot] = []
    /// Transient attributes with a default value that has no stored form, by slot.
    @exclusivity(unchecked) var transientDefaults: [(slot: Int, value: Any)] = []
    /// Slots of to-many relationships.
    @exclusivity(unchecked) var toManySlots: [Int] = []
    /// Slots that save-time validation must look at (required values, bounds, patterns, counts).
    @exclusivity(unchecked) var validatedSlots: [Int] = []
    /// True when a saved row's snapshot differs from the live values' layout (relationships or transients).
    @exclusivity(unchecked) var snapshotNeedsStoredForm = false
    /// The registered class for objects of this entity.
    @exclusivity(unchecked) var managedClass: ManagedObject.Type = ManagedObject.self
    /// Serial unique in this process, used by `PropertyKey` caches.
    @usableFromInline let serial: Int = EntityDescription.nextSerial()

    /// Creates an entity description.
    public init(name: String, parent: String? = nil, isAbstract: Bool = false,
                properties: [PropertyDescription] = [], compoundIndexes: [[String]] = [],
                uniquenessConstraints: [[String]] = [], fetchIndexes: [FetchIndexDescription] = [],
                versionHashModifier: String? = nil,
                representedClassName: String? = nil, userInfo: [String: String] = [:],
                fetchedProperties: [FetchedPropertyDescription] = []) {
        self.declaredFetchedProperties = fetchedProperties
        self.name = name
        self.parentName = parent
        self.isAbstract = isAbstract
        self.declaredProperties = properties
        self.compoundIndexes = compoundIndexes
        self.uniquenessConstraints = uniquenessConstraints
        self.fetchIndexes = fetchIndexes
        self.versionHashModifier = versionHashModifier
        self.representedClassName = representedClassName
        self.userInfo = userInfo
    }

    /// The root of the inheritance hierarchy (the entity itself when it has no parent).
    public var root: EntityDescription {
        var entity = self
        while let parent = entity.superentity { entity = parent }
        return entity
    }

    /// All attributes, inherited ones included.
    public internal(set) var attributes: [AttributeDescription] = []
    /// All relationships, inherited ones included.
    public internal(set) var relationships: [RelationshipDescription] = []
    /// Ordered to-many relationships whose order lives in the destination's `Z_FOK_` column.
    var orderKeyedRelationships: [RelationshipDescription] = []
    /// Relationships whose join-table rows this entity's objects write.
    var joinTableOwners: [RelationshipDescription] = []
    /// Relationships stored in a join table (either side).
    var joinTableRelationships: [RelationshipDescription] = []
    /// True when this entity or an ancestor declares a uniqueness constraint.
    var hasUniquenessConstraints = false

    /// The fetched property named `name`, inherited ones included.
    public func fetchedProperty(named name: String) -> FetchedPropertyDescription? {
        fetchedProperties.first { $0.name == name }
    }

    /// The property named `name` (an attribute or relationship, inherited ones included), or nil.
    public func property(named name: String) -> PropertyDescription? {
        propertyIndex[name].map { properties[$0] }
    }

    /// The attribute named `name`, inherited ones included.
    public func attribute(named name: String) -> AttributeDescription? {
        property(named: name) as? AttributeDescription
    }

    /// The relationship named `name`, inherited ones included.
    public func relationship(named name: String) -> RelationshipDescription? {
        property(named: name) as? RelationshipDescription
    }

    /// True when `self` is `entity` or one of its descendants.
    public func isKind(of entity: EntityDescription) -> Bool {
        entityNumber >= entity.entityNumber && entityNumber <= entity.lastDescendantNumber && table === entity.table
    }

    /// This entity and all its descendants.
    public var selfAndDescendants: [EntityDescription] {
        [self] + subentities.flatMap(\.selfAndDescendants)
    }

    /// The entities a fetch of this entity covers: itself, and its descendants when `includingSubentities` (an
    /// array the model keeps).
    func fetchedEntities(includingSubentities: Bool) -> [EntityDescription] {
        includingSubentities ? model.hierarchies[entityNumber - 1] : model.singles[entityNumber - 1]
    }

    /// Registers the class used for this entity's objects (a typed `ManagedObject` subclass).
    public func register(_ type: ManagedObject.Type) {
        managedClass = type
        hasCustomClass = ObjectIdentifier(type) != ObjectIdentifier(ManagedObject.self)
        if hasCustomClass { ClassEntities.note(self, for: type) }
    }

    /// True when objects of this entity are of a subclass, whose lifecycle hooks must be called.
    private(set) var hasCustomClass = false

    /// The text `print` and `String(describing:)` show.
    public var description: String { "EntityDescription(\(name))" }

    private static let serialCounter = SerialCounter()
    private static func nextSerial() -> Int { serialCounter.next() }
}

/// A table: one per inheritance root.
public final class TableDescription: @unchecked Sendable {
    /// `Z<ROOTNAME>`.
    public let name: String
    /// Columns after `Z_PK, Z_ENT, Z_OPT`, in order.
    public internal(set) var columns: [ColumnDescription] = []
    /// The root entity.
    public internal(set) unowned(unsafe) var root: EntityDescription!
    /// Index definitions: name, columns (with their collation and order where Core Data writes them), uniqueness.
    public internal(set) var indexes: [IndexDescription] = []

    init(name: String) { self.name = name }

    /// The position of `column` among `columns`.
    func position(of column: String) -> Int? { columns.firstIndex { $0.name == column } }
}

/// One column of a table.
public struct ColumnDescription: Sendable {
    /// Column name.
    public let name: String
    /// Declared SQL type.
    public let type: String
}

/// One index of a table.
public struct IndexDescription: Sendable {
    /// Index name, as Core Data names it.
    public let name: String
    /// Indexed columns, in order.
    public let columns: [String]
    /// Partial-index condition, if any.
    public let condition: String?
    /// A `UNIQUE` index (a uniqueness constraint's).
    public var isUnique = false
    /// For Core Data's named indexes, each column's order (`COLLATE BINARY ASC` or `DESC`); nil for plain columns.
    public var ascending: [Bool]? = nil

    /// The column list as written in `CREATE INDEX`.
    public var columnList: String {
        guard let ascending else { return columns.joined(separator: ", ") }
        return zip(columns, ascending).map { "\($0) COLLATE BINARY \($1 ? "ASC" : "DESC")" }.joined(separator: ", ")
    }
}

final class SerialCounter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()
    func next() -> Int {
        lock.lock(); defer { lock.unlock() }
        value += 1
        return value
    }
}
