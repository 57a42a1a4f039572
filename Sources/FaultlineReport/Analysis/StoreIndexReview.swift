import Faultline

/// The store's own indexes judged by their columns and by the trace's plans (`faultline report --store`,
/// `faultline explain`): an index whose columns begin another index's is redundant; an index no planned statement
/// of the trace used, on a table the trace's statements read, is unused there.
public enum StoreIndexReview {
    /// Each index that another index on its table makes redundant, with that index: its columns are the first columns
    /// of the other's (the other longer, or as long and declared first, or UNIQUE). A UNIQUE index enforces a
    /// constraint and a partial index covers some rows: neither is called redundant, and a partial one covers nothing.
    public static func redundant(_ indexes: [StoreIndex]) -> [(index: StoreIndex, coveredBy: StoreIndex)] {
        var found: [(StoreIndex, StoreIndex)] = []
        for (i, index) in indexes.enumerated() where !index.isUnique && !index.isPartial && !index.columns.contains("<expression>") {
            let covering = indexes.enumerated().first { j, other in
                guard j != i, other.table == index.table, !other.isPartial, other.columns.count >= index.columns.count,
                      Array(other.columns.prefix(index.columns.count)) == index.columns else { return false }
                // Two with the same columns: the UNIQUE one, else the one listed first, stays.
                return other.columns.count > index.columns.count || other.isUnique || j < i
            }
            if let covering { found.append((index, covering.element)) }
        }
        return found
    }

    /// Findings for the store's redundant indexes, and for those no planned statement used (`plans`: each planned
    /// SQL and its plan's rows), named `store`. Indexes a finding already names are left to it.
    public static func findings(_ indexes: [StoreIndex], plans: [String: [String]], store: String, already: [Finding]) -> [Finding] {
        let named = Set(already.filter { $0.kind == .redundantIndex || $0.kind == .unusedIndex }.compactMap(\.index))
        var found: [Finding] = []
        let redundant = redundant(indexes)
        for (index, covering) in redundant where !named.contains(index.name) {
            found.append(indexFinding(index.name, Finding(kind: .redundantIndex, segment: "", callSite: nil,
                                 evidence: "\(index.table): the index \(index.name) (\(index.columns.joined(separator: ", "))) in \(store) is redundant: \(covering.name) (\(covering.columns.joined(separator: ", "))) begins with the same column\(index.columns.count == 1 ? "" : "s") and serves every search it serves",
                                 fix: "remove \(index.name) from the model (the attribute's Indexed box, or its fetch index) and keep \(covering.name): each index costs every insert and update, and space in the file (`faultline bench index-costs` measures it)",
                                 cost: 0, count: 1, lines: [], events: [])))
        }
        // Unused: only on tables the trace's planned statements read, and only for what the plans could show.
        guard !plans.isEmpty else { return found }
        var readers: [String: Int] = [:], used: Set<String> = []
        for (sql, rows) in plans {
            for table in tables(in: sql) { readers[table, default: 0] += 1 }
            for row in rows { if let name = usedIndex(in: row) { used.insert(name) } }
        }
        let redundantNames = Set(redundant.map(\.index.name))
        for index in indexes where !index.isUnique && !used.contains(index.name) && !redundantNames.contains(index.name) && !named.contains(index.name) {
            guard let count = readers[index.table] else { continue }
            found.append(indexFinding(index.name, Finding(kind: .unusedIndex, segment: "", callSite: nil,
                                 evidence: "\(index.table): the index \(index.name) (\(index.columns.joined(separator: ", "))) in \(store) was used by none of the \(count) planned statement\(count == 1 ? "" : "s") that read \(index.table) in this trace",
                                 fix: "if no other code path searches or sorts by \(index.columns.joined(separator: ", ")), remove the index from the model: it costs every insert and update, and space in the file (this trace shows only the statements it ran)",
                                 cost: 0, count: 1, lines: [], events: [])))
        }
        return found
    }

    /// `finding`, naming `index`.
    static func indexFinding(_ index: String, _ finding: Finding) -> Finding {
        var named = finding
        named.index = index
        return named
    }

    /// The tables a statement reads (`FROM ZX t0`, `JOIN ZY t1`), upper-cased.
    static func tables(in sql: String) -> Set<String> {
        var found: Set<String> = []
        for keyword in [" FROM ", " JOIN "] {
            var rest = Substring(sql)
            while let range = rest.range(of: keyword, options: .caseInsensitive) {
                let name = rest[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                if !name.isEmpty { found.insert(name.uppercased()) }
                rest = rest[range.upperBound...]
            }
        }
        return found
    }

    /// The index a plan row searches with (`SEARCH t0 USING [COVERING] INDEX name (…)`).
    public static func usedIndex(in row: String) -> String? {
        guard let range = row.range(of: " INDEX ") else { return nil }
        let name = row[range.upperBound...].prefix { $0 != " " }
        return name.isEmpty ? nil : String(name)
    }
}
