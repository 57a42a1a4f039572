/// Why a save failed. When a save throws, nothing was written and the context keeps its changes.
public enum SaveError: Error, CustomStringConvertible, Sendable {
    /// Objects failed validation: every failure of the save, together.
    case validation([ValidationFailure])
    /// A Deny delete rule refused a delete: the object still has destinations through the relationship.
    case deleteDenied(object: ManagedObjectID, relationship: String, destinations: Int)
    /// Rows changed or deleted by another context or process since they were read (optimistic locking), left
    /// unresolved by the context's merge policy (the default, `.error`, resolves nothing).
    case conflicts([MergeConflict])
    /// Values that must be unique are not (uniqueness constraints), left unresolved by the merge policy.
    case constraintConflicts([ConstraintConflict])
    /// The store failed.
    case store(StoreError)
    /// `willSave()` hooks kept changing objects for `Limits.willSaveRounds` rounds (Core Data's "still dirty after
    /// 100 attempts").
    case stillDirty(rounds: Int)

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        switch self {
        case .validation(let failures):
            return "validation failed: " + failures.map(\.description).joined(separator: "; ")
        case .deleteDenied(let object, let relationship, let count):
            return "cannot delete \(object.uriString): its '\(relationship)' relationship (delete rule Deny) still has \(count) object\(count == 1 ? "" : "s")"
        case .conflicts(let conflicts):
            return "optimistic locking failed: " + conflicts.map(\.description).joined(separator: "; ")
        case .constraintConflicts(let conflicts):
            return "uniqueness constraint violated: " + conflicts.map(\.description).joined(separator: "; ")
        case .store(let error):
            return error.description
        case .stillDirty(let rounds):
            return "the context is still dirty after \(rounds) rounds of willSave(): a hook keeps changing objects (Limits.willSaveRounds)"
        }
    }
}

/// One validation failure: the object, key, value and rule. Custom validation (`validateForInsert` and the like)
/// throws these.
public struct ValidationFailure: Error, Sendable, CustomStringConvertible, Equatable {
    /// The object that failed.
    public let object: ManagedObjectID
    /// The property whose value failed.
    public let key: String
    /// The value, as text.
    public let value: String
    /// The rule it broke, in words.
    public let rule: String

    /// A failure of `object`'s `key`.
    public init(object: ManagedObjectID, key: String, value: String, rule: String) {
        self.object = object
        self.key = key
        self.value = value
        self.rule = rule
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String { "\(object.entity.name).\(key) of \(object.uriString) = \(value): \(rule)" }
}
