/// How a save resolves conflicts: Core Data's five predefined merge policies.
public enum MergePolicyType: Sendable, Equatable {
    /// Resolves nothing: the save throws `SaveError.conflicts` / `.constraintConflicts` and writes nothing.
    case error
    /// The conflicting objects' changes are discarded; the rest of the save is written.
    case rollback
    /// The context's objects are written whole over the stored rows (every column, not only the changed ones).
    case overwrite
    /// Per property: changed in the store only → the store's value; in the context only → the context's; in both
    /// → the store's.
    case mergeByPropertyStoreTrump
    /// The same, but a property changed in both keeps the context's value.
    case mergeByPropertyObjectTrump
}

/// A context's merge policy (`context.mergePolicy`). Subclass it to build on a predefined policy, as Core Data's
/// `NSMergePolicy` subclasses do: override a `resolve` method, call `super` first, then adjust the objects.
open class MergePolicy: @unchecked Sendable {
    /// The predefined policy this one builds on.
    public let type: MergePolicyType

    /// A policy of `type` (subclass it to resolve conflicts in code of your own).
    public init(merge type: MergePolicyType) {
        self.type = type
    }

    /// Core Data's `NSErrorMergePolicy`: the save fails with the conflicts.
    public static let error = MergePolicy(merge: .error)
    /// Core Data's `NSRollbackMergePolicy`: the store's values win, the context's changes to conflicting objects go.
    public static let rollback = MergePolicy(merge: .rollback)
    /// Core Data's `NSOverwriteMergePolicy`: the context's values overwrite the store's.
    public static let overwrite = MergePolicy(merge: .overwrite)
    /// Core Data's `NSMergeByPropertyStoreTrumpMergePolicy`: property by property, the store's changes win.
    public static let mergeByPropertyStoreTrump = MergePolicy(merge: .mergeByPropertyStoreTrump)
    /// Core Data's `NSMergeByPropertyObjectTrumpMergePolicy`: property by property, the context's changes win.
    public static let mergeByPropertyObjectTrump = MergePolicy(merge: .mergeByPropertyObjectTrump)

    /// Resolves optimistic-locking conflicts by changing the context's objects (runs on the context's queue);
    /// the save then tries again. Throwing fails the save, as the error policy does.
    open func resolve(optimisticLockingConflicts conflicts: [MergeConflict], in context: ManagedObjectContext) throws {
        guard type != .error else { throw SaveError.conflicts(conflicts) }
        context.resolveLockingConflicts(conflicts, as: type)
    }

    /// Resolves uniqueness-constraint conflicts by changing the context's objects; the save then tries again.
    /// Duplicates within one save: the object inserted first stays, the others' relationships move to it and they
    /// are deleted (every policy but `.error`). Against a stored row: rollback and store-trump drop the context's
    /// object (or its change), overwrite deletes the stored object, object-trump merges the context's object's other
    /// changes into the stored object and drops the new one.
    open func resolve(constraintConflicts conflicts: [ConstraintConflict], in context: ManagedObjectContext) throws {
        guard type != .error else { throw SaveError.constraintConflicts(conflicts) }
        try context.resolveConstraintConflicts(conflicts, as: type)
    }
}

/// Core Data's `NSErrorMergePolicy` constant (`context.mergePolicy = ErrorMergePolicy`): `MergePolicy.error`.
public let ErrorMergePolicy = MergePolicy.error
/// Core Data's `NSRollbackMergePolicy` constant: `MergePolicy.rollback`.
public let RollbackMergePolicy = MergePolicy.rollback
/// Core Data's `NSOverwriteMergePolicy` constant: `MergePolicy.overwrite`.
public let OverwriteMergePolicy = MergePolicy.overwrite
/// Core Data's `NSMergeByPropertyStoreTrumpMergePolicy` constant: `MergePolicy.mergeByPropertyStoreTrump`.
public let MergeByPropertyStoreTrumpMergePolicy = MergePolicy.mergeByPropertyStoreTrump
/// Core Data's `NSMergeByPropertyObjectTrumpMergePolicy` constant: `MergePolicy.mergeByPropertyObjectTrump`.
public let MergeByPropertyObjectTrumpMergePolicy = MergePolicy.mergeByPropertyObjectTrump
