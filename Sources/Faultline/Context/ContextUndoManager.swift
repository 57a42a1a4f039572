/// Undo and redo for one context (Core Data's `NSUndoManager` on a context; off unless you set
/// `context.undoManager`). Each undo group holds, for every object changed in it, the object's state from before its
/// first change in the group: undoing restores those states (inserts, updates, deletes and relationship changes,
/// inverses included, as the inverse side was captured too) and keeps the states it replaced for redo.
///
/// Changes are grouped explicitly (`beginUndoGrouping`/`endUndoGrouping`) or, with `groupsByEvent`, by event: a
/// group closes at `processPendingChanges()` — at the end of each `perform` block and when saving. Use it on the
/// context's queue.
public final class ContextUndoManager {
    struct ObjectState {
        let object: ManagedObject
        /// False before the object's insertion (or after an inserted object was deleted).
        let present: Bool
        let values: SlotRow
        let toMany: [(slot: Int, members: [ManagedObject])]
        let transientObjects: [Int: Any]
        let inserted: Bool
        let deleted: Bool
        let changes: ChangeMask
    }

    /// The most undo groups kept (0: no limit).
    public var levelsOfUndo = 0
    /// True: changes outside an explicit group are grouped until the next `processPendingChanges()`.
    public var groupsByEvent = true
    /// How deeply explicit groups are nested now.
    public private(set) var groupingLevel = 0

    weak var context: ManagedObjectContext?
    private var undoStack: [[ObjectState]] = []
    private var redoStack: [[ObjectState]] = []
    private var open: [ObjectState]?
    private var captured: Set<ObjectIdentifier> = []

    /// An undo manager with nothing to undo; give it to a context's `undoManager`.
    public init() {}

    /// True when there is a group to undo (an open one counts).
    public var canUndo: Bool { !undoStack.isEmpty || !(open?.isEmpty ?? true) }
    /// True when an undone group can be redone.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// Opens a group: the changes until the matching `endUndoGrouping()` undo together.
    public func beginUndoGrouping() {
        if groupingLevel == 0 { closeGroup() }
        groupingLevel += 1
    }

    /// Closes the group `beginUndoGrouping()` opened.
    public func endUndoGrouping() {
        guard groupingLevel > 0 else { return }
        groupingLevel -= 1
        if groupingLevel == 0 { closeGroup() }
    }

    /// Undoes the last group of changes.
    public func undo() {
        if groupingLevel == 0 { closeGroup() }
        guard let group = undoStack.popLast() else { return }
        redoStack.append(apply(group))
    }

    /// Redoes the last undone group.
    public func redo() {
        guard let group = redoStack.popLast() else { return }
        closeGroup()
        undoStack.append(apply(group))
    }

    /// Forgets every undo and redo group.
    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        open = nil
        captured.removeAll()
    }

    // MARK: Recording (the context calls these)

    /// Keeps `object`'s state before its first change in the open group.
    func capture(_ object: ManagedObject) {
        record(object) { state(of: object) }
    }

    /// An object about to be inserted: undoing takes it out again.
    func captureInsertion(_ object: ManagedObject) {
        record(object) {
            ObjectState(object: object, present: false, values: [], toMany: [], transientObjects: [:],
                        inserted: false, deleted: false, changes: ChangeMask())
        }
    }

    /// Adds an object's state to the open group, once per object and group; a new change ends what redo had.
    private func record(_ object: ManagedObject, _ state: () -> ObjectState) {
        guard captured.insert(ObjectIdentifier(object)).inserted else { return }
        if open == nil { open = [] }
        open!.append(state())
        redoStack.removeAll()
    }

    func closeImplicitGroup() {
        if groupingLevel == 0 && groupsByEvent { closeGroup() }
    }

    private func closeGroup() {
        if let group = open, !group.isEmpty {
            undoStack.append(group)
            if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
        }
        open = nil
        captured.removeAll()
    }

    private func state(of object: ManagedObject) -> ObjectState {
        let present = object.managedObjectContext === context && context != nil
        var values = object.sharedValues
        var toMany: [(Int, [ManagedObject])] = []
        for (i, slot) in values.enumerated() {
            if case .many(let storage) = slot {
                toMany.append((i, storage.objects))
                values[i] = .null
            }
        }
        return ObjectState(object: object, present: present, values: values, toMany: toMany, transientObjects: object.transientObjects,
                           inserted: object.isInserted, deleted: object.isDeleted, changes: object.changes)
    }

    /// Restores a group's states; returns the states they replaced.
    private func apply(_ group: [ObjectState]) -> [ObjectState] {
        guard let context else { return [] }
        context.undoRecorder = nil
        defer { context.undoRecorder = self }
        var replaced: [ObjectState] = []
        for state in group.reversed() {
            replaced.append(self.state(of: state.object))
            context.restore(state)
        }
        context.processPendingChanges()
        return replaced.reversed()
    }
}

extension ManagedObjectContext {
    /// Puts an object back in a state the undo manager captured.
    func restore(_ state: ContextUndoManager.ObjectState) {
        let object = state.object
        guard state.present else {
            // Back to before its insertion.
            if object.isInserted && object.managedObjectContext === self {
                object.flags.remove(.inserted)
                insertedCount -= 1
                changeTracker?.noteDelete(object)
                unregister(object)
            }
            return
        }
        if object.managedObjectContext !== self {
            // An inserted object that was deleted (or undone) comes back; a saved and deleted one cannot.
            guard state.inserted, object.managedObjectContext == nil else { return }
            object.managedObjectContext = self
            object.flags = [.inserted, objectFlags]
            if !insertionOrder.contains(where: { $0 === object }) { insertionOrder.append(object) }
            insertedCount += 1
            changeTracker?.noteInsert(object)
        }
        if object.isFault { fulfillFault(object) }
        if !object.flags.contains(.hasCommittedCopy) && !object.isInserted {
            object.committedCopy = object.sharedValues
            object.flags.insert(.hasCommittedCopy)
        }
        var values = state.values
        for (slot, members) in state.toMany {
            if case .many(let storage) = object.values[slot] {
                storage.replaceMembers(members)
                values[slot] = .many(storage)
            } else {
                values[slot] = .many(ToManyStorage(objects: members))
            }
        }
        let before = object.values
        object.values = values
        object.transientObjects = state.transientObjects
        if let changeTracker {
            for i in values.indices where i < before.count && !Self.sameSlot(before[i], values[i]) { changeTracker.noteChange(object, slot: i) }
        }
        if object.isInserted {
            object.changes = state.changes
            return
        }
        // What differs from the committed values is a change (so undoing past a save makes the object dirty again).
        let stored = SaveChanges.storedForm(values, entity: object.entity)
        let committed = SaveChanges.storedForm(object.committed, entity: object.entity)
        object.changes.removeAll()
        var changed = false
        for i in stored.indices where i < committed.count {
            if case .many(let storage) = values[i] {
                if storage.changed { object.changes.insert(i); changed = true }
            } else if !Self.sameStoredValue(stored[i], committed[i]) {
                object.changes.insert(i)
                changed = true
            }
        }
        if changed { object.flags.insert(.updated) } else { object.flags.remove(.updated) }
        if state.deleted {
            object.flags.insert(.deleted)
            updatedSet[ObjectIdentifier(object)] = nil
            deletedSet[ObjectIdentifier(object)] = object
        } else {
            object.flags.remove(.deleted)
            deletedSet[ObjectIdentifier(object)] = nil
            updatedSet[ObjectIdentifier(object)] = changed ? object : nil
        }
    }

    private static func sameSlot(_ a: Slot, _ b: Slot) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): return x === y
        case (.many(let x), .many(let y)): return x === y && !x.changed
        default: return sameStoredValue(a, b)
        }
    }
}
