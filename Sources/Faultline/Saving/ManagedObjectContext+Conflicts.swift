/// Conflict resolution for the predefined merge policies, and the snapshots a conflict carries.
extension ManagedObjectContext {
    /// Fills in a conflict's snapshots and says where it arose. A conflict with the store also brings the row
    /// cache up to the stored row (so a refresh and a second save succeed, as in Core Data).
    func describe(_ conflict: MergeConflict) -> MergeConflict {
        var conflict = conflict
        guard let object = registeredObject(for: conflict.object) else { return conflict }
        let key = object.objectKeyForCache
        let committed = Snapshot(entity: object.entity, values: SaveChanges.storedForm(object.committed, entity: object.entity))
        let cached = coordinator.withLock { coordinator.cachedRow(key) }
        // Reading the row also brings the row cache up to it.
        let persisted = (try? coordinator.readRow(entity: object.entity, key: object.key)) ?? nil
        if let cached, cached.version != object.version, cached.version == persisted?.version {
            // Another context on this coordinator saved: the row cache already had the stored row.
            conflict.objectSnapshot = committed
            conflict.cachedSnapshot = Snapshot(entity: object.entity, values: cached.values)
            conflict.newVersionNumber = cached.version
            return conflict
        }
        conflict.cachedSnapshot = cached.map { Snapshot(entity: object.entity, values: $0.values) } ?? committed
        conflict.persistedSnapshot = persisted.map { Snapshot(entity: $0.entity, values: $0.values) }
        conflict.newVersionNumber = persisted?.version ?? 0
        if persisted == nil { coordinator.withLock { coordinator.rowCacheRemove(key) } }
        return conflict
    }

    /// The predefined policies' answer to optimistic-locking conflicts; the save tries again afterwards.
    func resolveLockingConflicts(_ conflicts: [MergeConflict], as type: MergePolicyType) {
        var gone: [ManagedObjectID] = []
        // Rows that are gone: their objects leave the context as a merged deletion makes them (one merge for all).
        defer { if !gone.isEmpty { merge(RemoteChanges(deleted: gone)) } }
        for conflict in conflicts {
            guard let object = registeredObject(for: conflict.object) else { continue }
            guard let current = (conflict.persistedSnapshot ?? conflict.cachedSnapshot)?.values, !conflict.rowWasDeleted else {
                gone.append(conflict.object)
                continue
            }
            let version = conflict.newVersionNumber
            switch type {
            case .error:
                return
            case .rollback:
                refreshObject(object, mergeChanges: false)
            case .overwrite:
                object.version = version
                guard !object.isDeleted else { continue }
                for property in object.entity.properties where property.columnName != nil { object.changes.insert(property.index) }
            case .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump:
                if object.isDeleted {
                    if type == .mergeByPropertyStoreTrump { refreshObject(object, mergeChanges: false) } else { object.version = version }
                    continue
                }
                let base = SaveChanges.storedForm(object.committed, entity: object.entity)
                for property in object.entity.properties where property.columnName != nil && property.index < current.count {
                    let i = property.index
                    guard !Self.sameStoredValue(base[i], current[i]) else { continue }
                    if object.changes.contains(i) && type == .mergeByPropertyObjectTrump { continue }
                    object.values[i] = current[i]
                    object.changes.remove(i)
                }
                object.committed = SlotRow(current)
                object.version = version
            }
        }
    }

    /// The predefined policies' answer to uniqueness-constraint conflicts; the save tries again afterwards.
    func resolveConstraintConflicts(_ conflicts: [ConstraintConflict], as type: MergePolicyType) throws {
        var dropped: Set<ObjectIdentifier> = []
        for conflict in conflicts {
            guard let object = registeredObject(for: conflict.object), !object.isDeleted, !dropped.contains(ObjectIdentifier(object)) else { continue }
            if let otherID = conflict.conflictingObject {
                guard let other = registeredObject(for: otherID), !other.isDeleted, !dropped.contains(ObjectIdentifier(other)) else { continue }
                // Temporary keys count down: the larger one was inserted first.
                let loser = object.isInserted && (!other.isInserted || object.key < other.key) ? object : other
                let winner = loser === object ? other : object
                moveRelationships(from: loser, to: winner)
                delete(loser)
                dropped.insert(ObjectIdentifier(loser))
                continue
            }
            guard let storedID = conflict.databaseObject else { continue }
            switch type {
            case .error:
                return
            case .rollback, .mergeByPropertyStoreTrump:
                if object.isInserted { delete(object) } else { refreshObject(object, mergeChanges: false) }
                dropped.insert(ObjectIdentifier(object))
            case .overwrite:
                let stored = try existingObject(with: storedID)
                delete(stored)
            case .mergeByPropertyObjectTrump:
                if object.isInserted {
                    let stored = try existingObject(with: storedID)
                    for attribute in object.entity.attributes where object.changes.contains(attribute.index) && !conflict.constraint.contains(attribute.name) {
                        guard let target = stored.entity.attribute(named: attribute.name), target.type == attribute.type else { continue }
                        stored.setSlot(object.values[attribute.index], at: target.index)
                        if let transient = object.transientObjects[attribute.index] { stored.transientObjects[target.index] = transient }
                    }
                    moveRelationships(from: object, to: stored)
                    delete(object)
                    dropped.insert(ObjectIdentifier(object))
                } else {
                    // The conflicting change is rolled back; the object's other changes stay.
                    for name in conflict.constraint {
                        guard let property = object.entity.property(named: name), object.changes.contains(property.index) else { continue }
                        object.values[property.index] = object.committed[property.index]
                        object.changes.remove(property.index)
                    }
                }
            }
        }
    }

    /// Gives `winner` the relationships of `loser` that it has too: members of to-many relationships move over
    /// (inverses follow), to-one destinations where `winner` has none.
    private func moveRelationships(from loser: ManagedObject, to winner: ManagedObject) {
        for relationship in loser.entity.relationships where !relationship.isTransient {
            guard let target = winner.entity.relationship(named: relationship.name), target.destination === relationship.destination else { continue }
            if relationship.isToMany {
                for member in loser.objects(for: relationship) { winner.addObject(member, to: target) }
            } else if let destination = loser.destination(of: relationship), winner.destination(of: target) == nil {
                winner.setDestination(destination, of: target)
            }
        }
    }

    /// Two stored-form values are the same.
    static func sameStoredValue(_ a: Slot, _ b: Slot) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.integer(let x), .integer(let y)): return x == y
        case (.real(let x), .real(let y)): return x == y
        case (.text(let x), .text(let y)): return x == y
        case (.blob(let x), .blob(let y)): return x == y
        default: return false
        }
    }
}
