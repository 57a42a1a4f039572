import Foundation

/// A managed object model: the entities of an object graph, validated and laid out for the store.
///
/// Build one from Swift (`init(entities:)`), a JSON model file (`init(jsonData:)`, see docs/model-format.md) or an
/// Xcode model (`init(contentsOf:)` with an `.xcdatamodeld`, an `.xcdatamodel` or its `contents` file).
/// A model is immutable once built and may be shared across threads.
public final class ManagedObjectModel: @unchecked Sendable {
    /// Entities ordered by entity number (a parent before its sub-entities).
    public let entities: [EntityDescription]
    /// Entities by name.
    public let entitiesByName: [String: EntityDescription]
    /// One table per inheritance root, in entity-number order.
    public let tables: [TableDescription]
    /// Join tables for many-to-many and inverse-less to-many relationships.
    public let joinTables: [JoinTable]
    /// Fetch request templates from the model file: name → (entity, predicate format).
    public let fetchRequestTemplates: [String: (entity: String, predicate: String?)]
    /// Configurations from the model file: name → entity names.
    public let configurations: [String: [String]]
    /// Where the model came from, for error messages.
    public let source: String?
    /// What the loader accepted as Xcode does but a reader should know of (an unreadable default value dropped, a
    /// number read as a Boolean), each naming the entity and attribute; set while the model is loaded.
    public internal(set) var warnings: [ModelError] = []
    /// The model's version identifiers (Xcode's "Identifier" of the version, `NSVersionIdentifiers`), which a store's
    /// metadata keeps as `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String] = [""]
    /// The `.xcdatamodeld` or `.momd` bundle the model was loaded from, and its version's name there.
    public internal(set) var bundle: URL?
    public internal(set) var versionName: String?
    /// By entity number − 1: the entity with its descendants, and the entity alone (the entities a fetch covers,
    /// kept so that a fetch does not build the array).
    let hierarchies: [[EntityDescription]]
    let singles: [[EntityDescription]]
    /// True when some entity has a registered subclass (whose lifecycle hooks saves must call).
    var hasCustomClasses: Bool { entities.contains { $0.hasCustomClass } }

    /// Builds and validates a model from entity descriptions.
    ///
    /// Throws a `ModelError` naming the entity, property and problem for duplicate names, unknown parents or
    /// destinations, inverses that do not point back, and invalid types or defaults.
    public init(entities input: [EntityDescription],
                fetchRequestTemplates: [String: (entity: String, predicate: String?)] = [:],
                configurations: [String: [String]] = [:],
                source: String? = nil) throws {
        self.source = source
        self.fetchRequestTemplates = fetchRequestTemplates
        self.configurations = configurations
        do {
            let built = try ModelBuilder(entities: input).build()
            self.entities = built.entities
            self.tables = built.tables
            self.joinTables = built.joinTables
            self.warnings = built.warnings.map { warning in source.map { warning.from($0) } ?? warning }
        } catch let error as ModelError {
            throw source.map { error.from($0) } ?? error
        }
        var byName: [String: EntityDescription] = [:]
        for entity in entities { byName[entity.name] = entity }
        self.entitiesByName = byName
        hierarchies = entities.map(\.selfAndDescendants)
        singles = entities.map { [$0] }
        for entity in entities { entity.model = self }
        for (name, template) in fetchRequestTemplates where byName[template.entity] == nil {
            throw ModelError(source: source, problem: "fetch request '\(name)' names unknown entity '\(template.entity)'")
        }
    }

    /// The entity named `name`.
    public func entity(named name: String) -> EntityDescription? { entitiesByName[name] }

    /// The entity whose `Z_ENT` is `number`.
    public func entity(number: Int) -> EntityDescription? {
        number >= 1 && number <= entities.count ? entities[number - 1] : nil
    }

    /// Version hashes by entity name (base64 SHA-256), as written to the store's metadata.
    public var versionHashes: [String: String] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.versionHash.base64EncodedString()) })
    }

    /// Registers a typed subclass for an entity; objects of that entity are then created as `type`.
    public func register(_ type: ManagedObject.Type, forEntityName name: String) throws {
        guard let entity = entitiesByName[name] else {
            throw ModelError(source: source, entity: name, problem: "no such entity to register \(type) for")
        }
        entity.register(type)
    }
}
