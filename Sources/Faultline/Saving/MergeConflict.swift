/// A row's values at one level of the stack (Core Data's snapshot dictionaries): attributes by name.
public struct Snapshot: Sendable, CustomStringConvertible {
    /// The row's entity.
    public let entity: EntityDescription
    let values: [Slot]

    init(entity: EntityDescription, values: [Slot]) {
        self.entity = entity
        self.values = values
    }

    init(entity: EntityDescription, values: SlotRow) { self.init(entity: entity, values: values.array) }

    /// The value of the attribute `key` (nil for nil values, relationships and unknown keys).
    public subscript(key: String) -> Any? {
        guard let attribute = entity.attribute(named: key), !attribute.isTransient, attribute.index < values.count else { return nil }
        return ValueCoding.value(of: values[attribute.index], type: attribute.type, transformer: attribute.valueTransformerName)
    }

    /// The names of the stored attributes.
    public var keys: [String] { entity.attributes.filter { !$0.isTransient }.map(\.name) }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        "{" + keys.map { "\($0) = \(self[$0].map { "\($0)" } ?? "nil")" }.joined(separator: "; ") + "}"
    }
}

/// An optimistic-locking conflict (Core Data's `NSMergeConflict`): an object whose row changed or went away since
/// the context read it.
///
/// Where the conflict arose decides which snapshots exist: between the context and the coordinator's row cache
/// (another context on the same coordinator saved) `persistedSnapshot` is nil; between the row cache and the store
/// (another coordinator or process saved) `objectSnapshot` is nil.
public struct MergeConflict: Sendable, CustomStringConvertible {
    /// The conflicting object (Core Data's `sourceObject`; get it on the context's queue with `object(with:)`).
    public let object: ManagedObjectID
    /// The values the context last read or saved.
    public var objectSnapshot: Snapshot?
    /// The values in the coordinator's row cache.
    public var cachedSnapshot: Snapshot?
    /// The values in the store now; nil when the row was deleted.
    public var persistedSnapshot: Snapshot?
    /// `Z_OPT` as the context read it.
    public let oldVersionNumber: Int64
    /// `Z_OPT` now (0 when the row was deleted).
    public var newVersionNumber: Int64

    init(object: ManagedObjectID, oldVersionNumber: Int64, newVersionNumber: Int64) {
        self.object = object
        self.oldVersionNumber = oldVersionNumber
        self.newVersionNumber = newVersionNumber
    }

    /// True when the row no longer exists.
    public var rowWasDeleted: Bool { newVersionNumber == 0 }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        let now = rowWasDeleted ? "deleted from the store" : "version \(newVersionNumber) in the store"
        return "\(object.uriString) was read at version \(oldVersionNumber), now \(now)"
    }
}

/// A uniqueness-constraint conflict (Core Data's `NSConstraintConflict`): an object whose constrained values are
/// also another object's, in the same save or in the store.
public struct ConstraintConflict: Sendable, CustomStringConvertible {
    /// The constrained properties.
    public let constraint: [String]
    /// The object being saved.
    public let object: ManagedObjectID
    /// The stored row with the same values, for a conflict with the store.
    public let databaseObject: ManagedObjectID?
    /// The other object of the same save with the same values, for a conflict inside the context.
    public let conflictingObject: ManagedObjectID?

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        let other = conflictingObject.map { "\($0.uriString) of the same save" } ?? databaseObject.map { "stored \($0.uriString)" } ?? "another row"
        return "\(object.entity.name) (\(constraint.joined(separator: ", "))) of \(object.uriString) duplicates \(other)"
    }
}
