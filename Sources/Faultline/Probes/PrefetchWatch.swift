import Foundation

/// With probes on, the objects a prefetch loads are watched: their first use (any value read) is counted, and when
/// the context resets or goes away a `prefetchUse` event says how many of them were used — a prefetch none of
/// whose objects were used only cost a statement and memory.
final class PrefetchWatch {
    let keyPath: String
    let entity: String
    let callSite: CallSite?
    var loaded = 0
    var used = 0

    init(keyPath: String, entity: String, callSite: CallSite?) {
        self.keyPath = keyPath
        self.entity = entity
        self.callSite = callSite
    }
}

extension ManagedObjectContext {
    /// Starts watching the objects a prefetch of `keyPath` from `entity` loaded (probes on only).
    func watchPrefetched(_ objects: [ManagedObject], keyPath: String, entity: String) {
        let watch = PrefetchWatch(keyPath: keyPath, entity: entity, callSite: outerCallSite)
        for object in objects where !object.flags.contains(.watched) && !object.flags.contains(.inaccessible) {
            object.flags.insert(.watched)
            watchedObjects[ObjectIdentifier(object)] = watch
            watch.loaded += 1
        }
        if watch.loaded > 0 { prefetchWatches.append(watch) }
    }

    /// Called by an object's first value access after a prefetch loaded it.
    func notePrefetchedObjectUsed(_ object: ManagedObject) {
        watchedObjects.removeValue(forKey: ObjectIdentifier(object))?.used += 1
    }

    /// Records a `prefetchUse` event per watched prefetch and stops watching.
    func reportPrefetchUse() {
        guard !prefetchWatches.isEmpty else { return }
        for watch in prefetchWatches {
            coordinator.probes.record(.prefetchUse(PrefetchUseEvent(keyPath: watch.keyPath, entity: watch.entity, loaded: watch.loaded,
                                                                    used: watch.used, callSite: watch.callSite, context: serialNumber)))
        }
        prefetchWatches.removeAll()
        watchedObjects.removeAll()
    }
}
