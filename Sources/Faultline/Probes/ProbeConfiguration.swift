import Foundation

/// Which probes are on: from `FAULTLINE_SQLDEBUG`, `FAULTLINE_TRACE`, `FAULTLINE_CONCURRENCYDEBUG`, `FAULTLINE_FETCH_PHASES` and Core Data's
/// launch arguments (`-com.apple.CoreData.SQLDebug N`, `-com.apple.CoreData.ConcurrencyDebug 1`), or set in code.
public struct ProbeConfiguration: Sendable, Equatable {
    /// 0 = off; 1 SQL and timings; 2 + bind values; 3 + returned values; 4 + EXPLAIN QUERY PLAN.
    public var sqlDebugLevel: Int
    /// Where to write the JSON Lines trace, if anywhere.
    public var tracePath: String?
    /// Bind values appear in traces only when true (they may hold user data).
    public var traceBindValues: Bool
    /// Stop when a context or object is used off its queue.
    public var concurrencyDebug: Bool
    /// Print each migration step, entity by entity (`FAULTLINE_MIGRATIONDEBUG=1`, `-com.apple.CoreData.MigrationDebug 1`).
    public var migrationDebug = false
    /// Which fault events capture the caller's stack (for their call site).
    public var faultCallSites: FaultCallSites
    /// Fetch events split their time: inside SQLite (`stepTime`), decoding rows into the row cache (`rowCacheTime`),
    /// the rest the context's (`FAULTLINE_FETCH_PHASES=1`). Off by default: it reads the clock four times a row,
    /// about 5% of a bulk fetch.
    public var splitsFetchTime = false
    /// `Probes.shared` sends spans to the tracer the program bootstrapped in `InstrumentationSystem`, when it did
    /// so before the first coordinator was made (`FAULTLINE_TRACING=0` turns this off).
    public var followsBootstrappedTracer = true

    /// Which faults record where the caller touched the object.
    public enum FaultCallSites: Sendable, Equatable {
        /// Faults that read SQLite (cache misses, relationship faults): the default — a stack costs about 2 µs,
        /// small beside their SQL.
        case cacheMisses
        /// Every fault, also those fulfilled from the row cache (each then costs about ten times more).
        case all
        /// Cache misses, and one row-cache fault in every `n`.
        case sampled(Int)
        /// None.
        case none
    }

    /// Settings given in code (nothing is read from the environment).
    public init(sqlDebugLevel: Int = 0, tracePath: String? = nil, traceBindValues: Bool = false, concurrencyDebug: Bool = false,
                faultCallSites: FaultCallSites = .cacheMisses) {
        self.sqlDebugLevel = sqlDebugLevel
        self.tracePath = tracePath
        self.traceBindValues = traceBindValues
        self.concurrencyDebug = concurrencyDebug
        self.faultCallSites = faultCallSites
    }

    /// The settings of this process's environment and launch arguments.
    public static let environment = ProbeConfiguration(environment: ProcessInfo.processInfo.environment,
                                                        arguments: ProcessInfo.processInfo.arguments)

    /// Reads settings from environment variables and launch arguments (arguments win).
    public init(environment: [String: String], arguments: [String]) {
        self.init()
        if let level = environment["FAULTLINE_SQLDEBUG"].flatMap(Int.init) { sqlDebugLevel = max(0, min(level, 4)) }
        if let path = environment["FAULTLINE_TRACE"], !path.isEmpty { tracePath = path }
        if environment["FAULTLINE_TRACE_BINDS"] == "1" { traceBindValues = true }
        if let flag = environment["FAULTLINE_CONCURRENCYDEBUG"].flatMap(Int.init) { concurrencyDebug = flag > 0 }
        if let flag = environment["FAULTLINE_MIGRATIONDEBUG"].flatMap(Int.init) { migrationDebug = flag > 0 }
        if let flag = environment["FAULTLINE_FETCH_PHASES"].flatMap(Int.init) { splitsFetchTime = flag > 0 }
        if let flag = environment["FAULTLINE_TRACING"].flatMap(Int.init) { followsBootstrappedTracer = flag > 0 }
        switch environment["FAULTLINE_FAULT_STACKS"] {
        case "all"?: faultCallSites = .all
        case "none"?: faultCallSites = .none
        case let value? where Int(value).map({ $0 > 0 }) == true: faultCallSites = .sampled(Int(value)!)
        default: break
        }
        for (i, argument) in arguments.enumerated() where i + 1 < arguments.count {
            switch argument {
            case "-com.apple.CoreData.SQLDebug", "-com.faultline.SQLDebug":
                if let level = Int(arguments[i + 1]) { sqlDebugLevel = max(0, min(level, 4)) }
            case "-com.apple.CoreData.ConcurrencyDebug":
                if let flag = Int(arguments[i + 1]) { concurrencyDebug = flag > 0 }
            case "-com.apple.CoreData.MigrationDebug":
                if let flag = Int(arguments[i + 1]) { migrationDebug = flag > 0 }
            default:
                break
            }
        }
    }

    var isEnabled: Bool { sqlDebugLevel > 0 || tracePath != nil }
}
