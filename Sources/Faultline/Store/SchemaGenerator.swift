/// The DDL of a model's store, in Core Data's layout (docs/store-format.md).
public enum SchemaGenerator {
    /// Every statement that creates an empty store for `model`, in order.
    public static func statements(for model: ManagedObjectModel) -> [String] {
        var sql: [String] = []
        for table in model.tables {
            var columns = ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
            columns += table.columns.map { "\($0.name) \($0.type)" }
            sql.append("CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )")
        }
        for join in model.joinTables {
            var columns = ["\(join.sourceColumn) INTEGER", "\(join.destinationColumn) INTEGER"]
            for order in [join.orderColumn, join.inverseOrderColumn].compactMap({ $0 }) { columns.append("\(order) INTEGER") }
            columns.append("PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn))")
            sql.append("CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")) )")
            sql.append("CREATE INDEX \(join.name)_\(join.destinationColumn)_INDEX ON \(join.name) (\(join.destinationColumn), \(join.sourceColumn))")
        }
        for table in model.tables {
            for index in table.indexes {
                var statement = "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(index.name) ON \(table.name) (\(index.columnList))"
                if let condition = index.condition { statement += " WHERE \(condition)" }
                sql.append(statement)
            }
        }
        sql += DerivedAttributeTriggers.triggers(for: model).statements
        sql.append("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        sql.append("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        sql.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
        return sql
    }

    /// The DDL as one script, each statement ending with `;`.
    public static func script(for model: ManagedObjectModel) -> String {
        var script = statements(for: model).map { $0 + ";\n" }.joined()
        // Fetched properties have no column (Core Data computes them by a fetch): said, so that none is looked for.
        for entity in model.entities {
            for fetched in entity.declaredFetchedProperties {
                let predicate = fetched.predicate.map { " where \($0.predicateFormat)" } ?? ""
                script += "-- \(entity.name).\(fetched.name): fetched property, \(fetched.destinationEntityName) objects\(predicate); no column\n"
            }
        }
        return script
    }
}
