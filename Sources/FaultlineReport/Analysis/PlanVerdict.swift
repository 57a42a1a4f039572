import Faultline

/// What a statement's query plan says about the rows it reads: a full scan of its table, a walk of a whole entity
/// through the `Z_ENT` index (which reads every row of the entity as a scan would, though the plan says SEARCH), a
/// sort in a temporary B-tree — and the columns of its WHERE clause an index could serve.
public struct PlanVerdict: Sendable {
    /// VM steps SQLite spends on each row an index walk visits (its seek, its test and its next), and, beyond those,
    /// on each result column of a row it returns: measured on SQLite 3.40's walks of an entity through its Z_ENT
    /// index, where (steps − returned rows × (columns + 1)) / 5 gave the rows visited within 0.5%.
    public static let vmStepsPerVisitedRow = 5

    /// Rows an index walk visited, estimated from its VM steps (no counter counts them): `steps` over all runs,
    /// `returned` rows in all, `columns` in its result.
    public static func estimatedRowsVisited(vmSteps: Int, returned: Int, columns: Int) -> Int {
        max(returned, (vmSteps - returned * (columns + 1)) / vmStepsPerVisitedRow)
    }

    /// The result columns of a SELECT (commas of its top-level list, before FROM).
    static func resultColumns(_ sql: String) -> Int {
        guard let from = sql.range(of: " FROM ") else { return 1 }
        var depth = 0, columns = 1
        for c in sql[..<from.lowerBound] {
            if c == "(" { depth += 1 } else if c == ")" { depth -= 1 } else if c == "," && depth == 0 { columns += 1 }
        }
        return columns
    }

    public let fullScan: Bool
    public let entityWalk: Bool
    public let sortsInTemporaryBTree: Bool
    /// The plan line that scans or walks.
    public let detail: String
    public let candidates: IndexCandidates

    public init(plan: [String], sql: String) {
        let scan = plan.first { Self.isFullScan($0) }
        let walk = plan.first { Self.isEntityWalk($0) }
        fullScan = scan != nil
        entityWalk = scan == nil && walk != nil
        sortsInTemporaryBTree = plan.contains { $0.contains("TEMP B-TREE FOR ORDER BY") }
        detail = scan ?? walk ?? ""
        candidates = IndexCandidates(sql: sql)
    }

    /// Reads every row of its table or entity.
    public var scansOrWalksEntity: Bool { fullScan || entityWalk }

    /// A `SCAN` of a table (not of a covering index, a table-valued function or a constant row).
    static func isFullScan(_ detail: String) -> Bool {
        detail.hasPrefix("SCAN") && !detail.contains("COVERING INDEX") && !detail.contains("json_each") && !detail.contains("CONSTANT ROW")
    }

    static func isEntityWalk(_ detail: String) -> Bool { QueryPlan.isEntityWalk(detail) }

    /// The index that lets the statement read only the rows it needs: equality columns, then one range column, and
    /// for an entity walk `Z_ENT` after them (SQLite then rejects other entities' rows from the index alone).
    public var suggestedColumns: [String] {
        candidates.equality + candidates.range.prefix(1) + (entityWalk ? ["Z_ENT"] : [])
    }

    public func suggestedIndex(table: String) -> String {
        let columns = suggestedColumns
        return "CREATE INDEX \(table)_\(columns.joined(separator: "_"))_INDEX ON \(table) (\(columns.joined(separator: ", ")))"
    }

    /// Badges for the statements table: full scan, entity walk, temp B-tree, index.
    public var badges: [String] {
        var badges: [String] = []
        if fullScan { badges.append("full scan") }
        if entityWalk { badges.append("entity walk") }
        if sortsInTemporaryBTree { badges.append("temp B-tree") }
        return badges
    }
}
