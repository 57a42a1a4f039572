import CSQLite
import Foundation

/// Running totals of a connection's statements: how many, seconds in SQLite, rows returned.
struct ProbeTotals {
    var statements = 0
    /// Seconds from each statement's first step to its reset: SQLite's work and the caller's per row.
    var sqlTime = 0.0
    var rows = 0
    /// Seconds inside `sqlite3_step` (and `sqlite3_exec`): SQLite's own work.
    var stepTime = 0.0
    /// Seconds decoding fetched rows into the row cache.
    var rowCacheTime = 0.0
}

/// The statement-level probe of one connection: turns each statement run into a `StatementEvent`, captures the
/// query plan of each distinct SQL text once, and keeps running totals for fetch events.
final class ConnectionProbe {
    let probes: Probes
    /// What the statements run now are for (set by the coordinator around its work).
    @exclusivity(unchecked) var purpose: StatementPurpose = .other
    /// Running totals: statements, seconds in SQLite, rows returned (one struct, read and updated in one access).
    @exclusivity(unchecked) private(set) var totals = ProbeTotals()

    /// True when fetches split their time (`ProbeConfiguration.splitsFetchTime`).
    let splitsFetchTime: Bool

    init(probes: Probes) {
        self.probes = probes
        splitsFetchTime = probes.configuration.splitsFetchTime
    }

    func finished(_ statement: Statement, start: UInt64, rows: Int, stepTime: Double) {
        let end = ProbeClock.now()
        let bindings = statement.recordedBindings
        let duration = ProbeClock.seconds(start, end)
        let handle = statement.handle
        tally(duration: duration, stepTime: stepTime, rows: rows)
        probes.record(.statement(StatementEvent(
            sql: statement.sql, bindings: bindings,
            parameters: bindings.isEmpty ? statement.parameterCount : bindings.count,
            purpose: purpose, duration: duration, rows: rows,
            fullScanSteps: Int(sqlite3_stmt_status(handle, Int32(SQLITE_STMTSTATUS_FULLSCAN_STEP), 1)),
            sorts: Int(sqlite3_stmt_status(handle, Int32(SQLITE_STMTSTATUS_SORT), 1)),
            autoIndexes: Int(sqlite3_stmt_status(handle, Int32(SQLITE_STMTSTATUS_AUTOINDEX), 1)),
            vmSteps: Int(sqlite3_stmt_status(handle, Int32(SQLITE_STMTSTATUS_VM_STEP), 1)))), at: end)
        if probes.wantsQueryPlans && !statement.planCaptured {
            statement.planCaptured = true
            capturePlan(statement, at: end)
        }
    }

    /// A statement run by `sqlite3_exec` (transactions, DDL, pragmas).
    func executed(_ sql: String, start: UInt64) {
        let end = ProbeClock.now()
        let duration = ProbeClock.seconds(start, end)
        // All of it is SQLite's; counted only when fetches split their time, so that an unsplit fetch reports none.
        tally(duration: duration, stepTime: splitsFetchTime ? duration : 0, rows: 0)
        probes.record(.statement(StatementEvent(sql: sql, bindings: [], parameters: 0, purpose: purpose, duration: duration, rows: 0,
                                                fullScanSteps: 0, sorts: 0, autoIndexes: 0, vmSteps: 0)), at: end)
    }

    private func tally(duration: Double, stepTime: Double, rows: Int) {
        totals.statements &+= 1
        totals.sqlTime += duration
        totals.stepTime += stepTime
        totals.rows &+= rows
    }

    /// Adds time spent decoding fetched rows into the row cache (`start` and `end` from `ProbeClock`).
    @inline(__always) func rowCacheTime(_ start: UInt64, _ end: UInt64) {
        if end > start { totals.rowCacheTime += ProbeClock.seconds(start, end) }
    }

    /// Records the plan as of `time`, the end of the statement's run (so it sorts right after it).
    private func capturePlan(_ statement: Statement, at time: UInt64) {
        let sql = statement.sql
        let upper = sql.prefix(6).uppercased()
        guard upper.hasPrefix("SELECT") || upper.hasPrefix("UPDATE") || upper.hasPrefix("DELETE") else { return }
        // The plan of the statement as bound now (bound values can change a plan, e.g. GLOB prefixes).
        guard let expanded = sqlite3_expanded_sql(statement.handle) else { return }
        defer { sqlite3_free(expanded) }
        let text = "EXPLAIN QUERY PLAN " + String(cString: expanded)
        var handle: OpaquePointer?
        guard sqlite3_prepare_v2(statement.connection.handle, text, -1, &handle, nil) == SQLITE_OK, let handle else { return }
        defer { sqlite3_finalize(handle) }
        var nodes: [QueryPlanEvent.Node] = []
        while sqlite3_step(handle) == SQLITE_ROW {
            let detail = sqlite3_column_text(handle, 3).map { String(cString: $0) } ?? ""
            nodes.append(QueryPlanEvent.Node(id: Int(sqlite3_column_int(handle, 0)), parent: Int(sqlite3_column_int(handle, 1)), detail: detail))
        }
        probes.record(.queryPlan(QueryPlanEvent(sql: sql, nodes: nodes)), at: time)
    }

    /// A bound value as an SQL literal, for logs.
    static func literal(_ slot: Slot) -> String {
        switch slot {
        case .null: return "nil"
        case .integer(let n): return String(n)
        case .real(let d): return String(d)
        case .text(let s): return "\"" + s.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .blob(let d): return "<" + d.prefix(32).map { String(format: "%02x", $0) }.joined() + (d.count > 32 ? "…" : "") + ">"
        case .object(let o): return o.primaryKeyForStorage.map { String($0) } ?? "nil"
        case .many: return "nil"
        }
    }
}
