/// An EXPLAIN QUERY PLAN result as a tree, with a verdict per step: which index a table is searched with, which
/// tables are scanned whole, and where SQLite sorts in a temporary B-tree. Reads both the old detail shapes
/// (`SCAN TABLE ZCITY AS t0`, SQLite before 3.36) and the current ones (`SCAN t0`).
public struct QueryPlan: Sendable, Equatable, CustomStringConvertible {
    /// One step.
    public struct Step: Sendable, Equatable {
        /// What a step does: searches an index, scans a table whole, sorts in a temporary B-tree, runs a
        /// subquery, or something else.
        public enum Kind: String, Sendable {
            /// `SEARCH`: rows found through an index.
            case search
            /// `SCAN`: a table (or covering index) read whole.
            case scan
            /// `USE TEMP B-TREE`: rows sorted for ORDER BY, GROUP BY or DISTINCT.
            case tempBTree
            /// A subquery or compound query.
            case subquery
            /// Anything else.
            case other
        }
        /// The node's id in EXPLAIN QUERY PLAN.
        public let id: Int
        /// Its parent's id (0 at the top).
        public let parent: Int
        /// SQLite's text for the step.
        public let detail: String
        /// What the step does.
        public let kind: Kind
        /// The table or alias the step reads (`t0`), if any.
        public let table: String?
        /// The index used, if any (`INTEGER PRIMARY KEY` for rowid lookups).
        public let index: String?
        /// The index's constrained columns, e.g. `ZNAME=?`.
        public let constraint: String?
    }

    /// The steps, in SQLite's order.
    public let steps: [Step]

    /// The plan of EXPLAIN QUERY PLAN's rows.
    public init(nodes: [QueryPlanEvent.Node]) {
        steps = nodes.map(QueryPlan.parse)
    }

    static func parse(_ node: QueryPlanEvent.Node) -> Step {
        var words = node.detail.split(separator: " ").map(String.init)
        var kind = Step.Kind.other
        var table: String?
        var index: String?
        var constraint: String?
        if node.detail.hasPrefix("USE TEMP B-TREE") {
            kind = .tempBTree
        } else if let first = words.first, first == "SCAN" || first == "SEARCH" {
            kind = first == "SCAN" ? .scan : .search
            words.removeFirst()
            if words.first == "TABLE" { words.removeFirst() }
            table = words.first
            if words.count >= 3, words[1] == "AS" { table = words[2] }
            if let using = words.firstIndex(of: "USING") {
                let rest = words[(using + 1)...].filter { $0 != "COVERING" && $0 != "INDEX" }
                if node.detail.contains("INTEGER PRIMARY KEY") {
                    index = "INTEGER PRIMARY KEY"
                } else {
                    index = rest.first
                }
            }
            if let open = node.detail.firstIndex(of: "("), node.detail.hasSuffix(")") {
                constraint = String(node.detail[node.detail.index(after: open)..<node.detail.index(before: node.detail.endIndex)])
            }
        } else if node.detail.contains("SUBQUERY") {
            kind = .subquery
        }
        return Step(id: node.id, parent: node.parent, detail: node.detail, kind: kind, table: table, index: index, constraint: constraint)
    }

    /// Tables read whole: every `SCAN` step. Scanning through an index reads every row too; the index only gives
    /// the order (or, when covering, a narrower read).
    public var fullScans: [Step] { steps.filter { $0.kind == .scan } }
    /// Index searches whose only constraint is the entity column (`Z_ENT=?`, or a range of it): in an inheritance
    /// hierarchy they read every row of the entity, as a scan would, though the plan says SEARCH.
    public var entityWalks: [Step] { steps.filter { $0.kind == .search && Self.isEntityWalk($0.detail) } }

    /// `SEARCH t0 USING INDEX … (Z_ENT=?)` or `(Z_ENT>? AND Z_ENT<?)`.
    public static func isEntityWalk(_ detail: String) -> Bool {
        guard detail.hasPrefix("SEARCH"), detail.contains(" INDEX "), let open = detail.lastIndex(of: "("), detail.hasSuffix(")") else { return false }
        let terms = detail[detail.index(after: open)..<detail.index(before: detail.endIndex)].components(separatedBy: " AND ")
        return terms.allSatisfy { $0.hasPrefix("Z_ENT") && !$0.hasPrefix("Z_ENT_") }
    }

    /// True when SQLite sorts the result itself (`USE TEMP B-TREE FOR ORDER BY`).
    public var sortsInTemporaryBTree: Bool { steps.contains { $0.kind == .tempBTree && $0.detail.contains("ORDER BY") } }

    /// A verdict for each step.
    public func verdict(_ step: Step) -> String {
        switch step.kind {
        case .search where Self.isEntityWalk(step.detail): return "walks every row of the entity (\(step.index ?? "?"))"
        case .search: return "index \(step.index ?? "?")" + (step.constraint.map { " (\($0))" } ?? "")
        case .scan: return step.index.map { "full scan in index order (\($0))" } ?? "full scan"
        case .tempBTree: return "sorts in a temporary B-tree"
        case .subquery: return "subquery"
        case .other: return step.detail
        }
    }

    /// The plan drawn as a tree, each step with its verdict.
    public var description: String {
        var lines: [String] = []
        func draw(_ parent: Int, _ depth: Int) {
            for step in steps where step.parent == parent {
                lines.append(String(repeating: "   ", count: depth) + "`--" + step.detail + "   [" + verdict(step) + "]")
                draw(step.id, depth + 1)
            }
        }
        draw(0, 0)
        return "QUERY PLAN\n" + lines.joined(separator: "\n")
    }
}
