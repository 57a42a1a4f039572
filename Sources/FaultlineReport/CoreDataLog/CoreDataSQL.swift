import Foundation

/// What a statement in Core Data's SQL debug output does, read from its text.
struct CoreDataSQL {
    enum Kind { case select, insert, update, delete, begin, commit, rollback, pragma, other }

    /// The SQL with runs of spaces collapsed (Core Data writes `WHERE  t0.`, `)  LIMIT`) and no trailing space.
    let text: String
    let kind: Kind
    /// The table read or written (`ZPOST`), when there is one.
    let table: String?

    init(_ raw: String) {
        var collapsed = ""
        collapsed.reserveCapacity(raw.utf8.count)
        var lastWasSpace = false
        for character in raw {
            let space = character == " " || character == "\t"
            if space && lastWasSpace { continue }
            collapsed.append(space ? " " : character)
            lastWasSpace = space
        }
        let text = collapsed.trimmingCharacters(in: .whitespaces)
        self.text = text
        let upper = text.prefix(24).uppercased()
        func word(after prefix: String) -> String? { Self.name(after: prefix, in: text) }
        if upper.hasPrefix("SELECT") {
            kind = .select
            table = word(after: " FROM ")
        } else if upper.hasPrefix("INSERT") {
            kind = .insert
            table = word(after: " INTO ")
        } else if upper.hasPrefix("UPDATE") {
            kind = .update
            table = upper.hasPrefix("UPDATE OR ") ? word(after: "UPDATE OR FAIL ") ?? word(after: "UPDATE OR REPLACE ") : word(after: "UPDATE ")
        } else if upper.hasPrefix("DELETE") {
            kind = .delete
            table = word(after: " FROM ")
        } else if upper.hasPrefix("BEGIN") {
            kind = .begin; table = nil
        } else if upper.hasPrefix("COMMIT") || upper.hasPrefix("END") {
            kind = .commit; table = nil
        } else if upper.hasPrefix("ROLLBACK") {
            kind = .rollback; table = nil
        } else if upper.hasPrefix("PRAGMA") {
            kind = .pragma; table = nil
        } else {
            kind = .other; table = nil
        }
    }

    /// The name after `prefix` (letters, digits, `_`).
    private static func name(after prefix: String, in text: String) -> String? {
        guard let range = text.range(of: prefix, options: [.caseInsensitive]) else { return nil }
        let name = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
        return name.isEmpty ? nil : String(name)
    }

    /// Core Data's own bookkeeping tables (key allocation, metadata, model cache, history, SQLite's catalogue).
    var isBookkeeping: Bool {
        guard let table else { return kind == .pragma || kind == .other }
        return table.hasPrefix("Z_PRIMARYKEY") || table.hasPrefix("Z_METADATA") || table.hasPrefix("Z_MODELCACHE")
            || table.uppercased() == "SQLITE_MASTER" || table.hasPrefix("ATRANSACTION") || table.hasPrefix("ACHANGE")
    }

    /// A fault's read of one object: `… FROM ZX t0 WHERE t0.Z_PK = ?` and nothing after it.
    var isObjectFault: Bool { kind == .select && text.hasSuffix(" WHERE t0.Z_PK = ?") }

    /// A statement that reads through `_Z_intarray` (prefetching, or a batch of a batched fetch).
    var usesIntarray: Bool { text.contains("_Z_intarray") }

    /// A prefetch: the destinations of a relationship for keys in `_Z_intarray` (a batch reads `t0.Z_PK IN` it).
    var isPrefetch: Bool { usesIntarray && !text.contains("t0.Z_PK IN (SELECT * FROM _Z_intarray") }

    /// A SELECT of keys only (`SELECT 0, t0.Z_PK FROM …`, `SELECT t0.Z_ENT, t0.Z_PK FROM …`): the first step of a
    /// batched fetch, or an object-ID fetch.
    var selectsKeysOnly: Bool {
        let columns = selectedColumns.map { $0.trimmingCharacters(in: .whitespaces) }
        return !columns.isEmpty && columns.allSatisfy { $0 == "0" || $0 == "1" || $0 == "t0.Z_PK" || $0 == "t0.Z_ENT" || $0 == "DISTINCT t0.Z_PK" } && columns.contains { $0.hasSuffix("Z_PK") }
    }

    /// The columns a SELECT reads, as written (`t0.ZCUSTOMER`), up to its first FROM.
    var selectedColumns: [Substring] {
        guard kind == .select, let from = text.range(of: " FROM ") else { return [] }
        return text[text.index(text.startIndex, offsetBy: 7)..<from.lowerBound].split(separator: ",").map { $0.drop { $0 == " " } }
    }

    /// A count request's SELECT.
    var isCount: Bool { kind == .select && text.uppercased().hasPrefix("SELECT COUNT(") }

    /// The condition and order of a SELECT (`WHERE …` up to `LIMIT`), which tells "the same fetch" apart.
    var filter: String? {
        guard kind == .select else { return nil }
        guard let start = text.range(of: " WHERE ")?.lowerBound ?? text.range(of: " ORDER BY ")?.lowerBound else { return nil }
        var clause = text[text.index(after: start)...]
        if let limit = clause.range(of: " LIMIT ") { clause = clause[..<limit.lowerBound] }
        return String(clause)
    }

    /// The columns of the ORDER BY clause.
    var sortColumns: [String] { Analyzers.orderColumns(text) }
}
