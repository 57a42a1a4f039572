/// Fault fulfilment: from the row cache when the row is there (no SQL), else one SELECT by primary key.
extension ManagedObjectContext {
    /// Fires `object`'s fault. A row deleted elsewhere leaves the object inaccessible (nil values) and sets
    /// `lastFaultError`.
    func fulfillFault(_ object: ManagedObject) {
        guard object.flags.contains(.fault) else { return }
        if probesEnabled {
            tracedFault(object) { performFaultFulfilment(object) }
        } else {
            performFaultFulfilment(object)
        }
    }

    private func performFaultFulfilment(_ object: ManagedObject) {
        if let parent, fulfillFromParent(object, parent) {
            if !object.flags.contains(.inaccessible) { object.awakeFromFetch() }
            return
        }
        if object.flags.contains(.batched), fulfillBatch(containing: object) { return }
        do {
            let maxAge = stalenessInterval < 0 ? nil : UInt64(min(stalenessInterval, 1e9) * 1e9)
            if let row = try reader.snapshotForFault(entity: object.entity, key: object.key, retain: !object.flags.contains(.holdsSnapshot), maxAge: maxAge) {
                fulfill(object, values: row.values, version: row.version)
                object.awakeFromFetch()
                return
            }
            lastFaultError = .objectNotFound(object.objectID)
        } catch let error as StoreError {
            lastFaultError = error
        } catch {
            lastFaultError = .objectNotFound(object.objectID)
        }
        if object.key > 0 { materializedCount += 1 }
        object.flags.remove(.fault)
        object.flags.insert(.inaccessible)
        if shouldDeleteInaccessibleFaults { object.flags.insert(.deletedInStore) }
        object.values = SlotRow(Array(repeating: .null, count: object.entity.properties.count))
        object.valuesAreCommitted()
    }

    @inline(__always) func fulfill(_ object: ManagedObject, values: SlotRow, version: Int64) {
        if object.flags.contains(.fault) && object.key > 0 { materializedCount &+= 1 }
        object.values = values
        object.valuesAreCommitted()
        object.version = version
        object.flags.remove(.fault)
        object.flags.insert(.holdsSnapshot)
    }

    /// Loads a to-many relationship's members as (uniqued) faults. Objects deleted in this context are left out; a
    /// store that cannot be read leaves the relationship empty and sets `lastFaultError`.
    func fireRelationshipFault(_ relationship: RelationshipDescription, of object: ManagedObject, countOnly: Bool = false) -> [ManagedObject] {
        guard object.key > 0 || parent != nil, !relationship.isTransient else { return [] }
        if probesEnabled {
            return tracedRelationshipFault(relationship, of: object, countOnly: countOnly) { loadRelationship(relationship, of: object) }
        }
        return loadRelationship(relationship, of: object)
    }

    private func loadRelationship(_ relationship: RelationshipDescription, of object: ManagedObject) -> [ManagedObject] {
        if let parent, let members = parent.performAndWait({ parent.childMembers(relationship, entity: object.entity, key: object.key) }) {
            return members.compactMap { member in
                let object = faultingObject(entity: member.entity, key: member.key)
                return object.isDeleted ? nil : object
            }
        }
        guard object.key > 0 else { return [] }
        let keys: [(EntityDescription, Int64)]
        do {
            keys = try reader.relationshipKeys(relationship, of: object.key)
        } catch {
            // Left empty, as a fault that cannot be fulfilled leaves its object inaccessible; the error says why.
            lastFaultError = error as? StoreError ?? .objectNotFound(object.objectID)
            return []
        }
        var result: [ManagedObject] = []
        result.reserveCapacity(keys.count)
        for (entity, key) in keys {
            let member = faultingObject(entity: entity, key: key)
            if !member.isDeleted { result.append(member) }
        }
        return result
    }
}
