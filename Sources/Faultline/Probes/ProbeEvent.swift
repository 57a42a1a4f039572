import Foundation

/// One thing the engine did, as the probes record it (docs/trace-format.md).
public enum ProbeEvent: Sendable {
    /// A store file opened.
    case connect(ConnectEvent)
    /// An SQL statement run.
    case statement(StatementEvent)
    /// A statement's query plan (once per distinct SQL).
    case queryPlan(QueryPlanEvent)
    /// A fetch request executed.
    case fetch(FetchEvent)
    /// A fault fired (from the row cache or the store).
    case fault(FaultEvent)
    /// A context saved.
    case save(SaveEvent)
    /// A point in the run, set by the program.
    case signpost(SignpostEvent)
    /// How many prefetched objects were used.
    case prefetchUse(PrefetchUseEvent)
    /// A batch request ran.
    case batch(BatchEvent)
    /// Remote changes merged into a context.
    case merge(MergeEvent)
    /// Objects refreshed by the program.
    case refresh(RefreshEvent)
    /// A context's objects invalidated (by `reset()`, or as the context went away).
    case invalidate(InvalidateEvent)
    /// A fetched results controller fetched, or processed a round of changes.
    case resultsController(ResultsControllerEvent)
    /// One entity's objects copied by a migration step.
    case migration(MigrationEvent)

    /// The event's type name in the trace.
    public var type: String { typeName.description }

    var typeName: StaticString {
        switch self {
        case .connect: return "connect"
        case .statement: return "statement"
        case .queryPlan: return "queryPlan"
        case .fetch: return "fetch"
        case .fault(let f): return f.source == .database ? "cacheMiss" : "fault"
        case .save: return "save"
        case .signpost: return "signpost"
        case .prefetchUse: return "prefetchUse"
        case .batch: return "batch"
        case .merge: return "merge"
        case .refresh: return "refresh"
        case .invalidate: return "invalidate"
        case .resultsController: return "resultsController"
        case .migration: return "migration"
        }
    }
}

/// One entity's objects copied by a migration step (docs/migration.md).
public struct MigrationEvent: Sendable, Equatable {
    /// The step's place in the migration (1, 2, …).
    public var step: Int
    /// The model version the step migrates from.
    public var from: String
    /// The model version the step migrates to.
    public var to: String
    /// The destination entity.
    public var entity: String
    /// Rows the destination entity got.
    public var rows: Int
    /// Statements the entity's copy ran (its SELECT and one INSERT per row).
    public var statements: Int
    /// Seconds the entity's copy took.
    public var duration: Double
}

/// A store file opened (logged before anything is read from it).
public struct ConnectEvent: Sendable, Codable, Equatable {
    /// The store file's path.
    public var path: String
}

/// What a statement ran for.
public enum StatementPurpose: String, Sendable, Codable {
    /// A fetch request's statements.
    case fetch
    /// An object fault's SELECT.
    case fault
    /// A relationship fault's SELECT.
    case relationshipFault
    /// A save's writes.
    case save
    /// `Z_PRIMARYKEY` updates that hand out keys.
    case keyAllocation
    /// Schema and pragmas, when a store opens or is created.
    case schema
    /// A batch request's statements.
    case batch
    /// Anything else.
    case other
}

/// One SQL statement run to completion.
public struct StatementEvent: Sendable, Codable, Equatable {
    /// The statement's SQL text, with `?` for its bound values.
    public var sql: String
    /// Bound values as literals (`18`, `"Maui"`, `nil`, `<0102>`) when wanted; empty otherwise.
    public var bindings: [String]
    /// How many values were bound.
    public var parameters: Int
    /// Why the statement ran.
    public var purpose: StatementPurpose
    /// Seconds, on the monotonic clock.
    public var duration: Double
    /// Rows the statement returned (or changed).
    public var rows: Int
    /// `sqlite3_stmt_status` counters for this run: full-scan steps, sorts, automatic indexes, VM steps.
    public var fullScanSteps: Int
    /// Temporary B-tree sorts (`SQLITE_STMTSTATUS_SORT`).
    public var sorts: Int
    /// Rows inserted into automatic indexes (`SQLITE_STMTSTATUS_AUTOINDEX`).
    public var autoIndexes: Int
    /// Virtual-machine steps (`SQLITE_STMTSTATUS_VM_STEP`): the statement's work.
    public var vmSteps: Int
}

extension StatementEvent {
    /// What SQLite's counters say of the run's plan: `full scan` (rows stepped through a table scan), `automatic
    /// index` (SQLite built a temporary index), `sort` (a temporary B-tree for ORDER BY or DISTINCT), or `no scan`.
    public var planVerdict: String {
        fullScanSteps > 0 ? "full scan" : autoIndexes > 0 ? "automatic index" : sorts > 0 ? "sort" : "no scan"
    }
}

/// EXPLAIN QUERY PLAN of one distinct SQL text (captured once).
public struct QueryPlanEvent: Sendable, Codable, Equatable {
    /// One row of `EXPLAIN QUERY PLAN`.
    public struct Node: Sendable, Codable, Equatable {
        /// The node's id.
        public var id: Int
        /// Its parent's id (0 at the top).
        public var parent: Int
        /// SQLite's text for the step (`SEARCH t0 USING INDEX …`, `SCAN t0`).
        public var detail: String
    }
    /// The statement's SQL text.
    public var sql: String
    /// The plan's nodes, in SQLite's order.
    public var nodes: [Node]
}

/// A fetch request executed by a context.
public struct FetchEvent: Sendable, Equatable {
    /// The fetched entity's name.
    public var entity: String
    /// The predicate (formatted when the event is written: `predicate?.predicateFormat`).
    public var predicate: ObjectPredicate?
    /// The request's sort descriptors.
    public var sort: [FetchSortDescriptor]
    /// `fetchLimit` (0: none).
    public var limit: Int
    /// `fetchOffset`.
    public var offset: Int
    /// `fetchBatchSize` (0: none).
    public var batchSize: Int
    /// `relationshipKeyPathsForPrefetching`.
    public var prefetch: [String]
    /// What the fetch returned.
    public enum ResultType: String, Sendable {
        /// Materialized objects.
        case objects
        /// Objects as faults.
        case faults
        /// Object IDs.
        case ids
        /// A count (`count(for:)`).
        case count
        /// Dictionaries.
        case dictionary

        /// The name as a JSON string.
        var quotedName: StaticString {
            switch self {
            case .objects: return #""objects""#
            case .faults: return #""faults""#
            case .ids: return #""ids""#
            case .count: return #""count""#
            case .dictionary: return #""dictionary""#
            }
        }
    }
    /// What the fetch returned.
    public var resultType: ResultType
    /// Statements the fetch ran.
    public var statements: Int
    /// Rows SQLite returned.
    public var rows: Int
    /// Objects (or IDs, dictionaries) returned.
    public var results: Int
    /// How many of the returned objects the context had registered before the fetch (all of them: the fetch
    /// could have been a lookup among registered objects).
    public var registered: Int
    /// Seconds in SQLite (statement runs).
    public var sqlTime: Double
    /// Seconds for the whole fetch.
    public var totalTime: Double
    /// The caller's `#fileID` and `#line`.
    public var callSite: CallSite?
    /// The returned objects' URIs (SQLDebug level 3 only).
    public var values: [String]?
    /// The context's `serialNumber`.
    public var context: Int
    /// The context's `name`, if the program gave it one (metrics' `context` dimension).
    public var contextName: String? = nil
    /// The context's object counts and the row cache's size when the fetch ended.
    public var gauges: ContextGauges? = nil
    /// Key paths of optional attributes the predicate compares with `!=` to a value, without saying what nil should
    /// do: the store leaves out the rows where they are nil, which Core Data's in-memory evaluation keeps.
    public var optionalNotEqual: [String] = []
    /// Of `totalTime`, the seconds inside SQLite's `sqlite3_step`: querying the database (0 unless the probes split
    /// fetch time, `ProbeConfiguration.splitsFetchTime`).
    public var stepTime: Double = 0
    /// Of `totalTime`, the seconds decoding the fetched rows into the row cache. The rest of the fetch — less
    /// `stepTime` and this — is the context's: compiling the request, uniquing, creating and registering objects.
    public var rowCacheTime: Double = 0
    /// The predicate's shape text, when the fetch was compiled through a template: the trace then records the
    /// predicate by its constants (`PredicateRecording`).
    var predicateText = PredicateTextReference()
}

/// A fetch event's reference to its predicate's shape text: how the event was recorded, not part of its value.
struct PredicateTextReference: Sendable, Equatable {
    var shape: PredicateTextShape?

    static func == (_: PredicateTextReference, _: PredicateTextReference) -> Bool { true }
}

/// A fault fired.
public struct FaultEvent: Sendable, Equatable {
    /// An object fault (its attributes) or a relationship fault (its members).
    public enum Kind: String, Sendable, Codable {
        /// An object's attributes.
        case object
        /// A relationship's members.
        case relationship
    }
    /// Where the fault was fulfilled from: the row cache (no SQL) or the store (a SELECT: a cache miss).
    public enum Source: String, Sendable, Codable {
        /// The coordinator's row cache: no SQL.
        case rowCache
        /// The store: a SELECT (a cache miss).
        case database
    }
    /// An object or a relationship fault.
    public var kind: Kind
    /// The object whose fault fired (for relationship faults, the object that holds the relationship).
    public var objectID: ManagedObjectID
    /// The object's URI (`objectID.uriString`).
    public var object: String { objectID.uriString }
    /// For relationship faults: the relationship's name.
    public var relationship: String?
    /// Where the fault was fulfilled from.
    public var source: Source
    /// For relationship faults: how many objects it held.
    public var count: Int?
    /// Seconds the fault took.
    public var duration: Double
    /// The row's values (SQLDebug level 3 only).
    public var values: String?
    /// When the fault was fulfilled with its batch (a batched fetch result): the batch size.
    public var batch: Int?
    /// For faults that read SQLite: where the caller's code touched the object (`stack.callSite`).
    public var stack: FaultStack?
    /// The context's `serialNumber`.
    public var context: Int
    /// For relationship faults: true when the caller only asked for the number of members (`count(forRelationship:)`).
    public var countOnly = false
    /// For object faults: true when the object's row was gone (deleted elsewhere): the object is inaccessible, its
    /// values nil, and the context's `lastFaultError` says so.
    public var missing = false
}

/// A context saved.
public struct SaveEvent: Sendable, Equatable {
    /// Inserted objects by entity name.
    public var inserted: [String: Int]
    /// Updated objects by entity name.
    public var updated: [String: Int]
    /// Deleted objects by entity name.
    public var deleted: [String: Int]
    /// Statements the save ran (0 for a child context's save).
    public var statements: Int
    /// Seconds the save took.
    public var duration: Double
    /// Conflicts the save met (optimistic locking, uniqueness constraints).
    public var conflicts: Int
    /// The error, when the save failed.
    public var error: String?
    /// The caller's `#fileID` and `#line`.
    public var callSite: CallSite?
    /// The context's `serialNumber`.
    public var context: Int
    /// The context's `name`, if the program gave it one (metrics' `context` dimension).
    public var contextName: String? = nil
    /// For a child context's save (which writes nothing: its changes go into its parent), the parent's
    /// `serialNumber`.
    public var parent: Int? = nil
    /// The context's object counts and the row cache's size when the save ended.
    public var gauges: ContextGauges? = nil
    /// Bytes of the values the save wrote: text and binary data by their length, numbers and references 8 each.
    public var bytes: Int = 0
}

/// A batch request (update, delete or insert) ran in SQL.
public struct BatchEvent: Sendable, Equatable {
    /// `update`, `delete` or `insert`.
    public var kind: String
    /// The entity the request changed.
    public var entity: String
    /// Rows changed (cascaded deletes included).
    public var rows: Int
    /// Statements the request ran.
    public var statements: Int
    /// Seconds the request took.
    public var duration: Double
    /// The error, when the request failed (nothing was written).
    public var error: String?
    /// The caller's `#fileID` and `#line`.
    public var callSite: CallSite?
    /// The context's `serialNumber`.
    public var context: Int
}

/// Remote changes (a batch request's IDs, another writer's save) merged into a context.
public struct MergeEvent: Sendable, Equatable {
    /// Objects inserted by the remote changes.
    public var inserted: Int
    /// Objects updated by the remote changes.
    public var updated: Int
    /// Objects deleted by the remote changes.
    public var deleted: Int
    /// Registered objects refreshed or reset because of the merge.
    public var refreshed: Int
    /// Objects the remote changes inserted that the merge registered as faults, to report them inserted (only while
    /// the context has an objects-did-change observer).
    public var registered: Int = 0
    /// Seconds the merge took.
    public var duration: Double
    /// The context's `serialNumber`.
    public var context: Int
}

/// Objects refreshed by the program (`refresh(_:mergeChanges:)`, `refreshAllObjects()`); refreshes a merge makes
/// are counted in its `merge` event.
public struct RefreshEvent: Sendable, Equatable {
    /// Objects refreshed.
    public var objects: Int
    /// True: stored values with unsaved changes on top; false: back to faults.
    public var mergeChanges: Bool
    /// Seconds the refresh took.
    public var duration: Double
    /// The context's `serialNumber`.
    public var context: Int
}

/// A fetched results controller's fetch (`performFetch()`) or round of changes, with what it cost.
public struct ResultsControllerEvent: Sendable, Equatable {
    /// `fetch` or `changes`.
    public var kind: String
    /// The request's entity.
    public var entity: String
    /// The section key path, if any.
    public var sectionNameKeyPath: String?
    /// The cache name, if any.
    public var cacheName: String?
    /// The fetched objects after it.
    public var objects: Int
    /// The sections after it.
    public var sections: Int
    /// The request's batch size.
    public var batchSize: Int
    /// For a fetch: `none` (no cache name), `hit`, `miss` (rebuilt) or `bypassed` (unsaved changes shape the sections).
    public var cache: String
    /// Why the cache missed.
    public var cacheReason: String?
    /// For a fetch, where the sections came from: `none` (no key path), `cache`, `store` (one GROUP BY) or `objects`
    /// (every object's section value read).
    public var sectionsFrom = "none"
    /// For a round of changes: objects inserted, deleted, moved and updated; sections inserted and deleted.
    public var inserted = 0, deleted = 0, moved = 0, updated = 0, sectionsInserted = 0, sectionsDeleted = 0
    /// Seconds it took (the fetch, the sections, the cache; or the change processing and the delegate's calls).
    public var duration: Double
    /// The context's `serialNumber`.
    public var context: Int
}

/// Every object a context held, invalidated: each is a fault with no context and no values, whose use is an error
/// (`reset()`), or that reads nil (the context went away) — as Core Data's invalidated objects.
public struct InvalidateEvent: Sendable, Equatable {
    /// Why the objects were invalidated.
    public enum Reason: String, Sendable {
        /// The program called `reset()`.
        case reset
        /// The context was deinitialized while the program still held some of its objects.
        case contextDeallocated
    }
    /// Objects invalidated.
    public var objects: Int
    /// Why.
    public var reason: Reason
    /// Seconds the invalidation took (the objects' hooks included).
    public var duration: Double
    /// The context's `serialNumber`.
    public var context: Int
}

/// How many of the objects a prefetch loaded were used before their context reset or went away.
public struct PrefetchUseEvent: Sendable, Equatable {
    /// The prefetched key path (`department`, `friends.posts`).
    public var keyPath: String
    /// The fetched entity the key path starts from.
    public var entity: String
    /// Objects the prefetch loaded (and the probes watched).
    public var loaded: Int
    /// Of those, the ones whose values were read.
    public var used: Int
    /// The fetch's call site.
    public var callSite: CallSite?
    /// The context's `serialNumber`.
    public var context: Int
}

/// A named point in a run, set by the program (`Probes.signpost(_:)`): what a benchmark runner or a test marks so
/// that a report can group the events that follow, as Instruments' points of interest.
public struct SignpostEvent: Sendable, Equatable {
    /// The signpost's name (`SCENARIO/VARIANT` in `faultline bench` traces).
    public var name: String

    /// A signpost named `name`.
    public init(name: String) { self.name = name }
}

/// Where in the caller's code an event started.
public struct CallSite: Sendable, Equatable, CustomStringConvertible {
    /// The caller's `#fileID` (`Module/File.swift`).
    public let file: StaticString
    /// The caller's line.
    public let line: UInt

    /// Whether the two are equal.
    public static func == (lhs: CallSite, rhs: CallSite) -> Bool {
        lhs.line == rhs.line && lhs.file.description == rhs.file.description
    }

    /// `Module/File.swift:42`.
    public var description: String { "\(file):\(line)" }
}
