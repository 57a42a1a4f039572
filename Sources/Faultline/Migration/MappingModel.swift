import Foundation

/// How the objects of one model version become objects of the next (Core Data's `NSMappingModel`): per destination
/// entity, the source entity its objects come from, and per property where its value comes from.
public struct MappingModel: Sendable {
    /// The objects of one destination entity.
    public struct EntityMapping: Sendable {
        /// The source entity, nil for an entity the new version adds (it starts empty).
        public let source: String?
        /// The destination entity.
        public let destination: String
        /// Where each destination attribute's value comes from.
        public var attributes: [AttributeMapping]
        /// Where each destination relationship's links come from.
        public var relationships: [RelationshipMapping]
        /// The source entity's own stored properties the new version drops.
        public var removed: [String] = []
        /// The mapping's name in a mapping model (`CarToCar`).
        public var name: String?
        /// The policy class it names, without its module.
        public var policyClassName: String?

        /// An entity mapping written in Swift (as Xcode's mapping model editor would write one): the objects of
        /// `source` (each keeps its key) become objects of `destination`.
        public init(name: String? = nil, source: String?, destination: String, attributes: [AttributeMapping],
                    relationships: [RelationshipMapping], policyClassName: String? = nil) {
            self.name = name
            self.source = source
            self.destination = destination
            self.attributes = attributes
            self.relationships = relationships
            self.policyClassName = policyClassName
        }
    }

    /// Where a destination attribute's value comes from.
    public struct AttributeMapping: Sendable {
        /// The destination attribute.
        public let destination: String
        /// The source attribute (`$source.<name>`), nil for an attribute the new version adds (its default, else nil).
        public let source: String?
        /// How the value changes type on the way, if it does.
        public let conversion: Conversion

        /// A mapping of `destination` from `source`, converted as `conversion` says.
        public init(destination: String, source: String?, conversion: Conversion = .none) {
            self.destination = destination
            self.source = source
            self.conversion = conversion
        }
    }

    /// A value's change of type that an inferred mapping allows.
    public enum Conversion: String, Sendable {
        /// The value keeps its type.
        case none
        /// Between integer widths, booleans, and to doubles, floats or decimals: a value out of the destination's
        /// range stops the migration, naming the object.
        case number
        /// A number or Boolean written as text.
        case toString
        /// Text read as a number (a value that is not one stops the migration, naming the object).
        case fromString
    }

    /// Where a destination relationship's links come from.
    public struct RelationshipMapping: Sendable {
        /// The destination relationship.
        public let destination: String
        /// The source relationship, nil for a relationship the new version adds (it starts empty, unless its
        /// inverse was there), or `MappingModel.sourceObject`: the object another entity mapping made of this same
        /// source object (`FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PostToColor", $source)`).
        public let source: String?

        /// A mapping of `destination` from `source`.
        public init(destination: String, source: String?) {
            self.destination = destination
            self.source = source
        }
    }

    /// A relationship mapping's source meaning the source object itself (`$source`).
    public static let sourceObject = "$source"

    /// One mapping per destination entity.
    public var entityMappings: [EntityMapping]
    /// Source entities whose objects the new version drops.
    public var removedEntities: [String]

    /// A mapping model written in Swift; `faultline`'s migration fills in conversions and what it drops when it uses it.
    public init(entityMappings: [EntityMapping], removedEntities: [String] = []) {
        self.entityMappings = entityMappings
        self.removedEntities = removedEntities
    }

    /// What the mapping does, a line per change (for `faultline migrate --dry-run`).
    public var changes: [String] {
        var lines: [String] = []
        for mapping in entityMappings {
            guard let source = mapping.source else {
                lines.append("+ entity \(mapping.destination) (new\(mapping.policyClassName.map { ", policy \($0)" } ?? ", empty"))")
                continue
            }
            var changed: [String] = []
            for attribute in mapping.attributes {
                switch (attribute.source, attribute.conversion) {
                case (nil, _): changed.append("+ \(attribute.destination)")
                case (let from?, .none) where from != attribute.destination: changed.append("\(from) → \(attribute.destination)")
                case (let from?, let conversion) where conversion != .none:
                    changed.append("\(from)\(from == attribute.destination ? "" : " → \(attribute.destination)") (\(conversion.rawValue) conversion)")
                default: break
                }
            }
            for relationship in mapping.relationships {
                switch relationship.source {
                case nil: changed.append("+ \(relationship.destination) (relationship)")
                case let from? where from != relationship.destination: changed.append("\(from) → \(relationship.destination) (relationship)")
                default: break
                }
            }
            changed += mapping.removed.map { "- \($0)" }
            if let policy = mapping.policyClassName { changed.append("policy \(policy)") }
            let header = source == mapping.destination ? "entity \(source)" : "entity \(source) → \(mapping.destination)"
            lines.append(header + (changed.isEmpty ? ": copied" : ": " + changed.joined(separator: ", ")))
        }
        for removed in removedEntities { lines.append("- entity \(removed) (its objects are dropped)") }
        return lines
    }
}

/// A migration that cannot be done: the entity, the property and why, or the objects whose data the new version
/// does not allow. Nothing has been written when it is thrown.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    /// The entity the problem is about, if one.
    public let entity: String?
    /// The property, if one.
    public let property: String?
    /// What is wrong.
    public let problem: String

    /// An error about `problem`, naming the entity and property when given.
    public init(entity: String? = nil, property: String? = nil, problem: String) {
        self.entity = entity
        self.property = property
        self.problem = problem
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        var text = "migration"
        if let entity { text += ", entity '\(entity)'" }
        if let property { text += ", property '\(property)'" }
        return text + ": " + problem
    }
}
