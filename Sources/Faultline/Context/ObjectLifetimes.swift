/// Core Data's object lifetimes: a context holds its unchanged objects weakly, so an object the program drops goes
/// away with its hold on the row cache's snapshot; objects with unsaved changes are held (in the inserted, updated
/// and deleted sets) until saved or rolled back; `retainsRegisteredObjects` holds them all.
extension ManagedObjectContext {
    /// Core Data's `retainsRegisteredObjects`: true keeps every registered object alive until it is unregistered
    /// (reset, a saved deletion); false (the default) holds only objects with unsaved changes.
    public var retainsRegisteredObjects: Bool {
        get { registry.retainsObjects }
        set { registry.retainsObjects = newValue }
    }

    /// Called from the `deinit` of an object this context still owns: it leaves the registry, its batch and the
    /// prefetch watch, and lets go of its snapshot.
    ///
    /// Its values are released here, not by Swift after the `deinit`: an object's values may hold the only
    /// reference to another object (a fired to-one), whose values hold the next, so a long chain would otherwise be
    /// released by a recursion as deep as the chain. The outermost release drains the values nested ones queue.
    func objectWillDeinit(_ object: ManagedObject) {
        let flags = object.flags
        if object.key > 0 {
            let key = object.objectKeyForCache
            if registry.remove(object, at: key) && !flags.contains(.fault) { materializedCount -= 1 }
            if flags.contains(.holdsSnapshot) {
                // `reader` would retain the coordinator for the call: one retain and release per object let go.
                if let generation { generation.releaseSnapshot(key) } else { coordinator.releaseSnapshot(key) }
            }
        }
        if flags.contains(.watched) { watchedObjects[ObjectIdentifier(object)] = nil }
        if flags.contains(.batched) { leaveBatch(object) }
        guard !object.values.isEmpty || flags.contains(.hasCommittedCopy) else { return }
        if releasingObjects {
            deferredReleases.append(object.values)
            if flags.contains(.hasCommittedCopy) { deferredReleases.append(object.committedCopy) }
            object.values = []
            object.committedCopy = []
            return
        }
        releasingObjects = true
        object.values = []
        object.committedCopy = []
        while let values = deferredReleases.popLast() { withExtendedLifetime(values) {} }
        releasingObjects = false
    }
}
