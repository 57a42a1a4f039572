import Foundation

/// A managed object model: the entities of an object graph, validated and laid out for the store.
///
/// Build one from Swift (`init(entities:)`), a JSON model file (`init(jsonData:)`, see docs/model-format.md) or an
/// Xcode model (`init(loadingContentsOf:)`, or Core Data's failable `init?(contentsOf:)`, with an `.xcdatamodeld`, an
/// `.xcdatamodel` or its `contents` file).
/// A model is immutable once built and may be shared across threads.
public final class ManagedObjectModel: @unchecked Sendable {
    // The layout (entity numbers, tables, join tables) is Core Data's for a new store; opening an existing store
    // adopts the store's own before the model is first used (`adoptLayout`), and it is fixed from then on.

    /// Entities ordered by entity number (a parent before its sub-entities).
    @exclusivity(unchecked) public private(set) var entities: [EntityDescription]
    /// Entities by name.
    public let entitiesByName: [String: EntityDescription]
    /// One table per inheritance root, in entity-number order.
    @exclusivity(unchecked) public private(set) var tables: [TableDescription]
    /// Join tables of many-to-many and ordered inverse-less to-many relationships.
    @exclusivity(unchecked) public private(set) var joinTables: [JoinTable]
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
    /// The `.xcdatamodeld` or `.momd` bundle the model was loaded from.
    public internal(set) var bundle: URL?
    /// The model version's name in that bundle.
    public internal(set) var versionName: String?
    /// By entity number − 1: the entity with its descendants, and the entity alone (the entities a fetch covers,
    /// kept so that a fetch does not build the array).
    @exclusivity(unchecked) private(set) var hierarchies: [[EntityDescription]]
    @exclusivity(unchecked) private(set) var singles: [[EntityDescription]]
    /// The descriptions the model was built from, for a new layout.
    private let input: [EntityDescription]
    /// The descriptions the model was built from (a model of one's own, built again, as a relayout does: for merging
    /// freshly loaded models, never a model in use).
    var sourceEntities: [EntityDescription] { input }
    /// Stores opened with the model so far: once one has, its layout no longer changes.
    private var storesOpened = 0
    private let layoutLock = NSLock()
    /// Class names the model gives (`representedClassName`) that no class of this process answers, by entity: their
    /// objects are plain `ManagedObject`s (Core Data logs "Unable to load class named …" and does the same).
    public private(set) var unresolvedClassNames: [String: String] = [:]
    /// True when some entity has a registered subclass (whose lifecycle hooks saves must call).
    var hasCustomClasses: Bool { entities.contains { $0.hasCustomClass } }

    /// An empty model (Core Data's `NSManagedObjectModel()`): what a coordinator made only to destroy, replace or
    /// read a store's files needs.
    public convenience init() {
        // An empty entity list always builds.
        try! self.init(entities: [])
    }

    /// Builds and validates a model from entity descriptions.
    ///
    /// Throws a `ModelError` naming the entity, property and problem for duplicate names, unknown parents or
    /// destinations, inverses that do not point back, and invalid types or defaults.
    public init(entities input: [EntityDescription],
                fetchRequestTemplates: [String: (entity: String, predicate: String?)] = [:],
                configurations: [String: [String]] = [:],
                source: String? = nil) throws {
        self.source = source
        self.input = input
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
        unresolvedClassNames = resolveRepresentedClasses()
        for (entity, attribute, reason) in DerivedAttributeTriggers.triggers(for: self).uncomputed {
            warnings.append(ModelError(source: source, entity: entity, property: attribute,
                                       problem: "derived attribute not computed in stores Faultline creates: \(reason); it is a plain column"))
        }
    }

    /// Takes an existing store's entity numbers and join tables (Core Data keeps them per store) and marks the model
    /// in use; returns the layout it had when this changed it. Throws when they cannot hold (a hierarchy's numbers
    /// not contiguous), or when the model is already in use with a store laid out otherwise.
    @discardableResult
    func adoptLayout(_ layout: StoreLayout?) throws -> StoreLayout? {
        try layoutLock.withLock {
            guard let layout else {
                storesOpened += 1
                return nil
            }
            let current = StoreLayout(of: self)
            var wanted = current
            wanted.entityNumbers = layout.entityNumbers
            wanted.joinTableOwners.merge(layout.joinTableOwners) { $1 }
            wanted.inverselessJoinTables = layout.inverselessJoinTables
            guard wanted != current else {
                storesOpened += 1
                return nil
            }
            guard storesOpened == 0 else {
                throw ModelError(source: source, problem: "the model is in use with a store that numbers its entities or names its many-to-many tables otherwise; load the model again for this store")
            }
            do {
                try relayout(wanted)
            } catch let error as ModelError {
                try relayout(current) // the rules' layout again: the model stays usable for other stores
                throw error
            }
            storesOpened += 1
            return current
        }
    }

    /// Undoes `adoptLayout` for a store that did not open after all: the model is no longer in use by it, and gets
    /// `previous` back when no other store uses it.
    func releaseLayout(restoring previous: StoreLayout?) {
        layoutLock.withLock {
            storesOpened -= 1
            if storesOpened == 0, let previous { try? relayout(previous) }
        }
    }

    private func relayout(_ layout: StoreLayout) throws {
        let built = try ModelBuilder(entities: input, layout: layout).build()
        (entities, tables, joinTables) = (built.entities, built.tables, built.joinTables)
        hierarchies = entities.map(\.selfAndDescendants)
        singles = entities.map { [$0] }
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
    ///
    /// Register before the model's first store opens (Core Data fixes its classes when the model loads): objects
    /// already made are of the class they were made with, and a typed fetch would return them as another.
    public func register(_ type: ManagedObject.Type, forEntityName name: String) throws {
        guard let entity = entitiesByName[name] else {
            throw ModelError(source: source, entity: name, problem: "no such entity to register \(type) for")
        }
        let inUse = layoutLock.withLock { storesOpened > 0 }
        guard !inUse || entity.managedClass == type else {
            throw ModelError(source: source, entity: name, problem: "cannot register \(type) once a store uses the model: objects made since are \(entity.managedClass); register classes before the first store opens")
        }
        entity.register(type)
        unresolvedClassNames[name] = nil
    }
}
