/// An index's name, table and columns, from its `CREATE INDEX` statement (Core Data's and Faultline's shapes:
/// `CREATE INDEX [IF NOT EXISTS] name ON table (column [ASC|DESC] [COLLATE x], …)`).
struct IndexDefinition: Equatable {
    var name: String
    var table: String
    var columns: [String]
    /// A UNIQUE index enforces a constraint, and a partial one (`WHERE`) covers some rows: neither is redundant
    /// beside a compound index.
    var enforcesOrFilters: Bool

    init?(sql: String) {
        var rest = Substring(sql).drop { $0 == " " }
        func word() -> Substring {
            rest = rest.drop { $0 == " " }
            let token: Substring
            if rest.first == "\"" || rest.first == "`" || rest.first == "[" {
                let close: Character = rest.first == "[" ? "]" : rest.first!
                let body = rest.dropFirst().prefix { $0 != close }
                token = body
                rest = rest.dropFirst(body.count + 2)
            } else {
                token = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
                rest = rest.dropFirst(token.count)
            }
            return token
        }
        guard word().uppercased() == "CREATE" else { return nil }
        var next = word().uppercased()
        let unique = next == "UNIQUE"
        if unique { next = word().uppercased() }
        guard next == "INDEX" else { return nil }
        var name = word()
        if name.uppercased() == "IF" {
            guard word().uppercased() == "NOT", word().uppercased() == "EXISTS" else { return nil }
            name = word()
        }
        guard !name.isEmpty, word().uppercased() == "ON" else { return nil }
        let table = word()
        rest = rest.drop { $0 == " " }
        guard !table.isEmpty, rest.first == "(", let close = rest.firstIndex(of: ")") else { return nil }
        let list = rest[rest.index(after: rest.startIndex)..<close]
        let columns = list.split(separator: ",").compactMap { part -> String? in
            let column = part.drop { $0 == " " }.prefix { $0 != " " }.trimmingCharacters(in: ["\"", "`", "[", "]"])
            return column.isEmpty ? nil : String(column).uppercased()
        }
        guard !columns.isEmpty else { return nil }
        self.name = String(name)
        self.table = String(table).uppercased()
        self.columns = columns
        let after = rest[rest.index(after: close)...].uppercased()
        self.enforcesOrFilters = unique || after.range(of: #"\bWHERE\b"#, options: .regularExpression) != nil
    }
}
