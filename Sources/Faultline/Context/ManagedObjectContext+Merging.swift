import Foundation

/// Object IDs another writer changed (a batch request's result, another process's save): what
/// `mergeChanges(fromRemoteSave:into:)` brings into live contexts.
public struct RemoteChanges: Sendable {
    /// Objects another writer inserted.
    public var inserted: [ManagedObjectID]
    /// Objects it updated.
    public var updated: [ManagedObjectID]
    /// Objects it deleted.
    public var deleted: [ManagedObjectID]
    /// Objects whose state the writer invalidated (Core Data's `NSInvalidatedObjectsKey`): merged as refreshes.
    public var invalidated: [ManagedObjectID]
    /// Every object invalidated (Core Data's `NSInvalidatedAllObjectsKey`): the contexts refresh all their objects.
    public var invalidatedAll: Bool

    /// Changes to merge.
    public init(inserted: [ManagedObjectID] = [], updated: [ManagedObjectID] = [], deleted: [ManagedObjectID] = [],
                invalidated: [ManagedObjectID] = [], invalidatedAll: Bool = false) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.invalidated = invalidated
        self.invalidatedAll = invalidatedAll
    }
}

/// Core Data's `NSInsertedObjectsKey`: in a change dictionary, the inserted objects (or their IDs).
public let InsertedObjectsKey = "inserted"
/// Core Data's `NSUpdatedObjectsKey`.
public let UpdatedObjectsKey = "updated"
/// Core Data's `NSDeletedObjectsKey`.
public let DeletedObjectsKey = "deleted"
/// Core Data's `NSInsertedObjectIDsKey`.
public let InsertedObjectIDsKey = "inserted_objectIDs"
/// Core Data's `NSUpdatedObjectIDsKey`.
public let UpdatedObjectIDsKey = "updated_objectIDs"
/// Core Data's `NSDeletedObjectIDsKey`.
public let DeletedObjectIDsKey = "deleted_objectIDs"
/// Core Data's `NSInvalidatedObjectsKey`.
public let InvalidatedObjectsKey = "invalidated"
/// Core Data's `NSInvalidatedObjectIDsKey`.
public let InvalidatedObjectIDsKey = "invalidated_objectIDs"
/// Core Data's `NSInvalidatedAllObjectsKey`.
public let InvalidatedAllObjectsKey = "invalidatedAll"

extension RemoteChanges {
    /// The changes a Core Data change dictionary holds: under `InsertedObjectsKey`, `UpdatedObjectsKey`,
    /// `DeletedObjectsKey` and `InvalidatedObjectsKey` (or the `…ObjectIDsKey` forms), arrays or sets of object IDs
    /// or of objects (their IDs are taken), and `InvalidatedAllObjectsKey` present for every object; other keys and
    /// values are ignored, as Core Data ignores them.
    public init(_ dictionary: [AnyHashable: Any]) {
        func ids(_ keys: [String]) -> [ManagedObjectID] {
            keys.flatMap { key -> [ManagedObjectID] in
                guard let value = dictionary[AnyHashable(key)] else { return [] }
                let items: [Any] = (value as? [Any]) ?? (value as? Set<ManagedObjectID>).map { Array($0) } ?? (value as? NSSet)?.allObjects ?? [value]
                return items.compactMap { ($0 as? ManagedObjectID) ?? ($0 as? ManagedObject)?.objectID }
            }
        }
        self.init(inserted: ids([InsertedObjectsKey, InsertedObjectIDsKey]), updated: ids([UpdatedObjectsKey, UpdatedObjectIDsKey]),
                  deleted: ids([DeletedObjectsKey, DeletedObjectIDsKey]), invalidated: ids([InvalidatedObjectsKey, InvalidatedObjectIDsKey]),
                  invalidatedAll: dictionary[AnyHashable(InvalidatedAllObjectsKey)] != nil)
    }
}

extension ManagedObjectContext {
    /// Core Data's `mergeChanges(fromRemoteContextSave:into:)` with its dictionary, as a batch request's result is
    /// merged: `[DeletedObjectsKey: result.result as? [ManagedObjectID] ?? []]`.
    public static func mergeChanges(fromRemoteContextSave changes: [AnyHashable: Any], into contexts: [ManagedObjectContext]) {
        mergeChanges(fromRemoteSave: RemoteChanges(changes), into: contexts)
    }

    /// Core Data's `mergeChanges(fromRemoteContextSave:into:)`: the coordinators forget their cached rows for the
    /// updated and deleted IDs, then each context (on its queue) refreshes its registered objects that were updated
    /// (keeping their unsaved changes), lets go of the deleted ones, and reloads relationships that pointed at them.
    /// Afterwards no context shows a deleted object or an old value of an updated one.
    public static func mergeChanges(fromRemoteSave changes: RemoteChanges, into contexts: [ManagedObjectContext]) {
        var coordinators: [ObjectIdentifier: PersistentStoreCoordinator] = [:]
        for context in contexts { coordinators[ObjectIdentifier(context.coordinator)] = context.coordinator }
        for coordinator in coordinators.values {
            coordinator.forgetCachedRows(of: changes.updated + changes.deleted)
        }
        for context in contexts { context.performAndWait { context.merge(changes) } }
    }

    /// Merges remote changes into this context (call on its queue); the row cache is left to the caller.
    func merge(_ changes: RemoteChanges, permanentKeys: [Int64: ManagedObjectID] = [:]) {
        if checksQueue { checkQueue(touching: nil) }
        let start = ProbeClock.now()
        // A pinned context moves to the latest generation when it merges (seed 001 L4039).
        advanceGeneration()
        var refreshed = 0, registered = 0
        for (temporary, id) in permanentKeys {
            // The root saved an object this child knows by its temporary key: adopt the permanent one.
            guard let object = temporaryObjects[temporary], object.managedObjectContext === self, !object.isInserted,
                  registry[id.objectKey] == nil else { continue }
            temporaryObjects[temporary] = nil
            if object.flags.contains(.keyObtained) {
                obtainedKeys[object.obtainedObjectKey] = nil
                object.flags.remove(.keyObtained)
                object.pendingKey = 0
            }
            object.key = id.key
            registry[id.objectKey] = object
            if !object.isFault { materializedCount += 1 }
        }
        // Another context's inserts are registered as faults and reported as inserted, as Core Data does (how a list
        // learns of a background import). Only while someone observes the changes: unobserved, a fault nothing holds
        // would leave the context again at once.
        if let changeTracker, changeTracker.isObserved {
            for id in changes.inserted where !id.isTemporaryID && registeredObject(for: id) == nil {
                guard let entity = model.entity(named: id.entity.name), !entity.isAbstract else { continue }
                changeTracker.noteMergedInsert(faultingObject(entity: entity, key: id.key))
                registered += 1
            }
        }
        // Updated and invalidated objects are refreshed: stored values, unsaved changes kept on top (what the
        // documentation leaves open for invalidated objects is answered so, losing nothing).
        let observed = changeTracker?.isObserved == true
        for id in changes.updated + changes.invalidated {
            guard let object = registeredObject(for: id) else {
                // Core Data refreshes registered objects only, so a list over rows not in memory misses their updates
                // (apps fault them in before merging). An observer hears of them here, as faults: nothing is missed.
                guard observed, !id.isTemporaryID, let entity = model.entity(named: id.entity.name), !entity.isAbstract else { continue }
                changeTracker?.noteRefresh(faultingObject(entity: entity, key: id.key))
                registered += 1
                continue
            }
            if object.isFault {
                if observed { changeTracker?.noteRefresh(object) }
                continue
            }
            refreshObject(object, mergeChanges: object.hasChanges)
            refreshed += 1
        }
        if changes.invalidatedAll {
            for object in registeredObjects where !object.isFault && !object.isInserted {
                refreshObject(object, mergeChanges: object.hasChanges)
                refreshed += 1
            }
        }
        var gone: Set<ObjectIdentifier> = []
        for id in changes.deleted {
            guard let object = registeredObject(for: id) else { continue }
            gone.insert(ObjectIdentifier(object))
            changeTracker?.noteDelete(object)
            forget(object)
        }
        if !gone.isEmpty {
            // Relationships that still lead to a deleted object are reloaded from the store when next used.
            for object in registry.values where !object.isFault {
                for relationship in object.entity.relationships where relationship.index < object.values.count {
                    switch object.values[relationship.index] {
                    case .object(let destination) where gone.contains(ObjectIdentifier(destination)):
                        if object.hasChanges { object.values[relationship.index] = .null } else { refreshObject(object, mergeChanges: false) }
                        refreshed += 1
                    case .many(let storage) where !storage.changed && storage.objects.contains(where: { gone.contains(ObjectIdentifier($0)) }):
                        object.values[relationship.index] = .null
                        refreshed += 1
                    default:
                        break
                    }
                }
            }
        }
        processPendingChanges()
        if probesEnabled {
            coordinator.probes.record(.merge(MergeEvent(inserted: changes.inserted.count, updated: changes.updated.count, deleted: changes.deleted.count,
                                                        refreshed: refreshed, registered: registered,
                                                        duration: ProbeClock.seconds(start, ProbeClock.now()), context: serialNumber)))
        }
    }

    /// Lets go of an object whose row is gone: it leaves the context and becomes an inaccessible fault.
    private func forget(_ object: ManagedObject) {
        object.willTurnIntoFault()
        defer { object.didTurnIntoFault() }
        if object.flags.contains(.holdsSnapshot) { reader.releaseSnapshot(object.objectKeyForCache) }
        if registry.remove(object, at: object.objectKeyForCache) && !object.isFault { materializedCount -= 1 }
        updatedSet[ObjectIdentifier(object)] = nil
        deletedSet[ObjectIdentifier(object)] = nil
        leaveBatch(object)
        object.managedObjectContext = nil
        object.flags = [.fault, .inaccessible]
        object.values = []
    }
}
