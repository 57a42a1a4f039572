/// A description of objects to fetch: an entity (with or without its sub-entities), a predicate, an order, a
/// limit and offset, optionally narrowed to object IDs.
public struct FetchRequest<Result: ManagedObject>: Sendable {
    /// The entity to fetch.
    public var entityName: String
    /// Which objects (all when nil).
    public var predicate: ObjectPredicate?
    /// The order, first key first (store order when empty).
    public var sortDescriptors: [FetchSortDescriptor] = []
    /// Whether objects of sub-entities are included (default true).
    public var includesSubentities = true
    /// Whether objects come back as faults whose data waits in the row cache (default true, as Core Data).
    public var returnsObjectsAsFaults = true
    /// Whether unsaved inserts are included and unsaved deletes left out (default true).
    public var includesPendingChanges = true
    /// At most this many objects from the store (0 = no limit).
    public var fetchLimit = 0
    /// Skip this many rows of the store's result.
    public var fetchOffset = 0
    /// Only these objects, when set.
    public var objectIDs: [ManagedObjectID]?
    /// When false, only object IDs are read and every object is a fault that reads its own row when touched
    /// (default true: rows go to the row cache with the fetch).
    public var includesPropertyValues = true
    /// When above zero, the fetch reads only IDs; the objects are faults, fulfilled a batch of this many at a
    /// time (one statement per batch) when one of them is touched.
    public var fetchBatchSize = 0
    /// Relationship key paths (`"department"`, `"residents.car"`) whose destinations are fetched with the
    /// result: one statement per relationship and level, instead of one fault per object.
    public var relationshipKeyPathsForPrefetching: [String] = []
    /// For dictionary fetches: the columns (all stored attributes when nil).
    public var propertiesToFetch: [PropertyToFetch]?
    /// For dictionary fetches: leave out duplicate rows.
    public var returnsDistinctResults = false
    /// For dictionary fetches: one row per distinct value of these key paths.
    public var propertiesToGroupBy: [String] = []
    /// For grouped dictionary fetches: which groups to keep; may name aggregate columns.
    public var havingPredicate: ObjectPredicate?

    /// A request for objects of the entity named `entityName`.
    public init(entityName: String, predicate: ObjectPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}

extension FetchRequest {
    /// The same request, for another result class. `Result` is a class and only tags the request, so every
    /// `FetchRequest` has one layout: this is one copy of the whole value, not a copy of each property through a
    /// generic `Other` (which cost about 2,000 instructions a fetch when called from another module).
    init<Other>(_ other: FetchRequest<Other>) {
        self = unsafeBitCast(other, to: FetchRequest<Result>.self)
    }
}

extension FetchRequest where Result: ManagedObject {
    /// A request for a typed subclass's entity (`Result.entityName`).
    public init(predicate: ObjectPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        self.init(entityName: Result.entityName, predicate: predicate, sortDescriptors: sortDescriptors)
    }
}

/// Why a fetch could not run.
public enum FetchError: Error, CustomStringConvertible, Sendable {
    /// The model has no such entity; `known` names the entities it has.
    case unknownEntity(String, known: [String])
    /// Objects of the entity are not of the requested class: `actual` is the class they are made of, and
    /// `unresolvedClassName` the model's class name for the entity when no class of this process answers it.
    case resultTypeMismatch(entity: String, expected: String, actual: String, unresolvedClassName: String?)
    /// The predicate or sort cannot be used with this entity.
    case predicate(ObjectPredicateError)
    /// The store failed.
    case store(StoreError)

    /// The most entity names an unknown-entity error lists.
    static let entitiesListed = 40

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        switch self {
        case .predicate(let error): return "fetch request: \(error)"
        case .unknownEntity(let name, let known):
            let shown = known.prefix(FetchError.entitiesListed).joined(separator: ", ")
            let more = known.count > FetchError.entitiesListed ? " and \(known.count - FetchError.entitiesListed) more" : ""
            // `FetchRequest<ManagedObject>()` takes the class's name: it names no entity (Core Data's needs one too).
            let hint = name == ManagedObject.entityName ? "; a request for ManagedObject needs an entity: FetchRequest(entityName:)" : ""
            return "fetch request: the model has no entity named '\(name)' (its entities: \(known.isEmpty ? "none" : shown + more))\(hint)"
        case .resultTypeMismatch(let entity, let expected, let actual, let unresolved):
            let why = unresolved.map { "the model names class '\($0)', found in no module of ManagedObjectModel.classModules (\(ManagedObjectModel.classModules.joined(separator: ", "))): add its module, or register it with model.register(_:forEntityName:)" }
                ?? "register \(expected) for it with model.register(_:forEntityName:), or give the model its class name"
            return "fetch request: objects of '\(entity)' are \(actual), not \(expected) — \(why)"
        case .store(let error): return error.description
        }
    }
}
