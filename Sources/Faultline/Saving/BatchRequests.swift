import Foundation

/// What a batch request returns.
public enum BatchResultType: Sendable {
    /// Nothing but success.
    case statusOnly
    /// The number of rows changed.
    case count
    /// The IDs of the rows changed (to merge into contexts with `ManagedObjectContext.mergeChanges(fromRemoteSave:into:)`).
    case objectIDs
}

/// The outcome of a batch request.
public struct BatchResult: Sendable {
    /// Rows updated, deleted or inserted (cascaded deletes included).
    public var count: Int
    /// Their IDs, when the request asked for `.objectIDs` (cascaded deletes included); empty otherwise.
    public var objectIDs: [ManagedObjectID]
}

/// Core Data's `NSBatchUpdateRequest`: sets attributes of every row a predicate selects, in SQL, without loading
/// objects. Like Core Data it bypasses contexts, validation and the row cache: registered objects keep their old
/// values until the returned IDs are merged (`mergeChanges(fromRemoteSave:into:)`). Rows get a new `Z_OPT`, so a
/// context saving a stale copy gets a conflict instead of overwriting the batch's values.
public struct BatchUpdateRequest: Sendable {
    /// The entity whose rows the request changes.
    public var entityName: String
    /// The rows it changes (nil: every row of the entity).
    public var predicate: ObjectPredicate?
    /// Whether rows of sub-entities are changed too.
    public var includesSubentities = true
    /// Attribute name → new value (converted as `setValue(_:forKey:)` would; nil sets NULL).
    public var propertiesToUpdate: [String: any Sendable] = [:]
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly

    /// A request on `entityName`'s rows that `predicate` selects.
    public init(entityName: String, predicate: ObjectPredicate? = nil, propertiesToUpdate: [String: any Sendable] = [:]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }
}

/// Core Data's `NSBatchDeleteRequest`: deletes every row a predicate selects, in SQL. Contexts, validation and
/// `prepareForDeletion` are bypassed as in Core Data; relationships are kept consistent in SQL: Deny refuses the
/// whole request when a deleted row has destinations, Cascade deletes the destinations too (their IDs are in the
/// result), Nullify clears the foreign keys pointing at deleted rows, join-table rows go; No Action leaves
/// destinations pointing at nothing, as it does in a save.
public struct BatchDeleteRequest: Sendable {
    /// The entity whose rows the request changes.
    public var entityName: String
    /// The rows it changes (nil: every row of the entity).
    public var predicate: ObjectPredicate?
    /// Whether rows of sub-entities are changed too.
    public var includesSubentities = true
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly

    /// A request on `entityName`'s rows that `predicate` selects.
    public init(entityName: String, predicate: ObjectPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }
}

/// Core Data's `NSBatchInsertRequest`: inserts rows of attribute values in one transaction, without objects. Values
/// are converted and checked as a save checks them (type, optionality, defaults) and uniqueness constraints hold;
/// relationships cannot be set. All or nothing.
public struct BatchInsertRequest: Sendable {
    /// The entity the rows are inserted into.
    public var entityName: String
    /// One dictionary of attribute name → value per row.
    public var objects: [[String: any Sendable]]
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly

    /// A request inserting `objects` as rows of `entityName`.
    public init(entityName: String, objects: [[String: any Sendable]]) {
        self.entityName = entityName
        self.objects = objects
    }
}

/// Why a batch request was refused; nothing was written.
public enum BatchRequestError: Error, CustomStringConvertible, Sendable {
    /// The model has no such entity.
    case unknownEntity(String)
    /// The entity has no such attribute.
    case unknownAttribute(entity: String, key: String)
    /// A value does not fit its attribute: why.
    case invalidValue(entity: String, key: String, problem: String)
    /// Batch insert, row `index`: a required attribute has no value and no default.
    case missingValue(entity: String, key: String, row: Int)
    /// A Deny delete rule: deleted rows still have destinations.
    case denied(entity: String, relationship: String, destinations: Int)
    /// A batch insert would break a uniqueness constraint on these columns.
    case uniquenessViolation(entity: String, columns: [String])
    /// The predicate cannot be compiled.
    case predicate(ObjectPredicateError)
    /// The store failed.
    case store(StoreError)

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        switch self {
        case .unknownEntity(let name): return "batch request: unknown entity '\(name)'"
        case .unknownAttribute(let entity, let key): return "batch request: entity '\(entity)' has no attribute '\(key)' (only attributes can be set in a batch)"
        case .invalidValue(let entity, let key, let problem): return "batch request: \(entity).\(key): \(problem)"
        case .missingValue(let entity, let key, let row): return "batch insert, object \(row): \(entity).\(key) is required and has no value or default"
        case .denied(let entity, let relationship, let destinations):
            return "batch delete refused: \(entity).\(relationship) has the Deny rule and \(destinations) destination\(destinations == 1 ? "" : "s") (nothing was deleted)"
        case .uniquenessViolation(let entity, let columns): return "batch insert refused: rows of \(entity) would share (\(columns.joined(separator: ", "))), a uniqueness constraint (nothing was inserted)"
        case .predicate(let error): return "batch request: \(error)"
        case .store(let error): return "batch request: \(error)"
        }
    }
}
