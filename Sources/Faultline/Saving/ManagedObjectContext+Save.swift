/// Saving a context: Deny rules, validation, then one write through the coordinator.
extension ManagedObjectContext {
    /// Writes the context's changes to the store. On error nothing is written and the context keeps its
    /// changes (resolve, then save again).
    public func save(file: StaticString = #fileID, line: UInt = #line) throws {
        if checksQueue { checkQueue(touching: nil) }
        guard hasChanges else { return }
        notifyWillSave()
        try checkDenyRules()
        try validateForSave()
        let changes = SaveChanges(
            inserted: pendingInsertions,
            updated: updatedSet.values.sorted { $0.key < $1.key },
            deleted: deletedSet.values.sorted { $0.key < $1.key })
        let write = {
            do {
                try self.coordinator.save(changes)
            } catch let error as StoreError {
                throw SaveError.store(error)
            }
        }
        if probesEnabled {
            try tracedSave(changes, callSite: callSite(file, line), write)
        } else {
            try write()
        }
        // Deleted objects leave the context in didSave: their IDs first.
        let deleted = saveObservers.didSave.isEmpty ? [] : changes.deleted.map(\.objectID)
        didSave(changes)
        notifyDidSave(changes, deleted: deleted)
    }

    private func didSave(_ changes: SaveChanges) {
        for object in changes.inserted {
            object.key = object.pendingKey
            object.pendingKey = 0
            registry[object.objectKeyForCache] = object
            object.flags.insert(.holdsSnapshot)
            // A new object's untouched to-many relationships are known to be empty: no fault to fire later.
            for slot in object.entity.toManySlots where object.values[slot].isNull {
                object.values[slot] = .many(ToManyStorage(objects: []))
            }
        }
        for object in changes.inserted + changes.updated {
            object.flags.subtract([.inserted, .updated])
            object.version = object.pendingVersion
            object.changes.removeAll()
            if object.entity.snapshotNeedsStoredForm {
                for case .many(let storage) in object.values { storage.markSaved() }
            }
        }
        for object in changes.deleted {
            object.flags.remove(.holdsSnapshot) // the coordinator removed the row from the cache
            registry[object.objectKeyForCache] = nil
            object.managedObjectContext = nil
        }
        insertionOrder.removeAll()
        insertedCount = 0
        updatedSet.removeAll()
        deletedSet.removeAll()
    }
}
