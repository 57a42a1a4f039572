/// Child contexts: a child reads through its parent (the parent's unsaved changes are the child's starting state)
/// and its save pushes its changes into the parent instead of the store. Each question to a parent runs on the
/// parent's queue (`performAndWait`) and answers with `ObjectState`s, never with the parent's objects.
extension ManagedObjectContext {
    /// What a parent knows about one object for its child.
    enum ParentView {
        /// The object's state in the parent (or an ancestor).
        case state(ObjectState)
        /// No ancestor holds the object in memory: read the store.
        case store
        /// An unknown temporary key: nothing to read.
        case missing
    }

    /// Unsaved changes of a context and its ancestors, as a child's fetch must see them.
    struct ParentOverlay: @unchecked Sendable {
        /// Inserted and updated objects, by (root entity number, key).
        var states: [ObjectKey: ObjectState] = [:]
        /// Rows deleted in an ancestor: left out of the child's fetches.
        var deleted: Set<ObjectKey> = []

        var isEmpty: Bool { states.isEmpty && deleted.isEmpty }
    }

    /// The changes a child's save pushes into its parent.
    struct ChildChanges: @unchecked Sendable {
        var inserted: [ObjectState] = []
        /// Updated objects with the slots that changed.
        var updated: [(state: ObjectState, slots: [Int])] = []
        var deleted: [ObjectState.Reference] = []
    }

    // MARK: Lookups by key

    /// The object this context holds for a key (temporary keys included), without creating one. Inserted objects
    /// are found by a linear search: temporary IDs are rarely looked up.
    func heldObject(entity: EntityDescription, key: Int64) -> ManagedObject? {
        if key < 0 {
            if let object = temporaryObjects[key], object.managedObjectContext === self { return object }
            return insertionOrder.last { $0.key == key && $0.isInserted && $0.managedObjectContext === self }
        }
        return registry[ObjectKey(table: Int32(entity.root.entityNumber), key: key)]
    }

    /// The uniqued object for a temporary key: one this context holds, else a fault its ancestors will fulfil.
    func temporaryObject(entity: EntityDescription, key: Int64) -> ManagedObject {
        if let object = heldObject(entity: entity, key: key) { return object }
        let object = newFault(entity: entity, key: key)
        temporaryObjects[key] = object
        return object
    }

    // MARK: Answering a child (on this context's queue)

    /// The in-memory state of an object for a child: this context's, else its parent's; `.store` when no ancestor
    /// has it in memory.
    func childView(entity: EntityDescription, key: Int64) -> ParentView {
        if let object = heldObject(entity: entity, key: key), !object.isFault, !object.flags.contains(.inaccessible) {
            return .state(ObjectState(of: object))
        }
        if let parent { return parent.performAndWait { parent.childView(entity: entity, key: key) } }
        return key > 0 ? .store : .missing
    }

    /// The members of a to-many relationship as this context (or an ancestor) has them loaded; nil when none has:
    /// the child reads the store.
    func childMembers(_ relationship: RelationshipDescription, entity: EntityDescription, key: Int64) -> [ObjectState.Reference]? {
        if let object = heldObject(entity: entity, key: key), !object.isFault, relationship.index < object.values.count {
            switch object.values[relationship.index] {
            case .many(let storage): return storage.objects.filter { !$0.isDeleted }.map { ($0.entity, $0.key) }
            case .null where object.isInserted: return []
            default: break
            }
        }
        if let parent { return parent.performAndWait { parent.childMembers(relationship, entity: entity, key: key) } }
        return key > 0 ? nil : []
    }

    /// This context's unsaved changes on top of its ancestors', for objects of the given entities.
    func childOverlay(entityNumbers: Set<Int>) -> ParentOverlay {
        var overlay = parent.map { parent in parent.performAndWait { parent.childOverlay(entityNumbers: entityNumbers) } } ?? ParentOverlay()
        for object in pendingInsertions + Array(updatedSet.values) where entityNumbers.contains(object.entity.entityNumber) {
            overlay.states[object.objectKeyForCache] = ObjectState(of: object)
        }
        for object in deletedSet.values {
            overlay.states[object.objectKeyForCache] = nil
            overlay.deleted.insert(object.objectKeyForCache)
        }
        return overlay
    }

    /// True when this context or an ancestor has unsaved changes.
    func hasChangesInChain() -> Bool {
        if hasChanges { return true }
        guard let parent else { return false }
        return parent.performAndWait { parent.hasChangesInChain() }
    }

    /// Applies a child's save: its inserted objects are inserted here under the same temporary keys, its updates
    /// and deletions are made here as changes of this context. Siblings that merge automatically are told.
    func applyChildChanges(_ changes: ChildChanges) -> [ManagedObjectID] {
        var created: [Int64: ManagedObject] = [:]
        for state in changes.inserted {
            let object = state.entity.managedClass.init(entity: state.entity, insertInto: nil)
            object.managedObjectContext = self
            object.key = state.key
            object.values = state.values
            object.transientObjects = state.transientObjects
            if state.obtainedKey > 0 {
                object.pendingKey = state.obtainedKey
                object.flags.insert(.keyObtained)
            }
            registerInsertion(object)
            created[state.key] = object
            temporaryObjects[state.key] = object
        }
        for state in changes.inserted {
            let object = created[state.key]!
            for (slot, destination) in state.toOne {
                object.values[slot] = .object(faultingObject(entity: destination.entity, key: destination.key))
            }
            for (slot, members) in state.toMany {
                let storage = ToManyStorage(objects: [])
                for member in members { storage.insert(faultingObject(entity: member.entity, key: member.key)) }
                object.values[slot] = .many(storage)
            }
        }
        for (state, slots) in changes.updated {
            let object = faultingObject(entity: state.entity, key: state.key)
            object.willAccessValues()
            guard !object.isDeleted, !object.flags.contains(.inaccessible) else { continue }
            for slot in slots {
                let property = object.entity.properties[slot]
                if let relationship = property as? RelationshipDescription {
                    let members = state.relationshipValue(at: slot, in: self) ?? []
                    if relationship.isToMany {
                        replaceMembers(of: object, relationship, with: members)
                    } else if let destination = members.first {
                        object.setSlot(.object(destination), at: slot)
                    } else {
                        object.setSlot(state.values[slot], at: slot)
                    }
                } else {
                    object.setSlot(state.values[slot], at: slot)
                    object.transientObjects[slot] = state.transientObjects[slot]
                }
            }
        }
        for reference in changes.deleted {
            let object = faultingObject(entity: reference.entity, key: reference.key)
            delete(object)
        }
        // The child applied the rules already; what they change arrives as changes of its own.
        propagatePendingDeletes()
        return changes.inserted.map { created[$0.key]!.objectID }
    }

    /// Makes a to-many's members (and their order) the given ones, keeping what the store holds as the original
    /// so that the eventual save writes the difference. Inverses are the child's: they arrive as changes too.
    private func replaceMembers(of object: ManagedObject, _ relationship: RelationshipDescription, with members: [ManagedObject]) {
        guard let storage = object.toManyStorage(for: relationship) else { return }
        object.willChange()
        let keep = Set(members.lazy.map(ObjectIdentifier.init))
        for member in storage.objects where !keep.contains(ObjectIdentifier(member)) { storage.remove(member) }
        for (i, member) in members.enumerated() {
            if relationship.isOrdered {
                if storage.contains(member) {
                    if storage.objects.firstIndex(where: { $0 === member }) == i { continue }
                    storage.remove(member)
                }
                storage.insert(member, at: i)
            } else {
                storage.insert(member)
            }
        }
        object.markChanged(relationship.index)
    }

    // MARK: Saving into the parent (on the child's queue)

    /// A child's save: its changes go into the parent; nothing reaches the store.
    func saveIntoParent(_ parent: ManagedObjectContext, _ changes: SaveChanges) -> RemoteChanges {
        var pushed = ChildChanges()
        pushed.inserted = changes.inserted.map(ObjectState.init(of:))
        pushed.updated = changes.updated.map { object in
            let slots = object.entity.properties.indices.filter { i in
                if object.changes.contains(i) { return true }
                if case .many(let storage) = object.values[i] { return storage.changed }
                return false
            }
            return (ObjectState(of: object), slots)
        }
        pushed.deleted = changes.deleted.map { ($0.entity, $0.key) }
        let updated = changes.updated.map(\.objectID), deleted = changes.deleted.map(\.objectID)
        let result = parent.performAndWait {
            let result = RemoteChanges(inserted: parent.applyChildChanges(pushed), updated: updated, deleted: deleted)
            parent.autoMergers.notify(result, except: self)
            return result
        }
        for object in changes.inserted {
            object.flags.remove(.inserted)
            temporaryObjects[object.key] = object
        }
        for object in changes.inserted + changes.updated {
            object.flags.remove(.updated)
            object.changes.removeAll()
            object.valuesAreCommitted()
            for slot in object.entity.toManySlots where object.values[slot].isNull {
                object.values[slot] = .many(ToManyStorage(objects: []))
            }
            for case .many(let storage) in object.values { storage.markSaved() }
        }
        for object in changes.deleted { unregister(object) }
        insertionOrder.removeAll()
        insertedCount = 0
        updatedSet.removeAll()
        deletedSet.removeAll()
        return result
    }

    // MARK: Reading through the parent (on the child's queue)

    /// The values an object would have if refreshed: its parent's (child contexts) or the store's.
    func underlyingRow(of object: ManagedObject) -> (values: SlotRow, version: Int64)? {
        guard let parent else {
            return (try? reader.readRow(entity: object.entity, key: object.key)).flatMap { $0.map { ($0.values, $0.version) } }
        }
        switch parent.performAndWait({ parent.childView(entity: object.entity, key: object.key) }) {
        case .state(let state): return (state.values(in: self), state.version)
        case .store: return (try? reader.readRow(entity: object.entity, key: object.key)).flatMap { $0.map { ($0.values, $0.version) } }
        case .missing: return nil
        }
    }

    /// Fulfils a child's fault from its parent; false when the store must answer.
    func fulfillFromParent(_ object: ManagedObject, _ parent: ManagedObjectContext) -> Bool {
        switch parent.performAndWait({ parent.childView(entity: object.entity, key: object.key) }) {
        case .state(let state):
            fulfill(object, from: state)
            return true
        case .store:
            return false
        case .missing:
            lastFaultError = .objectNotFound(object.objectID)
            if object.key > 0 { materializedCount += 1 }
            object.flags.remove(.fault)
            object.flags.insert(.inaccessible)
            object.values = SlotRow(Array(repeating: .null, count: object.entity.properties.count))
            object.valuesAreCommitted()
            return true
        }
    }

    /// Fulfils a fault with its parent's state (it holds no row-cache snapshot).
    private func fulfill(_ object: ManagedObject, from state: ObjectState) {
        object.values = state.values(in: self)
        object.valuesAreCommitted()
        object.transientObjects = state.transientObjects
        object.version = state.version
        if object.flags.contains(.fault) && object.key > 0 { materializedCount += 1 }
        object.flags.remove(.fault)
    }

    /// Makes the parent's inserted and updated objects of a fetch's entities present in this child (faults
    /// fulfilled from the parent's state); returns them and the keys the parent deleted. Nil when the parent
    /// chain has no such changes.
    func materializeParentOverlay(entityNumbers: Set<Int>) -> (objects: [ManagedObject], deleted: Set<ObjectKey>)? {
        guard let parent else { return nil }
        let overlay = parent.performAndWait { parent.childOverlay(entityNumbers: entityNumbers) }
        guard !overlay.isEmpty else { return nil }
        var objects: [ManagedObject] = []
        for (_, state) in overlay.states.sorted(by: { $0.key.key < $1.key.key }) {
            let object = faultingObject(entity: state.entity, key: state.key)
            if object.isFault { fulfill(object, from: state) }
            if !object.isDeleted { objects.append(object) }
        }
        return (objects, overlay.deleted)
    }
}
