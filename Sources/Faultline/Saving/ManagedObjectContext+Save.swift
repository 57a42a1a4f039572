/// Saving a context: Deny rules, validation, then one write through the coordinator.
extension ManagedObjectContext {
    /// Writes the context's changes to the store. On error nothing is written and the context keeps its
    /// changes (resolve, then save again).
    public func save() throws {
        guard hasChanges else { return }
        try checkDenyRules()
        try validateForSave()
        let changes = SaveChanges(
            inserted: insertedSet.values.sorted { $0.key > $1.key },
            updated: updatedSet.values.sorted { $0.key < $1.key },
            deleted: deletedSet.values.sorted { $0.key < $1.key })
        do {
            try coordinator.save(changes)
        } catch let error as SaveError {
            throw error
        } catch let error as StoreError {
            throw SaveError.store(error)
        }
        didSave(changes)
    }

    private func didSave(_ changes: SaveChanges) {
        for object in changes.inserted {
            registry[object.objectKeyForCache] = nil
            object.key = object.pendingKey
            object.pendingKey = 0
            registry[object.objectKeyForCache] = object
            object.flags.insert(.holdsSnapshot)
        }
        for object in changes.inserted + changes.updated {
            object.flags.subtract([.inserted, .updated])
            object.version = object.pendingVersion
            object.committed = SaveChanges.storedForm(of: object)
            object.changes.removeAll()
            for case .many(let storage) in object.values { storage.markSaved() }
        }
        // Inserted objects hold their new snapshot; updated ones already held theirs.
        for object in changes.inserted { _ = coordinator.retainSnapshot(object.objectKeyForCache) }
        for object in changes.deleted {
            object.flags.remove(.holdsSnapshot) // the coordinator removed the row from the cache
            registry[object.objectKeyForCache] = nil
            object.managedObjectContext = nil
        }
        insertedSet.removeAll()
        updatedSet.removeAll()
        deletedSet.removeAll()
    }
}
