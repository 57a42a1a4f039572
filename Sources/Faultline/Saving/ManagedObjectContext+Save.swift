/// Saving a context: Deny rules, validation, then one write through the coordinator (or into the parent).
extension ManagedObjectContext {
    /// Writes the context's changes to the store (a child context's into its parent). On error nothing is
    /// written and the context keeps its changes (resolve, then save again).
    public func save(file: StaticString = #fileID, line: UInt = #line) throws {
        if checksQueue { checkQueue(touching: nil) }
        processPendingChanges()
        propagatePendingDeletes()
        guard hasChanges else { return }
        notifyWillSave()
        do {
            try checkDenyRules()
            try validateForSave()
            if try callWillSaveHooks() {
                // What the hooks changed is validated too (the rules of what they deleted applied first).
                propagatePendingDeletes()
                try checkDenyRules()
                try validateForSave()
            }
        } catch {
            // A refused save is a save event too (nothing written), so that the trace shows why.
            if probesEnabled { recordRefusedSave(pendingChanges(), error: error, callSite: callSite(file, line)) }
            throw error
        }
        var changes = pendingChanges()
        if let parent {
            try saveChild(into: parent, changes, callSite: probesEnabled ? callSite(file, line) : nil)
            insertWriter.endBlock()
            return
        }
        // Conflicts the merge policy resolves change the objects; the save then tries again (a few times, as
        // another writer may keep changing the rows).
        var attempts = 0
        while true {
            do {
                try write(changes, callSite: probesEnabled ? callSite(file, line) : nil)
                break
            } catch SaveError.conflicts(let conflicts) {
                attempts += 1
                let described = conflicts.map(describe)
                guard attempts < 4 else { throw SaveError.conflicts(described) }
                try mergePolicy.resolve(optimisticLockingConflicts: described, in: self)
            } catch SaveError.constraintConflicts(let conflicts) {
                attempts += 1
                guard attempts < 4 else { throw SaveError.constraintConflicts(conflicts) }
                try mergePolicy.resolve(constraintConflicts: conflicts, in: self)
            }
            propagatePendingDeletes()
            guard hasChanges else { return }
            try checkDenyRules()
            changes = pendingChanges()
        }
        // Deleted objects leave the context in didSave: their IDs first, when anyone will hear of the save.
        let announces = !saveObservers.didSave.isEmpty || !coordinator.autoMergers.isEmpty || !autoMergers.isEmpty
        let deleted = announces ? changes.deleted.map(\.objectID) : []
        let permanentKeys = didSave(changes)
        conflictChecks.removeAll()
        // The saved objects' rows are shared now; their block goes with the last of them, not with the context.
        insertWriter.endBlock()
        if generation != nil {
            // The coordinator's cache holds the inserted rows for them; a pinned context reads its generation's.
            coordinator.releaseSnapshots(changes.inserted.map(\.objectKeyForCache))
            advanceGeneration()
        }
        callDidSaveHooks(changes)
        // As Core Data: a deleted object, once its deletion is saved (and its `didSave()` ran, which may still read
        // it), is a fault that has left the context; setting a value on it is an error rather than a lost write.
        let hooks = model.hasCustomClasses
        for object in changes.deleted { invalidateObject(object, hooks: hooks) }
        guard announces else { return }
        let notification = SaveNotification(context: serialNumber, inserted: changes.inserted.map(\.objectID),
                                            updated: changes.updated.map(\.objectID), deleted: deleted,
                                            coordinator: ObjectIdentifier(coordinator))
        coordinator.autoMergers.notify(notification.changes, except: self)
        autoMergers.notify(notification.changes, permanentKeys: permanentKeys, except: self)
        notifyDidSave(notification)
    }

    private func callDidSaveHooks(_ changes: SaveChanges) {
        guard model.hasCustomClasses else { return }
        for object in changes.inserted + changes.updated + changes.deleted where object.entity.hasCustomClass { object.didSave() }
    }

    private func pendingChanges() -> SaveChanges {
        SaveChanges(inserted: pendingInsertions,
                    updated: updatedSet.values.sorted { $0.key < $1.key },
                    deleted: deletedSet.values.sorted { $0.key < $1.key },
                    checked: conflictChecks.values.filter { $0.managedObjectContext === self && !$0.hasChanges && !$0.isFault && $0.key > 0 }
                        .sorted { $0.key < $1.key },
                    author: transactionAuthor, contextName: name)
    }

    /// Core Data's `detectConflicts(for:)`: at the next save, `object`'s row must still be at the version this
    /// context read, even if the object is unchanged; if another writer changed it, the save meets an
    /// optimistic-locking conflict, resolved by the merge policy as any other. (A fault is not checked: it has read
    /// no version yet.)
    public func detectConflicts(for object: ManagedObject) {
        guard object.managedObjectContext === self else { return }
        conflictChecks[ObjectIdentifier(object)] = object
    }

    /// One write through the coordinator (traced when probes are on).
    private func write(_ changes: SaveChanges, callSite: CallSite?) throws {
        let write = {
            do {
                try self.coordinator.save(changes)
            } catch let error as StoreError {
                throw SaveError.store(error)
            }
        }
        if let callSite {
            try tracedSave(changes, callSite: callSite, write)
        } else {
            try write()
        }
    }

    /// A child's save: validated here, then pushed into the parent as the parent's own unsaved changes.
    private func saveChild(into parent: ManagedObjectContext, _ changes: SaveChanges, callSite: CallSite?) throws {
        if probesEnabled { coordinator.probes.beginOperation(.save) }
        defer { if probesEnabled { coordinator.probes.endOperation() } }
        let start = ProbeClock.now()
        let pushed = saveIntoParent(parent, changes)
        callDidSaveHooks(changes)
        if probesEnabled {
            var event = changes.event(statements: 0, duration: ProbeClock.seconds(start, ProbeClock.now()),
                                      callSite: callSite, context: serialNumber, parent: parent.serialNumber)
            event.gauges = coordinator.withLock { gaugesLocked }
            event.contextName = name
            coordinator.probes.record(.save(event))
        }
        notifyDidSave(SaveNotification(context: serialNumber, inserted: pushed.inserted, updated: pushed.updated,
                                       deleted: pushed.deleted, coordinator: ObjectIdentifier(coordinator)))
    }

    /// Gives inserted objects their permanent keys and clears the change sets; returns the permanent ID of each
    /// former temporary key when children may still know it.
    private func didSave(_ changes: SaveChanges) -> [Int64: ManagedObjectID] {
        var permanentKeys: [Int64: ManagedObjectID] = [:]
        let remembers = hasChildren.load(ordering: .relaxed)
        for object in changes.inserted {
            if remembers {
                temporaryObjects[object.key] = object
                permanentKeys[object.key] = ManagedObjectID(entity: object.entity, key: object.pendingKey, storeIdentifier: coordinator.storeIdentifier)
            }
            if object.flags.contains(.keyObtained) {
                obtainedKeys[object.obtainedObjectKey] = nil
                object.flags.remove(.keyObtained)
            }
            object.key = object.pendingKey
            object.pendingKey = 0
            registry[object.objectKeyForCache] = object
            materializedCount += 1
            object.flags.insert(.holdsSnapshot)
            // A new object's untouched to-many relationships are known to be empty: no fault to fire later.
            for slot in object.entity.toManySlots where object.values[slot].isNull {
                object.values[slot] = .many(ToManyStorage(objects: []))
            }
        }
        // Joined, not concatenated: a copy of the two arrays retained and released every object once more.
        for object in [changes.inserted, changes.updated].joined() {
            object.flags.subtract([.inserted, .updated])
            object.version = object.pendingVersion
            object.changes.removeAll()
            if object.entity.snapshotNeedsStoredForm {
                for case .many(let storage) in object.values { storage.markSaved() }
            }
        }
        for object in changes.deleted {
            object.flags.remove(.holdsSnapshot) // the coordinator removed the row from the cache
            if registry.remove(object, at: object.objectKeyForCache) && !object.isFault { materializedCount -= 1 }
            object.managedObjectContext = nil
        }
        insertionOrder.removeAll()
        insertedCount = 0
        updatedSet.removeAll()
        deletedSet.removeAll()
        return permanentKeys
    }
}
