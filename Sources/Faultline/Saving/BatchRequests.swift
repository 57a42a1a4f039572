import Foundation

/// What a batch request returns (Core Data's `NSBatchUpdateRequestResultType`, `NSBatchDeleteRequestResultType` and
/// `NSBatchInsertRequestResultType`, one type here: each of Core Data's case names is a name of one of these).
public enum BatchResultType: Sendable {
    /// Nothing but success.
    case statusOnly
    /// The number of rows changed.
    case count
    /// The IDs of the rows changed (to merge into contexts with `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)`).
    case objectIDs

    /// `NSBatchUpdateRequestResultType.statusOnlyResultType`.
    public static let statusOnlyResultType = BatchResultType.statusOnly
    /// `NSBatchUpdateRequestResultType.updatedObjectIDsResultType`.
    public static let updatedObjectIDsResultType = BatchResultType.objectIDs
    /// `NSBatchUpdateRequestResultType.updatedObjectsCountResultType`.
    public static let updatedObjectsCountResultType = BatchResultType.count
    /// `NSBatchDeleteRequestResultType.resultTypeStatusOnly`.
    public static let resultTypeStatusOnly = BatchResultType.statusOnly
    /// `NSBatchDeleteRequestResultType.resultTypeObjectIDs`.
    public static let resultTypeObjectIDs = BatchResultType.objectIDs
    /// `NSBatchDeleteRequestResultType.resultTypeCount`.
    public static let resultTypeCount = BatchResultType.count
}

/// Core Data's `NSBatchUpdateRequestResultType`.
public typealias BatchUpdateRequestResultType = BatchResultType
/// Core Data's `NSBatchDeleteRequestResultType`.
public typealias BatchDeleteRequestResultType = BatchResultType
/// Core Data's `NSBatchInsertRequestResultType`.
public typealias BatchInsertRequestResultType = BatchResultType

/// A request a context executes against its store (Core Data's `NSPersistentStoreRequest`): the batch requests.
public class PersistentStoreRequest: @unchecked Sendable {
    init() {}
}

/// What a batch request returned (Core Data's `NSPersistentStoreResult` and its batch results).
public class PersistentStoreResult: @unchecked Sendable {
    init() {}
}

/// The outcome of a batch request.
public class BatchResult: PersistentStoreResult {
    /// Rows updated, deleted or inserted (cascaded deletes included).
    public let count: Int
    /// Their IDs, when the request asked for `.objectIDs` (cascaded deletes included); empty otherwise.
    public let objectIDs: [ManagedObjectID]
    /// What the request asked for.
    public let resultType: BatchResultType

    /// Core Data's `result`: `true` for `.statusOnly`, the count (an `Int`) for `.count`, the IDs
    /// (`[ManagedObjectID]`) for `.objectIDs`.
    public var result: Any? {
        switch resultType {
        case .statusOnly: return true
        case .count: return count
        case .objectIDs: return objectIDs
        }
    }

    required init(count: Int, objectIDs: [ManagedObjectID], resultType: BatchResultType) {
        self.count = count
        self.objectIDs = objectIDs
        self.resultType = resultType
    }
}

/// Core Data's `NSBatchUpdateResult`.
public final class BatchUpdateResult: BatchResult {}
/// Core Data's `NSBatchDeleteResult`.
public final class BatchDeleteResult: BatchResult {}
/// Core Data's `NSBatchInsertResult`.
public final class BatchInsertResult: BatchResult {}

/// Core Data's `NSBatchUpdateRequest`: sets attributes of every row a predicate selects, in SQL, without loading
/// objects. Like Core Data it bypasses contexts, validation and the row cache: registered objects keep their old
/// values until the returned IDs are merged (`mergeChanges(fromRemoteContextSave:into:)`). Rows get a new `Z_OPT`,
/// so a context saving a stale copy gets a conflict instead of overwriting the batch's values.
///
/// A class, as Core Data's: configure it after making it. Not locked: configure it on one thread at a time.
public final class BatchUpdateRequest: PersistentStoreRequest {
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

    /// Core Data's `init(entity:)`.
    public convenience init(entity: EntityDescription) {
        self.init(entityName: entity.name)
    }
}

/// Core Data's `NSBatchDeleteRequest`: deletes every row a predicate selects, in SQL. Contexts, validation and
/// `prepareForDeletion` are bypassed as in Core Data; relationships are kept consistent in SQL: Deny refuses the
/// whole request when a deleted row has destinations, Cascade deletes the destinations too (their IDs are in the
/// result), Nullify clears the foreign keys pointing at deleted rows, join-table rows go; No Action leaves
/// destinations pointing at nothing, as it does in a save.
public final class BatchDeleteRequest: PersistentStoreRequest {
    /// Core Data's `fetchRequest`: the entity and predicate whose rows go (its sorting and limits do not apply to a
    /// batch delete; Core Data ignores them too). Changing it changes the request.
    public let fetchRequest: FetchRequest<FetchRequestResult>
    /// The entity whose rows the request changes (the fetch request's).
    public var entityName: String {
        get { fetchRequest.entityName }
        set { fetchRequest.spec.entityName = newValue }
    }
    /// The rows it changes (nil: every row of the entity; the fetch request's).
    public var predicate: ObjectPredicate? {
        get { fetchRequest.predicate }
        set { fetchRequest.predicate = newValue }
    }
    /// Whether rows of sub-entities are changed too (the fetch request's).
    public var includesSubentities: Bool {
        get { fetchRequest.includesSubentities }
        set { fetchRequest.includesSubentities = newValue }
    }
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly
    /// Only these objects, when made with `init(objectIDs:)`.
    public private(set) var objectIDs: [ManagedObjectID]?

    /// A request on `entityName`'s rows that `predicate` selects.
    public init(entityName: String, predicate: ObjectPredicate? = nil) {
        fetchRequest = FetchRequest<FetchRequestResult>(entityName: entityName, predicate: predicate)
    }

    /// Core Data's `init(fetchRequest:)`: the rows the request's entity and predicate select (a copy of it, made
    /// now).
    public init<T>(fetchRequest: FetchRequest<T>) {
        self.fetchRequest = FetchRequest<FetchRequestResult>(spec: fetchRequest.spec)
    }

    /// Core Data's `init(objectIDs:)`: these objects' rows (of one entity hierarchy; another's are refused when the
    /// request runs).
    public init(objectIDs: [ManagedObjectID]) {
        fetchRequest = FetchRequest<FetchRequestResult>(entityName: objectIDs.first?.entity.root.name ?? "")
        self.objectIDs = objectIDs
    }
}

/// Core Data's `NSBatchInsertRequest`: inserts rows of attribute values in one transaction, without objects. Values
/// are converted and checked as a save checks them (type, optionality, defaults) and uniqueness constraints hold;
/// relationships cannot be set. All or nothing.
public final class BatchInsertRequest: PersistentStoreRequest {
    /// The entity the rows are inserted into.
    public var entityName: String
    /// One dictionary of attribute name → value per row.
    public var objects: [[String: any Sendable]]
    /// What the result holds.
    public var resultType: BatchResultType = .statusOnly
    /// Core Data's `dictionaryHandler`: called for each row with an empty dictionary to fill; returning true ends the
    /// rows (that call's dictionary is not inserted), as in Core Data.
    public var dictionaryHandler: ((NSMutableDictionary) -> Bool)?
    /// Core Data's `managedObjectHandler`: called for each row with a new object of the entity (in no context) to
    /// fill; returning true ends the rows (that call's object is not inserted). Its attributes become the row.
    public var managedObjectHandler: ((ManagedObject) -> Bool)?

    /// The most rows a handler may give one request (a handler that never returns true is an error, not a hang or
    /// a process out of memory: the rows wait in memory for the one transaction).
    public static let maximumHandlerRows = 1_000_000
    /// `maximumHandlerRows`, lowered by tests to reach the limit quickly.
    var handlerRowLimit = BatchInsertRequest.maximumHandlerRows

    /// A request inserting `objects` as rows of `entityName`.
    public init(entityName: String, objects: [[String: any Sendable]]) {
        self.entityName = entityName
        self.objects = objects
    }

    /// Core Data's `init(entity:objects:)`.
    public convenience init(entity: EntityDescription, objects: [[String: any Sendable]]) {
        self.init(entityName: entity.name, objects: objects)
    }

    /// Core Data's `init(entityName:dictionaryHandler:)`: the rows come from `handler`, one call a row.
    public init(entityName: String, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.entityName = entityName
        self.objects = []
        self.dictionaryHandler = handler
    }

    /// Core Data's `init(entityName:managedObjectHandler:)`: the rows come from objects `handler` fills, one call a row.
    public init(entityName: String, managedObjectHandler handler: @escaping (ManagedObject) -> Bool) {
        self.entityName = entityName
        self.objects = []
        self.managedObjectHandler = handler
    }

    /// Core Data's `init(entity:managedObjectHandler:)`.
    public convenience init(entity: EntityDescription, managedObjectHandler handler: @escaping (ManagedObject) -> Bool) {
        self.init(entityName: entity.name, managedObjectHandler: handler)
    }

    /// Core Data's `init(entity:dictionaryHandler:)`.
    public convenience init(entity: EntityDescription, dictionaryHandler handler: @escaping (NSMutableDictionary) -> Bool) {
        self.init(entityName: entity.name, dictionaryHandler: handler)
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
    /// A `dictionaryHandler` or `managedObjectHandler` gave more rows than `BatchInsertRequest.maximumHandlerRows` without returning true.
    case tooManyRows(entity: String, limit: Int)
    /// `init(objectIDs:)` was given objects of two entity hierarchies.
    case mixedEntities(String, String)
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
        case .tooManyRows(let entity, let limit): return "batch insert into \(entity): the dictionary handler gave \(limit) rows without returning true (nothing was inserted)"
        case .mixedEntities(let a, let b): return "batch delete by object IDs: the IDs are of \(a) and of \(b); one request deletes one entity's rows"
        case .denied(let entity, let relationship, let destinations):
            return "batch delete refused: \(entity).\(relationship) has the Deny rule and \(destinations) destination\(destinations == 1 ? "" : "s") (nothing was deleted)"
        case .uniquenessViolation(let entity, let columns): return "batch insert refused: rows of \(entity) would share (\(columns.joined(separator: ", "))), a uniqueness constraint (nothing was inserted)"
        case .predicate(let error): return "batch request: \(error)"
        case .store(let error): return "batch request: \(error)"
        }
    }
}
