/// Why a save failed. When a save throws, nothing was written and the context keeps its changes.
public enum SaveError: Error, CustomStringConvertible, Sendable {
    /// Objects failed validation: every failure of the save, together.
    case validation([ValidationFailure])
    /// A Deny delete rule refused a delete: the object still has destinations through the relationship.
    case deleteDenied(object: ManagedObjectID, relationship: String, destinations: Int)
    /// Rows changed or deleted by another context or process since they were read (optimistic locking).
    case conflicts([OptimisticLockingConflict])
    /// Values that must be unique are not.
    case uniquenessViolation([UniquenessViolation])
    /// The store failed.
    case store(StoreError)

    public var description: String {
        switch self {
        case .validation(let failures):
            return "validation failed: " + failures.map(\.description).joined(separator: "; ")
        case .deleteDenied(let object, let relationship, let count):
            return "cannot delete \(object.uriString): its '\(relationship)' relationship (delete rule Deny) still has \(count) object\(count == 1 ? "" : "s")"
        case .conflicts(let conflicts):
            return "optimistic locking failed: " + conflicts.map(\.description).joined(separator: "; ")
        case .uniquenessViolation(let violations):
            return "uniqueness constraint violated: " + violations.map(\.description).joined(separator: "; ")
        case .store(let error):
            return error.description
        }
    }
}

/// One validation failure: the object, key, value and rule.
public struct ValidationFailure: Sendable, CustomStringConvertible, Equatable {
    public let object: ManagedObjectID
    public let key: String
    public let value: String
    public let rule: String

    public var description: String { "\(object.entity.name).\(key) of \(object.uriString) = \(value): \(rule)" }
}

/// A row whose version in the store differs from the one the context read.
public struct OptimisticLockingConflict: Sendable, CustomStringConvertible {
    /// The object.
    public let object: ManagedObjectID
    /// `Z_OPT` as the context read it.
    public let expectedVersion: Int64
    /// `Z_OPT` in the store now, nil when the row was deleted.
    public let persistedVersion: Int64?

    public var description: String {
        let now = persistedVersion.map { "version \($0) in the store" } ?? "deleted from the store"
        return "\(object.uriString) was read at version \(expectedVersion), now \(now)"
    }
}

/// Objects whose constrained values collide with another row.
public struct UniquenessViolation: Sendable, CustomStringConvertible {
    public let object: ManagedObjectID
    public let constraint: [String]
    public let conflictingPrimaryKey: Int64

    public var description: String {
        "\(object.entity.name) (\(constraint.joined(separator: ", "))) of \(object.uriString) duplicates row p\(conflictingPrimaryKey)"
    }
}
