/// Precomputed SQL for one table (an inheritance hierarchy): the full-row SELECT every fetch and fault uses.
final class TablePlan {
    let table: TableDescription
    /// `SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, <columns> FROM <table> t0` (`SELECT 0, …` for a single-entity table).
    let selectSQL: String
    /// `selectSQL` restricted to one primary key.
    let selectByKeySQL: String
    /// True when the table holds one entity only (Z_ENT is not read).
    let isSingleEntity: Bool

    /// Position of `Z_ENT`, `Z_PK`, `Z_OPT` and the first table column in the SELECT list.
    static let entityColumn: Int32 = 0, keyColumn: Int32 = 1, versionColumn: Int32 = 2, firstColumn: Int32 = 3

    init(table: TableDescription) {
        self.table = table
        isSingleEntity = table.root.subentities.isEmpty
        let columns = [isSingleEntity ? "0" : "t0.Z_ENT", "t0.Z_PK", "t0.Z_OPT"] + table.columns.map { "t0.\($0.name)" }
        selectSQL = "SELECT \(columns.joined(separator: ", ")) FROM \(table.name) t0"
        selectByKeySQL = selectSQL + " WHERE t0.Z_PK = ?"
    }
}

/// Precomputed facts for one entity: how a row decodes into slots and how an object is inserted.
final class EntityPlan {
    unowned let entity: EntityDescription

    struct DecodeStep {
        let slot: Int
        let column: Int32
        /// Column of the destination's Z_ENT for polymorphic to-ones, or -1.
        let entityColumn: Int32
        /// The column holds integers (integer and boolean attributes, to-one keys): read it with one call.
        let isInteger: Bool
    }

    enum InsertValue {
        case attribute(slot: Int)
        /// A binary attribute that allows external storage (see `ExternalBinaryStorage`).
        case externalAttribute(slot: Int)
        case toOne(slot: Int, polymorphic: Bool)
        case destinationEntity(slot: Int)
        /// The row's position in an ordered relationship; `column` indexes `orderColumns`.
        case orderKey(slot: Int, column: Int)
    }

    /// Steps to decode a full row into slots, in column order.
    let decodeSteps: [DecodeStep]
    /// Slot values before decoding: defaults for transient attributes, null elsewhere.
    let template: [Slot]
    /// `INSERT INTO <table>(Z_PK, Z_ENT, Z_OPT, …) VALUES(?, …)`.
    let insertSQL: String
    /// What each bound value after Z_PK, Z_ENT, Z_OPT comes from.
    let insertValues: [InsertValue]
    /// Names of the `Z_FOK_` columns `InsertValue.orderKey` refers to.
    let orderColumns: [String]
    /// The prepared INSERT, once a save has needed it.
    var insertStatement: Statement?
    /// Prepared UPDATEs by changed-slot mask (entities of up to 64 properties).
    var updateStatements: [UInt64: Statement] = [:]
    /// Entity restriction for fetches: (SQL, bounds) or nil when the whole table qualifies.
    let filterWithSubentities: (sql: String, low: Int64, high: Int64)?
    let filterWithoutSubentities: (sql: String, low: Int64, high: Int64)?

    /// The to-one foreign-key columns a row read is checked on (`checkForeignKeys`).
    let foreignKeys: [ForeignKeyColumn]

    /// Slots of binary attributes that allow external storage, and where their files are.
    let externalSlots: [Int]
    let external: ExternalBinaryStorage

    /// `storePath` is nil for an in-memory store.
    init(entity: EntityDescription, storePath: String?) {
        self.entity = entity
        external = ExternalBinaryStorage(storePath: storePath)
        externalSlots = entity.attributes.filter { $0.storesExternally }.map(\.index)
        let table = entity.table!
        var steps: [DecodeStep] = []
        var insertColumns = ["Z_PK", "Z_ENT", "Z_OPT"]
        var insertValues: [InsertValue] = []
        var orderColumns: [String] = []
        var foreignKeys: [ForeignKeyColumn] = []
        for property in entity.properties {
            guard let column = property.columnName, let position = table.position(of: column) else { continue }
            var entityColumn: Int32 = -1
            insertColumns.append(column)
            if let relationship = property as? RelationshipDescription {
                insertValues.append(.toOne(slot: property.index, polymorphic: relationship.entityColumnName != nil))
                if let name = relationship.entityColumnName, let p = table.position(of: name) {
                    entityColumn = Int32(p) + TablePlan.firstColumn
                    insertColumns.append(name)
                    insertValues.append(.destinationEntity(slot: property.index))
                }
                if let name = relationship.orderColumnName {
                    insertColumns.append(name)
                    insertValues.append(.orderKey(slot: property.index, column: orderColumns.count))
                    orderColumns.append(name)
                }
            } else {
                let external = (property as? AttributeDescription)?.storesExternally == true
                insertValues.append(external ? .externalAttribute(slot: property.index) : .attribute(slot: property.index))
            }
            if let relationship = property as? RelationshipDescription, let destination = relationship.destination {
                foreignKeys.append(ForeignKeyColumn(column: Int32(position) + TablePlan.firstColumn, name: column, entityColumn: entityColumn,
                                                    entityColumnName: relationship.entityColumnName ?? "", destination: destination))
            }
            let isInteger = property is RelationshipDescription || (property as? AttributeDescription).map { $0.type.isInteger || $0.type == .boolean } == true
            steps.append(DecodeStep(slot: property.index, column: Int32(position) + TablePlan.firstColumn, entityColumn: entityColumn, isInteger: isInteger))
        }
        decodeSteps = steps
        self.foreignKeys = foreignKeys
        self.insertValues = insertValues
        self.orderColumns = orderColumns
        insertSQL = "INSERT INTO \(table.name)(\(insertColumns.joined(separator: ", "))) VALUES(\(Array(repeating: "?", count: insertColumns.count).joined(separator: ", ")))"
        template = entity.properties.map { property in
            if let attribute = property as? AttributeDescription, attribute.isTransient { return attribute.defaultSlot }
            return .null
        }
        let single = table.root.subentities.isEmpty
        func filter(low: Int, high: Int) -> (String, Int64, Int64)? {
            if single { return nil }
            if low == table.root.entityNumber && high == table.root.lastDescendantNumber { return nil }
            if low == high { return ("t0.Z_ENT = ?", Int64(low), Int64(high)) }
            return ("t0.Z_ENT >= ? AND t0.Z_ENT <= ?", Int64(low), Int64(high))
        }
        filterWithSubentities = filter(low: entity.entityNumber, high: entity.lastDescendantNumber)
        filterWithoutSubentities = filter(low: entity.entityNumber, high: entity.entityNumber)
    }

    /// Decodes the current row of `statement` (a `TablePlan.selectSQL` row) into slots of a block of its own.
    @inline(__always) func decode(_ statement: Statement) -> SlotRow {
        var writer = SlotRowWriter(rowsPerBlock: 1)
        return decode(statement, into: &writer)
    }

    /// Decodes the current row of `statement` into the next row of `writer`'s block (a fetch's rows share blocks).
    @inline(__always) func decode(_ statement: Statement, into writer: inout SlotRowWriter) -> SlotRow {
        let count = template.count
        var slots = writer.row(width: count) { buffer in
            var next = 0
            for step in decodeSteps {
                while next < step.slot {
                    (buffer + next).initialize(to: template[next])
                    next += 1
                }
                var slot = step.isInteger ? statement.integerSlot(at: step.column) : statement.slot(at: step.column)
                if step.entityColumn >= 0, case .integer(let key) = slot {
                    slot = .integer(ToOneReference.pack(key: key, entityNumber: statement.int64(at: step.entityColumn)))
                }
                (buffer + next).initialize(to: slot)
                next += 1
            }
            while next < count {
                (buffer + next).initialize(to: template[next])
                next += 1
            }
        }
        if !externalSlots.isEmpty {
            for slot in externalSlots { slots[slot] = external.read(slots[slot]) }
        }
        return slots
    }
}
