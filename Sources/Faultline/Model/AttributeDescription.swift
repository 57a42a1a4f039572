import Foundation

/// An attribute: a named value of one of Core Data's attribute types.
public final class AttributeDescription: PropertyDescription, @unchecked Sendable {
    /// The attribute's type.
    public var type: AttributeType
    /// The value a new object starts with (a Swift value of the attribute's type), or nil.
    public var defaultValue: (any Sendable)?
    /// Whether SQLite keeps a single-column index on it.
    public var isIndexed: Bool
    /// For binary attributes: whether Core Data may keep large values outside the row (recorded; values are
    /// stored in the row).
    public var allowsExternalBinaryDataStorage: Bool
    /// For transformable attributes: the registered transformer's name (nil = the default JSON transformer).
    public var valueTransformerName: String?
    /// Xcode's "Preserve After Deletion": persistent history keeps the value of a deleted object (it changes the
    /// attribute's Core Data version hash).
    public var preservesValueInHistoryOnDeletion = false
    /// Minimum value (numbers, dates as seconds since 2001) or length (strings), when set.
    public var minValue: Double?
    /// Maximum value (numbers, dates as seconds since 2001) or length (strings), when set.
    public var maxValue: Double?
    /// A regular expression strings must match, when set.
    public var regularExpression: String?
    /// For derived attributes in Xcode models: the derivation expression (recorded, not evaluated).
    public var derivationExpression: String?
    /// For derived attributes: the filtering predicate's format, when there is one.
    public var derivationFilter: String?
    /// For composite attributes: the elements (attributes, or composites in turn), each kept in a column of its own
    /// as SwiftData keeps a Codable struct's or enum's fields. The attribute's value is a `[String: Any]` of the
    /// elements' values by name.
    public var elements: [AttributeDescription] = []

    /// Creates an attribute.
    public init(name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
                defaultValue: (any Sendable)? = nil, isIndexed: Bool = false,
                allowsExternalBinaryDataStorage: Bool = false, valueTransformerName: String? = nil,
                minValue: Double? = nil, maxValue: Double? = nil, regularExpression: String? = nil,
                userInfo: [String: String] = [:]) {
        self.type = type
        self.defaultValue = defaultValue
        self.isIndexed = isIndexed
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.valueTransformerName = valueTransformerName
        self.minValue = minValue
        self.maxValue = maxValue
        self.regularExpression = regularExpression
        super.init(name: name, isOptional: isOptional, isTransient: isTransient, userInfo: userInfo)
    }

    /// Creates a composite attribute of `elements`.
    public convenience init(name: String, compositeOf elements: [AttributeDescription], isOptional: Bool = true,
                            isTransient: Bool = false, userInfo: [String: String] = [:]) {
        self.init(name: name, type: .composite, isOptional: isOptional, isTransient: isTransient, userInfo: userInfo)
        self.elements = elements
    }

    // MARK: Composite elements as the entity holds them
    // The model builder gives each element of a composite attribute an attribute of the entity, named by its path
    // ("author.person"), with a slot and a column like any attribute; the composite itself has neither.

    /// For such an element: its name in its composite ("person"); nil for every other attribute.
    public internal(set) var elementName: String?
    /// For a composite attribute of an entity: its elements as the entity holds them, in the composite's order.
    public internal(set) var entityElements: [AttributeDescription] = []
    /// True for an element of a composite attribute as the entity holds it.
    public var isCompositeElement: Bool { elementName != nil }

    /// A stored binary attribute kept in Core Data's external-storage format (marker byte, inline or in a file).
    var storesExternally: Bool { allowsExternalBinaryDataStorage && type == .binary && !isTransient }

    /// The default value converted to its stored form (set when the model is built).
    var defaultSlot: Slot = .null

    override func hashInput() -> String {
        "A|\(name)|\(type.rawValue)|\(isOptional)|\(isTransient)" + elements.map { "{" + $0.hashInput() + "}" }.joined()
    }
}
