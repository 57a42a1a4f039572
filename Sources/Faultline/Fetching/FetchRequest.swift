import Foundation

/// A fetch request's settings as one value: what the engine reads, copied once a fetch, so that the request (a
/// class, shared by reference) can change meanwhile without changing the fetch.
struct FetchSpec: Sendable {
    var entityName: String
    var predicate: ObjectPredicate?
    var sortDescriptors: [FetchSortDescriptor] = []
    var includesSubentities: Bool = true
    var returnsObjectsAsFaults: Bool = true
    var includesPendingChanges: Bool = true
    var shouldRefreshRefetchedObjects: Bool = false
    var fetchLimit: Int = 0
    var fetchOffset: Int = 0
    var objectIDs: [ManagedObjectID]?
    var includesPropertyValues: Bool = true
    var fetchBatchSize: Int = 0
    var relationshipKeyPathsForPrefetching: [String] = []
    var propertiesToFetch: [PropertyToFetch]?
    var returnsDistinctResults: Bool = false
    var propertiesToGroupBy: [String] = []
    var havingPredicate: ObjectPredicate?
    /// Set by `resultType`; nil: the request's `Result` decides.
    var resultType: FetchRequestResultType?

    init(entityName: String, predicate: ObjectPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}

/// A description of objects to fetch (Core Data's `NSFetchRequest`): an entity (with or without its sub-entities), a
/// predicate, an order, a limit and offset, optionally narrowed to object IDs.
///
/// A class, as Core Data's: helpers configure a request they are given, and `let request = …; request.fetchLimit = 1`
/// works. A fetch reads the request once, when it starts. Like Core Data's, a request is not locked: configure it on
/// one thread at a time (`copy()` gives an independent one).
public final class FetchRequest<Result>: @unchecked Sendable {
    /// The settings, read once by each fetch.
    var spec: FetchSpec

    /// The entity to fetch.
    public var entityName: String {
        get { spec.entityName }
        set { spec.entityName = newValue }
    }
    /// Which objects (all when nil).
    public var predicate: ObjectPredicate? {
        get { spec.predicate }
        set { spec.predicate = newValue }
    }
    /// The order, first key first (store order when empty).
    public var sortDescriptors: [FetchSortDescriptor] {
        get { spec.sortDescriptors }
        set { spec.sortDescriptors = newValue }
    }
    /// Whether objects of sub-entities are included (default true).
    public var includesSubentities: Bool {
        get { spec.includesSubentities }
        set { spec.includesSubentities = newValue }
    }
    /// Whether objects come back as faults whose data waits in the row cache (default true, as Core Data).
    public var returnsObjectsAsFaults: Bool {
        get { spec.returnsObjectsAsFaults }
        set { spec.returnsObjectsAsFaults = newValue }
    }
    /// Core Data's `shouldRefreshRefetchedObjects` (default false): whether objects the context already holds take
    /// the fetched rows' newer values (their unsaved changes kept, as `refresh(_:mergeChanges: true)`). False, they
    /// keep the values they had, as Core Data's do.
    public var shouldRefreshRefetchedObjects: Bool {
        get { spec.shouldRefreshRefetchedObjects }
        set { spec.shouldRefreshRefetchedObjects = newValue }
    }
    /// Whether unsaved inserts are included and unsaved deletes left out (default true).
    public var includesPendingChanges: Bool {
        get { spec.includesPendingChanges }
        set { spec.includesPendingChanges = newValue }
    }
    /// At most this many objects from the store (0 = no limit).
    public var fetchLimit: Int {
        get { spec.fetchLimit }
        set { spec.fetchLimit = newValue }
    }
    /// Skip this many rows of the store's result.
    public var fetchOffset: Int {
        get { spec.fetchOffset }
        set { spec.fetchOffset = newValue }
    }
    /// Only these objects, when set.
    public var objectIDs: [ManagedObjectID]? {
        get { spec.objectIDs }
        set { spec.objectIDs = newValue }
    }
    /// When false, only object IDs are read and every object is a fault that reads its own row when touched
    /// (default true: rows go to the row cache with the fetch).
    public var includesPropertyValues: Bool {
        get { spec.includesPropertyValues }
        set { spec.includesPropertyValues = newValue }
    }
    /// When above zero, the fetch reads only IDs; the objects are faults, fulfilled a batch of this many at a
    /// time (one statement per batch) when one of them is touched.
    public var fetchBatchSize: Int {
        get { spec.fetchBatchSize }
        set { spec.fetchBatchSize = newValue }
    }
    /// Relationship key paths (`"department"`, `"residents.car"`) whose destinations are fetched with the
    /// result: one statement per relationship and level, instead of one fault per object.
    public var relationshipKeyPathsForPrefetching: [String] {
        get { spec.relationshipKeyPathsForPrefetching }
        set { spec.relationshipKeyPathsForPrefetching = newValue }
    }
    /// For dictionary fetches: the columns (all stored attributes when nil).
    public var propertiesToFetch: [PropertyToFetch]? {
        get { spec.propertiesToFetch }
        set { spec.propertiesToFetch = newValue }
    }
    /// For dictionary fetches: leave out duplicate rows.
    public var returnsDistinctResults: Bool {
        get { spec.returnsDistinctResults }
        set { spec.returnsDistinctResults = newValue }
    }
    /// For dictionary fetches: one row per distinct value of these key paths.
    public var propertiesToGroupBy: [String] {
        get { spec.propertiesToGroupBy }
        set { spec.propertiesToGroupBy = newValue }
    }
    /// For grouped dictionary fetches: which groups to keep; may name aggregate columns.
    public var havingPredicate: ObjectPredicate? {
        get { spec.havingPredicate }
        set { spec.havingPredicate = newValue }
    }

    /// A request for objects of the entity named `entityName`.
    public init(entityName: String, predicate: ObjectPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        spec = FetchSpec(entityName: entityName, predicate: predicate, sortDescriptors: sortDescriptors)
    }

    init(spec: FetchSpec) {
        self.spec = spec
    }

    /// An independent request with the same settings (Core Data's `copy()`).
    public func copy() -> FetchRequest<Result> {
        FetchRequest(spec: spec)
    }

    /// What a fetch of this request returns (Core Data's `resultType`); by default decided by `Result`: objects,
    /// `ManagedObjectID`s, `NSDictionary`s or a count (`NSNumber`).
    public var resultType: FetchRequestResultType {
        get { spec.resultType ?? FetchRequestResultType(for: Result.self) }
        set { spec.resultType = newValue }
    }
}

extension FetchRequest where Result: ManagedObject {
    /// A request for a typed subclass's entity (`Result.entityName`).
    public convenience init(predicate: ObjectPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        self.init(spec: FetchSpec(entityName: Result.entityName, predicate: predicate, sortDescriptors: sortDescriptors))
    }
}

/// What a fetch request's results are (Core Data's `NSFetchRequestResult`): managed objects, object IDs,
/// dictionaries or numbers (a count). `FetchRequest<FetchRequestResult>` with a `resultType` is Core Data's untyped
/// request.
public protocol FetchRequestResult {}

extension ManagedObject: FetchRequestResult {}
extension ManagedObjectID: FetchRequestResult {}
extension NSDictionary: FetchRequestResult {}
extension NSNumber: FetchRequestResult {}

/// Core Data's `NSFetchRequestResultType`.
public enum FetchRequestResultType: Sendable {
    /// Managed objects (the default for a request of objects).
    case managedObjectResultType
    /// `ManagedObjectID`s.
    case managedObjectIDResultType
    /// `NSDictionary`s of the `propertiesToFetch`.
    case dictionaryResultType
    /// One `NSNumber`: the count.
    case countResultType

    /// The result type a request of `type` returns by default.
    init(for type: Any.Type) {
        if type == ManagedObjectID.self { self = .managedObjectIDResultType }
        else if type is NSDictionary.Type { self = .dictionaryResultType }
        else if type is NSNumber.Type { self = .countResultType }
        else { self = .managedObjectResultType }
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
