/// A relationship from one entity to another: to-one, or to-many (unordered or ordered).
public final class RelationshipDescription: PropertyDescription, @unchecked Sendable {
    /// The destination entity's name.
    public let destinationName: String
    /// The inverse relationship's name on the destination, if any.
    public let inverseName: String?
    /// To-many when true (maxCount other than 1).
    public let isToMany: Bool
    /// For to-many: whether the destination objects keep an order.
    public let isOrdered: Bool
    /// What deleting the source does to the destination.
    public var deleteRule: DeleteRule
    /// Minimum number of destination objects (0 = none).
    public var minCount: Int
    /// Maximum number of destination objects (0 = unbounded).
    public var maxCount: Int
    /// The maximum count exactly as a compiled model archives it (a to-many built in code may say -1); Core Data's
    /// version hash feeds this value.
    var archivedMaxCount: Int?

    /// The destination entity (set when the model is built).
    public internal(set) unowned(unsafe) var destination: EntityDescription!
    /// The inverse relationship (set when the model is built), if any.
    public internal(set) unowned(unsafe) var inverse: RelationshipDescription?

    /// How this relationship is stored (set when the model is built).
    var storage: RelationshipStorage = .toOneColumn
    /// For to-one relationships whose destination has sub-entities: the column holding the destination's Z_ENT.
    public internal(set) var entityColumnName: String?
    /// For a to-one relationship whose inverse is an ordered to-many: the column holding this row's position in
    /// that ordered relationship (`Z_FOK_<NAME>`).
    public internal(set) var orderColumnName: String?
    /// For relationships stored in a join table: the table and its two columns.
    public internal(set) var joinTable: JoinTable?

    /// Creates a relationship.
    public init(name: String, destination: String, inverse: String? = nil, isToMany: Bool = false,
                isOrdered: Bool = false, deleteRule: DeleteRule = .nullify, isOptional: Bool = true,
                isTransient: Bool = false, minCount: Int = 0, maxCount: Int? = nil,
                userInfo: [String: String] = [:]) {
        self.destinationName = destination
        self.inverseName = inverse
        self.isToMany = isToMany
        self.isOrdered = isToMany && isOrdered
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount ?? (isToMany ? 0 : 1)
        super.init(name: name, isOptional: isOptional, isTransient: isTransient, userInfo: userInfo)
    }

    /// Many-to-many, or to-many without an inverse: stored in a join table.
    public var usesJoinTable: Bool { joinTable != nil }

    override func hashInput() -> String {
        "R|\(name)|\(destinationName)|\(inverseName ?? "")|\(isToMany)|\(isOrdered)|\(isOptional)|\(isTransient)"
    }
}

/// How a relationship's state is kept in the store.
enum RelationshipStorage: Sendable {
    /// A foreign-key column in the source's table (every stored to-one).
    case toOneColumn
    /// Derived from the inverse to-one's column in the destination's table.
    case inverseColumn
    /// Rows of a join table.
    case joinTable
    /// Not stored.
    case transient
}

/// A many-to-many (or inverse-less to-many) join table.
public struct JoinTable: Sendable {
    /// Table name, `Z_<ENT><RELATIONSHIP>`.
    public let name: String
    /// Column holding the source object's Z_PK.
    public let sourceColumn: String
    /// Column holding the destination object's Z_PK.
    public let destinationColumn: String
    /// For ordered relationships: the column holding the destination's position.
    public let orderColumn: String?
    /// The inverse's order column when the inverse is ordered too (the table holds both).
    var inverseOrderColumn: String? = nil
    /// True when this relationship's source is the table's first column owner (the side that writes rows).
    let isOwner: Bool
    /// True for a to-many without an inverse, whose links Core Data keeps in a column of the destination's own
    /// table (`name` is that table, `destinationColumn` its `Z_PK`): a link is set and cleared there, never
    /// inserted or deleted as a row.
    public internal(set) var isDestinationTable = false
}
