import Faultline
import Foundation

/// What the engine did during one run, counted from its probe events: exact, unlike times, so these are what a
/// regression gate and the runner's tests compare.
public struct ProbeCounters: Codable, Sendable, Equatable {
    /// SQL statements run (every kind: fetches, faults, saves, key allocation, transactions).
    public var statements = 0
    /// Rows SQLite returned.
    public var rows = 0
    /// Fetch requests executed (including counts and dictionary fetches).
    public var fetches = 0
    /// Objects, IDs or dictionaries fetch requests returned.
    public var fetchedObjects = 0
    /// Faults fired: object and relationship faults, from the row cache or the database.
    public var faults = 0
    /// Faults fulfilled from the row cache (no SQL).
    public var cacheHits = 0
    /// Faults that had to read SQLite (Instruments' cache misses).
    public var cacheMisses = 0
    /// Saves.
    public var saves = 0
    /// Statements whose plan scanned a whole table at least once in this run (`sqlite3_stmt_status` full-scan
    /// steps > 0).
    public var fullScanStatements = 0
    /// Statements that sorted (a temporary B-tree for ORDER BY).
    public var sortingStatements = 0

    public init() {}

    mutating func add(_ event: ProbeEvent) {
        switch event {
        case .statement(let e):
            statements += 1
            rows += e.rows
            if e.fullScanSteps > 0 { fullScanStatements += 1 }
            if e.sorts > 0 { sortingStatements += 1 }
        case .fetch(let e):
            fetches += 1
            fetchedObjects += e.results
        case .fault(let e):
            faults += 1
            if e.source == .database { cacheMisses += 1 } else { cacheHits += 1 }
        case .save:
            saves += 1
        case .migration(let e):
            // A migration's copy runs on connections of its own: its event carries the statements and rows.
            statements += e.statements
            rows += e.rows
        case .connect, .queryPlan, .signpost, .prefetchUse, .batch, .merge, .refresh, .invalidate, .resultsController:
            break
        }
    }
}

/// A probe recorder that counts events (attached to the runner's traced runs).
final class CountingRecorder: ProbeRecorder, @unchecked Sendable {
    private let lock = NSLock()
    private var counters = ProbeCounters()
    private var plans: [String: [String]] = [:]

    func record(_ event: consuming ProbeEvent, at time: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        let event = copy event
        if case .queryPlan(let plan) = event { plans[plan.sql] = plan.nodes.map(\.detail) }
        counters.add(event)
    }

    /// Forgets the counts (the query plans stay).
    func resetCounters() {
        lock.lock()
        counters = ProbeCounters()
        lock.unlock()
    }

    /// Forgets counts and query plans.
    func resetAll() {
        lock.lock()
        counters = ProbeCounters()
        plans = [:]
        lock.unlock()
    }

    /// The counts and the query plans (by SQL text) recorded since the resets.
    func snapshot() -> (counters: ProbeCounters, plans: [String: [String]]) {
        lock.lock()
        defer { lock.unlock() }
        return (counters, plans)
    }
}
