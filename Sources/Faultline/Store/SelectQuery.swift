/// A SELECT over one table (alias `t0`): the entity restriction, an optional primary-key list, a compiled
/// filter's joins, condition and order, and a limit — with its parameters in the order the SQL uses them.
struct SelectQuery {
    let sql: String
    let bindings: [Slot]

    init(select: String, conditions: [String], bounds: [Int64], keys: [Int64]?, filter: FetchFilter?, limit: Int, offset: Int) {
        var sql = select + (filter?.joins ?? "")
        var conditions = conditions
        var bindings = bounds.map(Slot.integer)
        if let keys {
            conditions.append(KeyList.condition("t0.Z_PK", count: keys.count))
            bindings += KeyList.bindings(keys)
        }
        if let condition = filter?.condition {
            conditions.append(condition)
            bindings += filter?.bindings ?? []
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if let order = filter?.orderBy, !order.isEmpty { sql += " ORDER BY " + order.joined(separator: ", ") }
        if limit > 0 || offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            bindings += [.integer(limit > 0 ? Int64(limit) : -1), .integer(Int64(max(offset, 0)))]
        }
        self.sql = sql
        self.bindings = bindings
    }

    func bind(_ statement: Statement) {
        for (i, value) in bindings.enumerated() { statement.bind(value, at: Int32(i + 1)) }
    }
}
