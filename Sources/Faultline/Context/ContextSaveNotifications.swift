import Foundation

/// What a context's save wrote: Core Data's `NSManagedObjectContextDidSave` in a Sendable form (object IDs, all
/// permanent), to hand to other contexts on their own queues.
public struct SaveNotification: Sendable {
    /// The saving context's `serialNumber`.
    public let context: Int
    /// Objects the save inserted.
    public let inserted: [ManagedObjectID]
    /// Objects it updated.
    public let updated: [ManagedObjectID]
    /// Objects it deleted.
    public let deleted: [ManagedObjectID]
    /// The coordinator the save went through (a context on another coordinator must also drop its cached rows).
    let coordinator: ObjectIdentifier

    /// The same IDs as remote changes.
    public var changes: RemoteChanges { RemoteChanges(inserted: inserted, updated: updated, deleted: deleted) }
}

/// Removes an observer when passed to `ManagedObjectContext.removeObserver(_:)`.
public struct ContextObservation: Hashable, Sendable {
    let id: Int
}

/// Save observers of one context.
final class SaveObservers {
    var nextID = 0
    var willSave: [(Int, () -> Void)] = []
    var didSave: [(Int, (SaveNotification) -> Void)] = []
}

extension ManagedObjectContext {
    /// Calls `handler` on this context's queue just before each save that has changes (Core Data's
    /// `NSManagedObjectContextWillSave`); changes made by the handler are saved too.
    @discardableResult
    public func addWillSaveObserver(_ handler: @escaping () -> Void) -> ContextObservation {
        saveObservers.nextID += 1
        saveObservers.willSave.append((saveObservers.nextID, handler))
        return ContextObservation(id: saveObservers.nextID)
    }

    /// Calls `handler` on this context's queue after each successful save with what it wrote (Core Data's
    /// `NSManagedObjectContextDidSave`). To bring another context up to date:
    /// `other.perform { other.mergeChanges(fromContextDidSave: notification) }`.
    @discardableResult
    public func addDidSaveObserver(_ handler: @escaping (SaveNotification) -> Void) -> ContextObservation {
        saveObservers.nextID += 1
        saveObservers.didSave.append((saveObservers.nextID, handler))
        return ContextObservation(id: saveObservers.nextID)
    }

    /// Stops the observer `observation` names (will-save, did-save or objects-did-change).
    public func removeObserver(_ observation: ContextObservation) {
        saveObservers.willSave.removeAll { $0.0 == observation.id }
        saveObservers.didSave.removeAll { $0.0 == observation.id }
        changeTracker?.observers.removeAll { $0.0 == observation.id }
    }

    /// Brings this context up to date with another context's save (call on this context's queue): updated objects
    /// are refreshed (keeping unsaved changes), deleted ones let go, relationships that led to them reloaded.
    public func mergeChanges(fromContextDidSave notification: SaveNotification) {
        if notification.coordinator != ObjectIdentifier(coordinator) {
            // Another coordinator wrote the file: this one's cached rows for those objects are stale.
            coordinator.forgetCachedRows(of: notification.updated + notification.deleted)
        }
        merge(notification.changes)
    }

    func notifyWillSave() {
        for (_, handler) in saveObservers.willSave { handler() }
    }

    func notifyDidSave(_ notification: SaveNotification) {
        for (_, handler) in saveObservers.didSave { handler(notification) }
    }
}
