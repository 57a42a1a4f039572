import Foundation

/// Uniqueness constraints, checked inside the save's transaction before any row is written: Core Data's stores
/// enforce a root entity's constraints with a `UNIQUE` index, which would refuse the first duplicate row and hide
/// the others from the merge policy.
extension SQLiteStore {
    /// Every object of the save whose constrained values another row has: a stored row (named by its object ID),
    /// or else another object of the same save (named by its temporary ID).
    func constraintConflicts(_ changes: SaveChanges) throws -> [ConstraintConflict] {
        let candidates = (changes.inserted + changes.updated).filter { $0.entity.hasUniquenessConstraints }
        guard !candidates.isEmpty else { return [] }
        var deleted: Set<ObjectKey> = []
        for object in changes.deleted {
            if let key = object.primaryKeyForStorage { deleted.insert(ObjectKey(table: Int32(object.entity.root.entityNumber), key: key)) }
        }
        var conflicts: [ConstraintConflict] = []
        var constrained: [ObjectIdentifier: EntityDescription] = [:]
        for object in candidates {
            var entity: EntityDescription? = object.entity
            while let current = entity {
                if !current.uniquenessConstraints.isEmpty { constrained[ObjectIdentifier(current)] = current }
                entity = current.superentity
            }
        }
        for entity in constrained.values.sorted(by: { $0.entityNumber < $1.entityNumber }) {
            for constraint in entity.uniquenessConstraints {
                let properties = constraint.compactMap { entity.property(named: $0) }
                guard properties.count == constraint.count else { continue }
                // The objects whose values for this constraint are new: inserted ones, and updated ones that changed one
                // of its properties (their stored rows no longer count).
                var members: [(object: ManagedObject, values: [ComparedValue])] = []
                var leaving = deleted
                for object in candidates where object.entity.entityNumber >= entity.entityNumber && object.entity.entityNumber <= entity.lastDescendantNumber {
                    if object.isUpdated && !properties.contains(where: { object.changes.contains($0.index) }) { continue }
                    if object.isUpdated, let key = object.primaryKeyForStorage {
                        leaving.insert(ObjectKey(table: Int32(entity.root.entityNumber), key: key))
                    }
                    guard let values = storedValues(of: object, properties) else { continue }
                    members.append((object, values))
                }
                var sameSave: [[ComparedValue]: [ManagedObject]] = [:]
                for member in members { sameSave[member.values, default: []].append(member.object) }
                for member in members {
                    if let stored = try storedRow(like: member.object, entity: entity, properties: properties, skipping: leaving) {
                        conflicts.append(ConstraintConflict(constraint: constraint, object: member.object.objectID, databaseObject: stored, conflictingObject: nil))
                    } else if let other = sameSave[member.values]?.first(where: { $0 !== member.object }) {
                        conflicts.append(ConstraintConflict(constraint: constraint, object: member.object.objectID, databaseObject: nil, conflictingObject: other.objectID))
                    }
                }
            }
        }
        return conflicts
    }

    /// The first stored row of `entity` (or its sub-entities) with `object`'s values for `properties`, other than
    /// the rows in `skipping`.
    private func storedRow(like object: ManagedObject, entity: EntityDescription, properties: [PropertyDescription],
                           skipping: Set<ObjectKey>) throws -> ManagedObjectID? {
        let sql = "SELECT Z_PK, Z_ENT FROM \(entity.table.name) WHERE "
            + properties.map { "\($0.columnName!) = ?" }.joined(separator: " AND ") + " AND Z_ENT >= ? AND Z_ENT <= ?"
        let statement = try statement(sql)
        defer { statement.reset() }
        var index: Int32 = 1
        for property in properties {
            bindStored(object.values[property.index], property: property, to: statement, at: index)
            index += 1
        }
        statement.bind(Int64(entity.entityNumber), at: index)
        statement.bind(Int64(entity.lastDescendantNumber), at: index + 1)
        let table = Int32(entity.root.entityNumber)
        while try wrap({ try statement.step() }) {
            let key = try statement.storedKey(at: 0, table: entity.table.name, column: "Z_PK", row: StoredKeyRule.row(statement.int64(at: 0)))
            if skipping.contains(ObjectKey(table: table, key: key)) { continue }
            let rowEntity = try statement.storedEntity(at: 1, of: entity.root, table: entity.table.name, column: "Z_ENT", row: StoredKeyRule.row(key))
            return ManagedObjectID(entity: rowEntity, key: key, storeIdentifier: identifier)
        }
        return nil
    }

    /// The values SQLite compares for `properties` (strings byte for byte, to-ones by key); nil when one is null,
    /// which no constraint counts.
    private func storedValues(of object: ManagedObject, _ properties: [PropertyDescription]) -> [ComparedValue]? {
        var values: [ComparedValue] = []
        values.reserveCapacity(properties.count)
        for property in properties {
            let value: ComparedValue
            switch object.values[property.index] {
            case .null, .many: return nil
            case .integer(let packed):
                let polymorphic = (property as? RelationshipDescription)?.entityColumnName != nil
                value = .integer(polymorphic ? packed & ToOneReference.keyMask : packed)
            case .real(let number): value = .real(number)
            case .text(let text): value = .bytes(Data(text.utf8))
            case .blob(let data): value = .bytes(data)
            case .object(let destination):
                guard let key = destination.primaryKeyForStorage, !destination.isDeleted else { return nil }
                value = .integer(key)
            }
            values.append(value)
        }
        return values
    }
}

/// A value as SQLite's BINARY collation compares it.
private enum ComparedValue: Hashable {
    case integer(Int64)
    case real(Double)
    case bytes(Data)
}
