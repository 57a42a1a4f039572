/// A problem the analyzers found in a trace, with its evidence and a concrete fix.
public struct Finding: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case nPlusOne = "N+1 faults"
        case relationshipFaultStorm = "relationship faults one by one"
        case countThroughFaults = "to-many counted through its faults"
        case fullScan = "full table scan"
        case tempBTree = "temporary B-tree for ORDER BY"
        case repeatedFetch = "same fetch repeated"
        case fetchInLoop = "fetch in a loop"
        case avoidableFetch = "avoidable fetch"
        case largeFetchWithoutBatchSize = "large fetch without a batch size"
        case batchSizeTooSmall = "batch size too small"
        case foldingSearch = "case- or diacritic-insensitive search without a normalized column"
        case unusedPrefetch = "prefetched objects never used"
        case manySmallSaves = "many small saves"
        case growingContext = "context growing across saves"
        case textScan = "text search reading every row"
        case optionalNotEqual = "!= on an optional attribute"
        case missingRow = "faults on deleted rows"
        case largeSave = "save over 100 MB"
        case redundantIndex = "redundant index"
        case unusedIndex = "unused index"
        case controllerWithoutBatchSize = "fetched results controller without a batch size"
        case changeStorm = "change storm in a fetched results controller"
        case sectionCacheRebuilt = "section cache rebuilt"
        case sectionsFromObjects = "sections read from every object"
    }

    public var kind: Kind
    /// The first signpost the events belong to (`SCENARIO/VARIANT` in bench traces), or "".
    public var segment: String
    /// Every signpost the events belong to, in the order they first appear (one finding covers a problem wherever
    /// its call site ran).
    public var segments: [String] = []
    /// Where in the program (`Module/File.swift:42`), when known.
    public var callSite: String?
    /// Where in Faultline's own code (its benchmark scenarios, its command-line tool) the events came from, when they
    /// did: such a site is never taken as the program's `callSite`.
    public var faultlineSite: String? = nil
    /// What was seen, in a sentence.
    public var evidence: String
    /// What to change.
    public var fix: String
    /// Seconds the pattern cost in the trace that no costlier finding counts already (findings are ranked by it).
    public var cost: Double
    /// Seconds of its events that a costlier finding counts (the same fetches seen as two problems): its whole time is
    /// `cost + sharedCost`.
    public var sharedCost = 0.0
    /// Events involved.
    public var count: Int
    /// Trace line numbers of the first few events, for looking them up.
    public var lines: [Int]
    /// When the first and the last of its events happened (seconds since the trace started).
    public var times: ClosedRange<Double>? = nil
    /// Indexes in the trace's events of the fetches, faults and saves the finding explains (for the time findings
    /// explain together, each event counted once).
    public var events: [Int] = []
    /// For scans and sorts: the fetch that ran the statement (entity, canonical predicate, sort keys), so that a
    /// suggested index can be proven against a store.
    public var fetch: FetchShape?
    /// For scans and sorts: the statement's SQL (what a Core Data log gives instead of a fetch).
    public var sql: String? = nil
    /// For N+1 faults read from a Core Data log: the relationship behind them ("Order.customer"), which a log never
    /// names — always an inference (`relationshipInferred`), from the model's only to-one or, with no model, from the
    /// column the fetch before them read.
    public var inferredRelationship: String? = nil
    /// For redundant- and unused-index findings: the index they name.
    public var index: String? = nil

    /// What a fetch asked for, as the trace records it.
    public struct FetchShape: Sendable, Equatable {
        public var entity: String
        public var predicate: String?
        public var sort: [String]
    }

    /// The key that identifies "the same" finding in two traces.
    public var identity: String { "\(kind.rawValue)|\(callSite ?? "")|\(evidence.prefix(while: { $0 != ":" }))" }
}
