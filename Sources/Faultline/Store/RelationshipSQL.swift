/// SQL that reads a to-many relationship's destination keys.
enum RelationshipSQL {
    /// One parameter: the source's Z_PK. Rows: (destination Z_ENT or 0, destination Z_PK).
    static func select(_ relationship: RelationshipDescription, singleEntity: Bool) -> String {
        let destinationTable = relationship.destination.table.name
        if let join = relationship.joinTable {
            let order = join.orderColumn.map { " ORDER BY j.\($0), j.\(join.destinationColumn)" } ?? ""
            if singleEntity {
                return "SELECT 0, j.\(join.destinationColumn) FROM \(join.name) j WHERE j.\(join.sourceColumn) = ?\(order)"
            }
            return "SELECT t0.Z_ENT, t0.Z_PK FROM \(destinationTable) t0 JOIN \(join.name) j ON t0.Z_PK = j.\(join.destinationColumn) WHERE j.\(join.sourceColumn) = ?\(order)"
        }
        let inverse = relationship.inverse!
        let entity = singleEntity ? "0" : "t0.Z_ENT"
        var sql = "SELECT \(entity), t0.Z_PK FROM \(destinationTable) t0 WHERE t0.\(inverse.columnName!) = ?"
        if let order = inverse.orderColumnName { sql += " ORDER BY t0.\(order), t0.Z_PK" }
        return sql
    }
}
