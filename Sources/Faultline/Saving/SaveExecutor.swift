import Foundation

/// Writes a save's changes in Core Data's statement shapes: keys from Z_PRIMARYKEY in their own transaction,
/// then one exclusive transaction of INSERTs, version-checked UPDATEs and DELETEs, join-table rows and order
/// keys. Any conflict or error rolls the whole transaction back.
extension SQLiteStore {
    func write(_ changes: SaveChanges) throws {
        try allocateKeys(for: changes.inserted)
        externalFilesWritten = []
        externalFilesReleased = []
        defer { externalFilesWritten = []; externalFilesReleased = [] }
        do {
            try inTransaction {
                let constrained = changes.inserted.contains { $0.entity.hasUniquenessConstraints }
                    || changes.updated.contains { $0.entity.hasUniquenessConstraints }
                if constrained {
                    // Checked before anything is written: a constraint's UNIQUE index would refuse the row first.
                    let violations = try constraintConflicts(changes)
                    if !violations.isEmpty { throw SaveError.constraintConflicts(violations) }
                }
                var conflicts: [(ManagedObject, Int64)] = []
                let positions = try orderPositions(changes)
                // Core Data's order is inserts, updates, deletes. With uniqueness constraints, deletes go first and
                // inserts last: a row that takes over a deleted or changed row's values comes after it let them go.
                if constrained {
                    for object in changes.deleted where !(try delete(object)) { conflicts.append((object, object.version)) }
                } else {
                    for object in changes.inserted { try insert(object, positions: positions) }
                }
                for object in changes.updated where !(try update(object)) { conflicts.append((object, object.version)) }
                if constrained {
                    for object in changes.inserted { try insert(object, positions: positions) }
                } else {
                    for object in changes.deleted where !(try delete(object)) { conflicts.append((object, object.version)) }
                }
                // Objects marked for conflict detection: their rows must still be at the version the context read.
                for object in changes.checked where try currentVersion(of: object) != object.version { conflicts.append((object, object.version)) }
                try writeOrderKeys(positions)
                for object in [changes.inserted, changes.updated].joined() where !object.entity.joinTableOwners.isEmpty { try writeJoinRows(of: object) }
                if tracksHistory && conflicts.isEmpty { try writeHistory(changes) }
                if !conflicts.isEmpty {
                    throw SaveError.conflicts(try conflicts.map { object, expected in
                        MergeConflict(object: object.objectID, oldVersionNumber: expected, newVersionNumber: try currentVersion(of: object) ?? 0)
                    })
                }
            }
        } catch {
            // Keys obtained before the save (`obtainPermanentIDs(for:)`) stay the objects'; the others are given again.
            for object in changes.inserted where !object.flags.contains(.keyObtained) { object.pendingKey = 0 }
            for file in externalFilesWritten { try? FileManager.default.removeItem(at: file) }
            throw error
        }
        for file in externalFilesReleased { try? FileManager.default.removeItem(at: file) }
    }

    /// Gives each inserted object without one its permanent key (`pendingKey`), from Z_PRIMARYKEY in a transaction
    /// per root entity. On failure no object keeps a key given here (keys a committed transaction gave are burnt).
    func allocateKeys(for inserted: [ManagedObject]) throws {
        var byRoot: [Int: [ManagedObject]] = [:]
        for object in inserted {
            object.pendingVersion = 1
            if !object.flags.contains(.keyObtained) { byRoot[object.entity.root.entityNumber, default: []].append(object) }
        }
        do {
            for (_, objects) in byRoot.sorted(by: { $0.key < $1.key }) {
                let range = try allocatePrimaryKeys(root: objects[0].entity.root, count: objects.count)
                for (object, key) in zip(objects, range) { object.pendingKey = key }
            }
        } catch {
            for objects in byRoot.values { for object in objects { object.pendingKey = 0 } }
            throw error
        }
    }

    // MARK: Rows

    private func insert(_ object: ManagedObject, positions: [OrderSlot: OrderKey]) throws {
        let plan = plan(for: object.entity)
        let statement: Statement
        if let prepared = plan.insertStatement {
            statement = prepared
            connection.countStatement()
        } else {
            statement = try self.statement(plan.insertSQL)
            plan.insertStatement = statement
        }
        statement.bind(object.pendingKey, at: 1)
        statement.bind(Int64(object.entity.entityNumber), at: 2)
        statement.bind(Int64(1), at: 3)
        var index: Int32 = 4
        for value in plan.insertValues {
            switch value {
            case .attribute(let slot): statement.bind(object.values[slot], at: index)
            case .externalAttribute(let slot): statement.bind(try externalForm(object.values[slot], plan: plan), at: index)
            case .toOne(let slot, let polymorphic): bindToOne(object.values[slot], polymorphic: polymorphic, to: statement, at: index)
            case .destinationEntity(let slot): bindDestinationEntity(object.values[slot], to: statement, at: index)
            case .orderKey(_, let column):
                if let order = positions[OrderSlot(member: ObjectIdentifier(object), column: plan.orderColumns[column])] { statement.bind(order.position, at: index) } else { statement.bindNull(at: index) }
            }
            index += 1
        }
        try execute(statement)
    }

    /// Returns false on an optimistic-locking conflict.
    private func update(_ object: ManagedObject) throws -> Bool {
        let entity = object.entity
        var columns: [(String, Int, Bool)] = [] // column, slot, is destination entity column
        for property in entity.properties where object.changes.contains(property.index) {
            guard let column = property.columnName else { continue }
            columns.append((column, property.index, false))
            if let relationship = property as? RelationshipDescription, let entityColumn = relationship.entityColumnName {
                columns.append((entityColumn, property.index, true))
            }
        }
        object.pendingVersion = object.version
        guard !columns.isEmpty else { return true }
        let plan = plan(for: entity)
        let statement: Statement
        if let mask = object.changes.smallValue, let prepared = plan.updateStatements[mask] {
            statement = prepared
            connection.countStatement()
        } else {
            let sql = "UPDATE \(entity.table.name) SET \(columns.map { "\($0.0) = ?" }.joined(separator: ", ")), Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?"
            statement = try self.statement(sql)
            if let mask = object.changes.smallValue { plan.updateStatements[mask] = statement }
        }
        let external = plan.externalSlots.isEmpty ? [] : plan.externalSlots.filter { object.changes.contains($0) }
        if !external.isEmpty { try releaseExternalFiles(of: object, slots: external, plan: plan) }
        var index: Int32 = 1
        for (_, slot, isEntity) in columns {
            if isEntity { bindDestinationEntity(object.values[slot], to: statement, at: index) }
            else if external.contains(slot) { statement.bind(try externalForm(object.values[slot], plan: plan), at: index) }
            else { bindStored(object.values[slot], property: entity.properties[slot], to: statement, at: index) }
            index += 1
        }
        statement.bind(object.version &+ 1, at: index)
        statement.bind(object.key, at: index + 1)
        statement.bind(object.version, at: index + 2)
        var changed = try execute(statement)
        if changed == 0, try giveVersion(to: object) { changed = try execute(statement) }
        guard changed == 1 else { return false }
        object.pendingVersion = object.version &+ 1
        return true
    }

    /// A row whose Z_OPT is NULL (a damaged store) reads as version 0, which `WHERE Z_OPT = 0` does not match: such a
    /// row of an object read at 0 is given version 0, in the save's transaction, so that the statement can run again.
    /// True when it was.
    private func giveVersion(to object: ManagedObject) throws -> Bool {
        guard object.version == 0 else { return false }
        let statement = try statement("UPDATE \(object.entity.table.name) SET Z_OPT = 0 WHERE Z_PK = ? AND Z_OPT IS NULL")
        statement.bind(object.key, at: 1)
        return try execute(statement) == 1
    }

    /// Returns false on an optimistic-locking conflict.
    private func delete(_ object: ManagedObject) throws -> Bool {
        let plan = plan(for: object.entity)
        if !plan.externalSlots.isEmpty { try releaseExternalFiles(of: object, slots: plan.externalSlots, plan: plan) }
        let statement = try statement("DELETE FROM \(object.entity.table.name) WHERE Z_PK = ? AND Z_OPT = ?")
        statement.bind(object.key, at: 1)
        statement.bind(object.version, at: 2)
        var changed = try execute(statement)
        if changed == 0, try giveVersion(to: object) { changed = try execute(statement) }
        // A row another writer already deleted is no conflict: the delete has nothing left to do (Core Data).
        let deleted = try changed == 1 || (changed == 0 && currentVersion(of: object) == nil)
        for relationship in object.entity.joinTableRelationships {
            guard let join = relationship.joinTable else { continue }
            let clear = try self.statement(join.isDestinationTable
                ? "UPDATE \(join.name) SET \(join.sourceColumn) = NULL WHERE \(join.sourceColumn) = ?"
                : "DELETE FROM \(join.name) WHERE \(join.sourceColumn) = ?")
            clear.bind(object.key, at: 1)
            try execute(clear)
        }
        return deleted
    }

    private func currentVersion(of object: ManagedObject) throws -> Int64? {
        let statement = try statement("SELECT Z_OPT FROM \(object.entity.table.name) WHERE Z_PK = ?")
        defer { statement.reset() }
        statement.bind(object.key, at: 1)
        return try statement.step() ? statement.int64(at: 0) : nil
    }

    // MARK: Relationships

    struct OrderSlot: Hashable {
        let member: ObjectIdentifier
        let column: String
    }

    struct OrderKey {
        let member: ManagedObject
        let column: String
        let position: Int64

        /// The distance between neighbouring members' keys when Core Data numbers them.
        static let gap: Int64 = 1024

        /// Core Data's order key for the member at `index`: 2048, 3072, 4096, … (gaps of 1024).
        static func position(at index: Int) -> Int64 { 2 * gap + gap * Int64(index) }
    }

    /// The order keys (Core Data's positions) to write for members of changed ordered one-to-many relationships, by
    /// member: only the members whose stored key does not already fit the new order. Core Data numbers members with
    /// gaps of 1024 so that a member can be added or moved without renumbering the others; members that keep their
    /// relative order keep their keys (read from the store inside the save's transaction), the others get keys in
    /// the gaps, and only when a gap is too small is the whole relationship renumbered 2048, 3072, ….
    private func orderPositions(_ changes: SaveChanges) throws -> [OrderSlot: OrderKey] {
        var positions: [OrderSlot: OrderKey] = [:]
        for object in changes.inserted + changes.updated where !object.entity.orderKeyedRelationships.isEmpty {
            for relationship in object.entity.orderKeyedRelationships {
                guard case .many(let storage) = object.values[relationship.index], storage.changed,
                      let inverse = relationship.inverse, let column = inverse.orderColumnName, let inverseColumn = inverse.columnName else { continue }
                let members = storage.objects
                let stored = object.isInserted ? [:] : try storedOrderKeys(table: relationship.destination.table.name, column: column,
                                                                           inverseColumn: inverseColumn, owner: object.key)
                let keys = OrderKeyAssignment.keys(members.map { $0.key > 0 ? stored[$0.key] : nil })
                for (member, key) in zip(members, keys) {
                    guard let key else { continue }
                    positions[OrderSlot(member: ObjectIdentifier(member), column: column)] = OrderKey(member: member, column: column, position: key)
                }
            }
        }
        return positions
    }

    /// The order keys the store holds for the members of `owner`'s relationship, by member key (NULL keys left out).
    private func storedOrderKeys(table: String, column: String, inverseColumn: String, owner: Int64) throws -> [Int64: Int64] {
        let statement = try statement("SELECT Z_PK, \(column) FROM \(table) WHERE \(inverseColumn) = ?")
        defer { statement.reset() }
        statement.bind(owner, at: 1)
        var keys: [Int64: Int64] = [:]
        while try wrap({ try statement.step() }) {
            if !statement.isNull(at: 1) { keys[statement.int64(at: 0)] = statement.int64(at: 1) }
        }
        return keys
    }

    /// Members saved before this save get their order key updated in place (inserted ones got it in the INSERT).
    private func writeOrderKeys(_ positions: [OrderSlot: OrderKey]) throws {
        for order in positions.values where order.member.key > 0 && !order.member.isDeleted {
            let statement = try statement("UPDATE \(order.member.entity.table.name) SET \(order.column) = ? WHERE Z_PK = ?")
            statement.bind(order.position, at: 1)
            statement.bind(order.member.key, at: 2)
            try execute(statement)
        }
    }

    /// Join-table rows of the relationships this object owns: removed members' rows deleted, added members'
    /// rows inserted; an ordered relationship whose order changed is rewritten whole.
    private func writeJoinRows(of object: ManagedObject) throws {
        guard let sourceKey = object.primaryKeyForStorage else { return }
        for relationship in object.entity.joinTableOwners {
            guard let join = relationship.joinTable,
                  case .many(let storage) = object.values[relationship.index], storage.changed || object.isInserted else { continue }
            let current = storage.objects.filter { !$0.isDeleted }
            var removed = storage.original.filter { old in !storage.contains(old) }.compactMap(\.primaryKeyForStorage)
            var added = current.filter { member in !storage.original.contains { $0 === member } || object.isInserted }
            if join.orderColumn != nil {
                removed = storage.original.compactMap(\.primaryKeyForStorage)
                added = current
            }
            if join.isDestinationTable {
                try writeDestinationLinks(join, source: sourceKey, removed: object.isInserted ? [] : removed, added: added)
                continue
            }
            let deleteRow = try statement("DELETE FROM \(join.name) WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?")
            for key in removed where !object.isInserted {
                deleteRow.reset()
                deleteRow.bind(sourceKey, at: 1)
                deleteRow.bind(key, at: 2)
                try execute(deleteRow)
            }
            let columns = [join.sourceColumn, join.destinationColumn] + (join.orderColumn.map { [$0] } ?? [])
            let insertRow = try statement("INSERT OR REPLACE INTO \(join.name)(\(columns.joined(separator: ", "))) VALUES(\(columns.map { _ in "?" }.joined(separator: ", ")))")
            for member in added {
                guard let memberKey = member.primaryKeyForStorage else { continue }
                insertRow.reset()
                insertRow.bind(sourceKey, at: 1)
                insertRow.bind(memberKey, at: 2)
                if join.orderColumn != nil {
                    insertRow.bind(OrderKey.position(at: current.firstIndex { $0 === member } ?? 0), at: 3)
                }
                try execute(insertRow)
            }
        }
    }

    /// A to-many without an inverse: its links are the destinations' column (`JoinTable.isDestinationTable`), set
    /// for added members and cleared for removed ones that still point at this source.
    private func writeDestinationLinks(_ join: JoinTable, source: Int64, removed: [Int64], added: [ManagedObject]) throws {
        let clear = try statement("UPDATE \(join.name) SET \(join.sourceColumn) = NULL WHERE Z_PK = ? AND \(join.sourceColumn) = ?")
        for key in removed {
            clear.reset()
            clear.bind(key, at: 1)
            clear.bind(source, at: 2)
            try execute(clear)
        }
        let set = try statement("UPDATE \(join.name) SET \(join.sourceColumn) = ? WHERE Z_PK = ?")
        for member in added {
            guard let key = member.primaryKeyForStorage else { continue }
            set.reset()
            set.bind(source, at: 1)
            set.bind(key, at: 2)
            try execute(set)
        }
    }

    // MARK: External binary storage

    /// The stored form of an external-storage value; a file it writes is removed again if the save fails.
    private func externalForm(_ value: Slot, plan: EntityPlan) throws -> Slot {
        let (stored, file) = try plan.external.write(value)
        if let file { externalFilesWritten.append(file) }
        return stored
    }

    /// Notes the files the row's current values of `slots` name: removed once the save has committed.
    private func releaseExternalFiles(of object: ManagedObject, slots: [Int], plan: EntityPlan) throws {
        let columns = slots.compactMap { object.entity.properties[$0].columnName }
        let statement = try statement("SELECT \(columns.joined(separator: ", ")) FROM \(object.entity.table.name) WHERE Z_PK = ?")
        defer { statement.reset() }
        statement.bind(object.key, at: 1)
        guard try wrap({ try statement.step() }) else { return }
        for i in columns.indices {
            if let file = plan.external.file(of: statement.slot(at: Int32(i))) { externalFilesReleased.append(file) }
        }
    }

    // MARK: Binding

    @inline(__always) func bindStored(_ slot: Slot, property: PropertyDescription, to statement: Statement, at index: Int32) {
        if let relationship = property as? RelationshipDescription {
            bindToOne(slot, polymorphic: relationship.entityColumnName != nil, to: statement, at: index)
        } else {
            statement.bind(slot, at: index)
        }
    }

    @inline(__always) private func bindToOne(_ slot: Slot, polymorphic: Bool, to statement: Statement, at index: Int32) {
        switch slot {
        case .object(let destination):
            if let key = destination.primaryKeyForStorage, !destination.isDeleted { statement.bind(key, at: index) } else { statement.bindNull(at: index) }
        case .integer(let packed):
            statement.bind(polymorphic ? packed & ToOneReference.keyMask : packed, at: index)
        default:
            statement.bindNull(at: index)
        }
    }

    @inline(__always) private func bindDestinationEntity(_ slot: Slot, to statement: Statement, at index: Int32) {
        switch slot {
        case .object(let destination): statement.bind(Int64(destination.entity.entityNumber), at: index)
        case .integer(let packed): statement.bind(packed >> ToOneReference.entityShift, at: index)
        default: statement.bindNull(at: index)
        }
    }

    /// Runs a statement to completion; returns the rows it changed (read before anything else runs).
    @discardableResult
    @inline(__always) private func execute(_ statement: Statement) throws -> Int {
        defer { statement.reset() }
        do {
            while try statement.step() {}
            return connection.changes
        } catch let error as SQLiteError {
            throw StoreError.sqlite(path: path, error: error)
        }
    }
}
