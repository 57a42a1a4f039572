import Foundation

/// Custom code for one entity's migration step (Core Data's `NSEntityMigrationPolicy`), for what an inferred mapping
/// cannot do: creating objects of a new entity from old values, filling a new required relationship, transforming
/// values. The step first copies every object as inferred (each keeps its key); then, for the entity the policy is
/// set for, it calls `createDestinationInstances(forSource:in:)` once per old object, and afterwards
/// `createRelationships(forDestination:in:)` once per migrated object. Objects created and changed in
/// `migration.context` are saved into the new store before the step's checks (required values, uniqueness) run.
public protocol EntityMigrationPolicy: Sendable {
    /// Core Data's `createDestinationInstances(forSource:in:manager:)`.
    func createDestinationInstances(forSource source: MigrationSource, in migration: MigrationContext) throws
    /// Core Data's `createRelationships(forDestination:in:manager:)`.
    func createRelationships(forDestination destination: ManagedObject, in migration: MigrationContext) throws
}

extension EntityMigrationPolicy {
    /// By default nothing more than the mapping does.
    public func createDestinationInstances(forSource source: MigrationSource, in migration: MigrationContext) throws {}
    /// By default nothing more than the mapping does.
    public func createRelationships(forDestination destination: ManagedObject, in migration: MigrationContext) throws {}
}

/// An object of the old version, as stored: its attribute values by name, its to-one destinations by key.
public struct MigrationSource: @unchecked Sendable {
    /// The old entity's name.
    public let entity: String
    /// The object's key (`Z_PK`, kept by the migrated object).
    public let key: Int64
    let values: [String: Any]

    /// An attribute's value (nil when unset), or a to-one relationship's destination key (`Int64`).
    public subscript(_ property: String) -> Any? { values[property] }
}

/// What a policy works with: the new store's context, and the migrated object of an old one.
public final class MigrationContext: @unchecked Sendable {
    /// A context on the new store (use it on its queue: `performAndWait`).
    public let context: ManagedObjectContext
    /// The version the step reads.
    public let from: String
    /// The version it writes.
    public let to: String

    init(context: ManagedObjectContext, from: String, to: String) {
        self.context = context
        self.from = from
        self.to = to
    }

    /// The object the migration made of `source` (same key), if its entity was carried over; call on the context's
    /// queue.
    public func destination(for source: MigrationSource, entity: String) throws -> ManagedObject? {
        guard let description = context.model.entity(named: entity) else { return nil }
        let id = ManagedObjectID(entity: description, key: source.key, storeIdentifier: context.coordinator.storeIdentifier)
        return try? context.existingObject(with: id)
    }
}

/// The policies of a migration: per step (the version it migrates to) and destination entity.
public struct MigrationPolicies: Sendable {
    var policies: [String: [String: any EntityMigrationPolicy]] = [:]

    /// No policies.
    public init() {}

    /// Uses `policy` for the objects of `sourceEntity` (an entity of the old version) when migrating to `version`.
    public mutating func set(_ policy: any EntityMigrationPolicy, forEntity sourceEntity: String, migratingTo version: String) {
        policies[version, default: [:]][sourceEntity] = policy
    }

    /// Uses `policy` where a mapping model names the class `className` (Core Data's `NSEntityMigrationPolicy`
    /// subclass; its module prefix ignored).
    public mutating func set(_ policy: any EntityMigrationPolicy, forClassName className: String) {
        byClassName[String(className.split(separator: ".").last ?? Substring(className))] = policy
    }

    var byClassName: [String: any EntityMigrationPolicy] = [:]

    func policies(migratingTo version: String) -> [String: any EntityMigrationPolicy] { policies[version] ?? [:] }
}
