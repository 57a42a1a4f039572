/// What changed in a context since its last objects-did-change notification (Core Data's
/// `NSManagedObjectContextObjectsDidChange`). Holds the context's objects: use it on the context's queue only.
public struct ObjectsDidChange {
    /// Objects inserted (and not deleted again) since the last notification: the context's own, and, after a merge,
    /// another context's, registered here as faults.
    public let inserted: [ManagedObject]
    /// Objects changed since the last notification, other than the inserted ones; see `changedKeys(of:)`.
    public let updated: [ManagedObject]
    /// Objects deleted since the last notification (objects inserted and deleted in between are in no list).
    public let deleted: [ManagedObject]
    /// Objects refreshed (by `refresh`, `refreshAllObjects` or a merge) since the last notification.
    public let refreshed: [ManagedObject]
    /// Objects invalidated since the last notification: by `reset()`, every object the context held (they are
    /// faults with no context and no values now; fetch again to use their rows).
    public let invalidated: [ManagedObject]
    /// True when every object of the context was invalidated (`reset()`), as Core Data's `invalidatedAll`.
    public let invalidatedAll: Bool
    let keys: [ObjectIdentifier: [String]]

    init(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], refreshed: [ManagedObject],
         invalidated: [ManagedObject] = [], invalidatedAll: Bool = false, keys: [ObjectIdentifier: [String]]) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.refreshed = refreshed
        self.invalidated = invalidated
        self.invalidatedAll = invalidatedAll
        self.keys = keys
    }

    /// The properties of `object` set since the last notification, in model order (empty for objects not updated).
    public func changedKeys(of object: ManagedObject) -> [String] { keys[ObjectIdentifier(object)] ?? [] }
}

/// A context's record of changes between objects-did-change notifications. Exists only once an observer is added,
/// so that a context nobody watches pays one nil test per change.
final class ChangeTracker {
    var observers: [(Int, (ObjectsDidChange) -> Void)] = []
    private var inserted: [ManagedObject] = []
    /// Objects another context inserted, registered here by a merge (faults, not this context's inserts).
    private var merged: [ManagedObject] = []
    private var updated: [ObjectIdentifier: (object: ManagedObject, keys: ChangeMask)] = [:]
    private var updateOrder: [ManagedObject] = []
    private var deleted: [ManagedObject] = []
    private var refreshed: [ObjectIdentifier: ManagedObject] = [:]
    private var refreshOrder: [ManagedObject] = []

    var isEmpty: Bool { inserted.isEmpty && merged.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty }

    func noteInsert(_ object: ManagedObject) { inserted.append(object) }

    func noteMergedInsert(_ object: ManagedObject) { merged.append(object) }

    func noteChange(_ object: ManagedObject, slot: Int) {
        let id = ObjectIdentifier(object)
        if updated[id] == nil {
            updated[id] = (object, ChangeMask())
            updateOrder.append(object)
        }
        updated[id]!.keys.insert(slot)
    }

    func noteDelete(_ object: ManagedObject) { deleted.append(object) }

    /// The slots of `object` changed since the last notification.
    func eventChanges(of object: ManagedObject) -> ChangeMask? { updated[ObjectIdentifier(object)]?.keys }

    /// True when someone observes the changes (a tracker also exists for `changedValuesForCurrentEvent()`).
    var isObserved: Bool { !observers.isEmpty }

    func noteRefresh(_ object: ManagedObject) {
        if refreshed.updateValue(object, forKey: ObjectIdentifier(object)) == nil { refreshOrder.append(object) }
    }

    /// The notification for what was noted, and a clean slate.
    func take() -> ObjectsDidChange {
        let insertedNow = Set(inserted.lazy.map(ObjectIdentifier.init))
        let deletedNow = Set(deleted.lazy.map(ObjectIdentifier.init))
        let insertedList = inserted.filter { !deletedNow.contains(ObjectIdentifier($0)) && $0.isInserted }
            + merged.filter { !deletedNow.contains(ObjectIdentifier($0)) }
        let deletedList = deleted.filter { !insertedNow.contains(ObjectIdentifier($0)) }
        var keys: [ObjectIdentifier: [String]] = [:]
        var updatedList: [ManagedObject] = []
        for object in updateOrder {
            let id = ObjectIdentifier(object)
            guard !insertedNow.contains(id), !deletedNow.contains(id), let mask = updated[id]?.keys else { continue }
            updatedList.append(object)
            keys[id] = object.entity.properties.filter { mask.contains($0.index) }.map(\.name)
        }
        let note = ObjectsDidChange(inserted: insertedList, updated: updatedList, deleted: deletedList,
                                    refreshed: refreshOrder.filter { !deletedNow.contains(ObjectIdentifier($0)) }, keys: keys)
        inserted.removeAll()
        merged.removeAll()
        updated.removeAll()
        updateOrder.removeAll()
        deleted.removeAll()
        refreshed.removeAll()
        refreshOrder.removeAll()
        return note
    }
}

extension ManagedObjectContext {
    /// Calls `handler` on this context's queue with the objects inserted, updated (with their changed keys),
    /// deleted and refreshed since the last notification. Notifications go out from `processPendingChanges()`,
    /// at the end of each `perform` block, before a save, and after a merge or refresh.
    @discardableResult
    public func addObjectsDidChangeObserver(_ handler: @escaping (ObjectsDidChange) -> Void) -> ContextObservation {
        startTrackingChanges()
        saveObservers.nextID += 1
        changeTracker!.observers.append((saveObservers.nextID, handler))
        return ContextObservation(id: saveObservers.nextID)
    }

    /// Records changes event by event from now on (objects-did-change observers, `changedValuesForCurrentEvent()`).
    func startTrackingChanges() {
        guard changeTracker == nil else { return }
        changeTracker = ChangeTracker()
        trackObjects()
    }

    /// Ends the event: applies the delete rules of objects deleted during it (`propagatesDeletesAtEndOfEvent`),
    /// closes the undo manager's implicit group, and sends the objects-did-change notification for changes made
    /// since the last one, if there were any.
    public func processPendingChanges() {
        if propagatesDeletesAtEndOfEvent && !pendingDeletePropagation.isEmpty { propagatePendingDeletes() }
        undoManager?.closeImplicitGroup()
        guard let tracker = changeTracker, !tracker.isEmpty else { return }
        let note = tracker.take()
        guard !(note.inserted.isEmpty && note.updated.isEmpty && note.deleted.isEmpty && note.refreshed.isEmpty) else { return }
        for (_, handler) in tracker.observers { handler(note) }
    }

    /// Tells the observers that `reset()` invalidated `objects` (every object the context held); changes noted
    /// before the reset are dropped with it.
    func notifyInvalidatedAll(_ objects: [ManagedObject]) {
        guard let tracker = changeTracker else { return }
        _ = tracker.take()
        let note = ObjectsDidChange(inserted: [], updated: [], deleted: [], refreshed: [], invalidated: objects,
                                    invalidatedAll: true, keys: [:])
        for (_, handler) in tracker.observers { handler(note) }
    }
}
