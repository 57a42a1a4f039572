import Foundation
import Instrumentation
import Synchronization

/// A scratch pad of managed objects: an isolation domain with its own queue.
///
/// Objects belong to one context and are used only on its queue (`perform`, `performAndWait`). Within a context
/// each object ID has exactly one object (uniquing). Changes stay in memory until `save()`.
public final class ManagedObjectContext: @unchecked Sendable {
    /// Which queue the context runs on.
    public enum ConcurrencyType: Sendable {
        /// The main queue.
        case mainQueue
        /// A private serial queue of the context's own.
        case privateQueue

        /// Core Data's name for `.mainQueue`.
        public static let mainQueueConcurrencyType = ConcurrencyType.mainQueue
        /// Core Data's name for `.privateQueue`.
        public static let privateQueueConcurrencyType = ConcurrencyType.privateQueue
    }

    /// The context's queue type.
    public let concurrencyType: ConcurrencyType
    /// The coordinator the context reads from and saves to (for a child context, its root's). A context made with
    /// `init(concurrencyType:)` has a placeholder without a store until `persistentStoreCoordinator` or `parent` is set.
    public private(set) var coordinator: PersistentStoreCoordinator
    /// The parent of a child context: the child reads through it and saves into it, not into the store. Settable
    /// before the context is used, as in Core Data (`child.parent = viewContext`).
    public var parent: ManagedObjectContext? {
        get { parentContext }
        set {
            guard let newValue else {
                preconditionFailure("a context's parent cannot be unset: make a new context on a coordinator instead")
            }
            attach(coordinator: newValue.coordinator, parent: newValue)
        }
    }
    private var parentContext: ManagedObjectContext?

    /// The coordinator of a root context (Core Data's `persistentStoreCoordinator`): nil until set when the context
    /// was made with `init(concurrencyType:)`; for a child context, its root's. Set it before the context is used.
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { coordinator === Self.placeholderCoordinator ? nil : coordinator }
        set {
            guard let newValue else {
                preconditionFailure("a context's coordinator cannot be unset: make a new context instead")
            }
            attach(coordinator: newValue, parent: nil)
        }
    }

    /// The coordinator of a context made without one: no store, so its fetches and saves fail with
    /// `StoreError.noStore`.
    private static let placeholderCoordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(), probes: .disabled)

    /// Connects a context made with `init(concurrencyType:)`, before use (Core Data raises an exception for a
    /// context in use; so does this, as a precondition).
    private func attach(coordinator: PersistentStoreCoordinator, parent: ManagedObjectContext?) {
        precondition(registry.isEmpty && insertionOrder.isEmpty && temporaryObjects.isEmpty,
                     "a context's coordinator or parent is set before the context holds objects")
        self.coordinator = coordinator
        self.parentContext = parent
        parent?.hasChildren.store(true, ordering: .relaxed)
        predicateShape = PredicateShape(recordsConstants: coordinator.probes.recordsFetchesByShape)
        checksQueue = coordinator.probes.configuration.concurrencyDebug || ProbeConfiguration.environment.concurrencyDebug
        if checksQueue { objectFlags.insert(.checksQueue) } else { objectFlags.remove(.checksQueue) }
    }
    /// The model (the coordinator's).
    public var model: ManagedObjectModel { coordinator.managedObjectModel }

    private let queue: DispatchQueue
    private let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Registered saved objects by row, held weakly (see `ObjectLifetimes`). Inserted objects are kept in
    /// `insertionOrder` until their save.
    let registry = ObjectRegistry()
    /// An object's `deinit` is releasing values: objects released meanwhile queue theirs here (see
    /// `objectWillDeinit`). Used on the context's queue only.
    @exclusivity(unchecked) var releasingObjects = false
    @exclusivity(unchecked) var deferredReleases: [SlotRow] = []
    /// Registered saved objects that are not faults (inserted ones are `insertedCount`): the trace's gauge.
    @exclusivity(unchecked) var materializedCount = 0
    /// Where inserted objects' values are cut from: blocks of rows, one allocation for many objects.
    @exclusivity(unchecked) var insertWriter = SlotRowWriter(rowsPerBlock: SlotRowWriter.insertRowsPerBlock)
    /// Objects known by a temporary key without being inserted here: in a child context, objects its parent
    /// inserted (or it pushed to its parent); in a parent, objects that had the key before the root saved them.
    var temporaryObjects: [Int64: ManagedObject] = [:]
    /// Unsaved objects given their permanent keys early (`obtainPermanentIDs(for:)`), by those keys.
    var obtainedKeys: [ObjectKey: ManagedObject] = [:]
    /// Contexts that merge this context's saves (children with `automaticallyMergesChangesFromParent`).
    let autoMergers = AutoMergers()
    /// Set once a child context is made: saves then remember temporary keys for the children's lookups.
    let hasChildren = Atomic<Bool>(false)
    /// Inserted objects in insertion order; may still hold objects deleted since (`insertedCount` counts the
    /// live ones).
    @exclusivity(unchecked) var insertionOrder: [ManagedObject] = []
    @exclusivity(unchecked) var insertedCount = 0
    /// Core Data's `propagatesDeletesAtEndOfEvent`: true (the default), deleted objects' delete rules are applied
    /// at the end of the event (`processPendingChanges()`); false, only when saving.
    public var propagatesDeletesAtEndOfEvent = true
    /// Deleted objects whose delete rules wait for the end of the event (or the save).
    var pendingDeletePropagation: [ManagedObject] = []
    /// Core Data's `name`: recorded with each save's persistent history (and shown in reports).
    public var name: String?
    /// Core Data's `transactionAuthor`: the author persistent history records for this context's saves.
    public var transactionAuthor: String?
    /// A number of this context, unique in the process: probe events name their context by it.
    public let serialNumber: Int = ManagedObjectContext.serials.next()
    private static let serials = SerialCounter()
    /// Prefetches whose objects the probes watch for use (see `PrefetchWatch`).
    var prefetchWatches: [PrefetchWatch] = []
    var watchedObjects: [ObjectIdentifier: PrefetchWatch] = [:]
    /// Will-save and did-save observers.
    let saveObservers = SaveObservers()
    /// Changes since the last objects-did-change notification; nil until someone observes them.
    var changeTracker: ChangeTracker?
    /// The undo manager while it records (nil when there is none, and while it undoes).
    @exclusivity(unchecked) var undoRecorder: ContextUndoManager?

    /// Records changes for undo and redo; nil (the default) records nothing.
    public var undoManager: ContextUndoManager? {
        didSet {
            oldValue?.context = nil
            undoManager?.context = self
            undoRecorder = undoManager
            if undoManager != nil { trackObjects() }
        }
    }
    /// The call site of the traced fetch in progress: fetches it runs itself (prefetching, batch faults) report
    /// it too, so that a trace points at the program's code, not the engine's. Used on the context's queue only,
    /// so exclusivity is not checked at run time.
    @exclusivity(unchecked) var outerCallSite: CallSite?
    /// The entity of the last fetch: a context fetches the same few entities over and over, and comparing a name
    /// with the last one costs far less than hashing it. Used on the context's queue only.
    @exclusivity(unchecked) var lastFetchedEntity: EntityDescription?
    /// Storage for scanning each fetch's predicate, kept between fetches. Used on the context's queue only.
    private(set) var predicateShape: PredicateShape
    var updatedSet: [ObjectIdentifier: ManagedObject] = [:]
    var deletedSet: [ObjectIdentifier: ManagedObject] = [:]

    /// The reader of a context pinned to a query generation; nil when it reads the latest state.
    var generation: PersistentStoreCoordinator?
    /// Where the context reads rows: its pinned generation, else its coordinator.
    var reader: PersistentStoreCoordinator { generation ?? coordinator }

    /// How old (in seconds) a row in the coordinator's row cache may be for a fault to use it instead of reading
    /// the store (Core Data's `stalenessInterval`): negative (the default) accepts any age, 0 always reads the store.
    public var stalenessInterval: Double = -1

    /// Core Data's `shouldDeleteInaccessibleFaults` (default true): a fault whose row is gone (deleted by another
    /// context, a batch delete or another process) fires as an object marked deleted (`isDeleted`), every property
    /// nil or zero. False: it fires with every property nil or zero but not marked deleted. Either way the context's
    /// `lastFaultError` names the object and `existingObject(with:)` throws; Core Data with false raises an
    /// Objective-C exception, which Swift cannot catch, so the error is reported there instead (docs/contexts.md).
    public var shouldDeleteInaccessibleFaults = true

    /// Objects marked by `detectConflicts(for:)` until the next save (held: Core Data keeps them too).
    var conflictChecks: [ObjectIdentifier: ManagedObject] = [:]

    /// Values the program keeps with the context (Core Data's `userInfo`): a cache of singleton-like objects looked
    /// up once — the logged-in user, the current settings — instead of fetched each time. Read and changed on the
    /// context's queue, like its objects.
    public var userInfo: [AnyHashable: Any] = [:]

    /// How this context's saves resolve optimistic-locking and uniqueness conflicts (`.error`, the default,
    /// resolves nothing). A child context's save into its parent ignores it: the child's values win, as in Core Data.
    public var mergePolicy: MergePolicy = .error

    /// Core Data's `automaticallyMergesChangesFromParent`: a child context merges its parent's saves (and its
    /// siblings' saves into the parent), a root context the saves of other contexts on its coordinator; each merge
    /// runs on this context's queue soon after the save.
    public var automaticallyMergesChangesFromParent = false {
        didSet {
            guard automaticallyMergesChangesFromParent != oldValue else { return }
            let list = parent?.autoMergers ?? coordinator.autoMergers
            if automaticallyMergesChangesFromParent { list.add(self) } else { list.remove(self) }
        }
    }

    /// True when every use of the context and its objects checks that it happens on the context's queue
    /// (concurrency debugging; from the coordinator's probe configuration or the environment).
    public private(set) var checksQueue: Bool
    /// Flags every object of the context carries: `.checksQueue` when the context checks queues, `.tracked` once
    /// changes are observed or undoable.
    @exclusivity(unchecked) private(set) var objectFlags: ManagedObject.Flags = []

    /// Marks every object so that its changes reach the change tracker and the undo manager (set once either exists;
    /// until then a change costs no more than a flag test).
    func trackObjects() {
        guard !objectFlags.contains(.tracked) else { return }
        objectFlags.insert(.tracked)
        for object in registry.values { object.flags.insert(.tracked) }
        for object in insertionOrder + Array(temporaryObjects.values) where object.managedObjectContext === self { object.flags.insert(.tracked) }
    }

    /// The last fault that could not be fulfilled (its row was deleted elsewhere, or holds a value the store cannot
    /// hold, such as a key below 1), if any.
    public internal(set) var lastFaultError: StoreError?
    /// The last error of a fetched property's fetch (its value then read empty), if any.
    public internal(set) var lastFetchedPropertyError: Error?

    private static let temporaryKeys = Atomic<Int64>(0)

    /// Creates a context of `type` without a coordinator (Core Data's `init(concurrencyType:)`): set
    /// `persistentStoreCoordinator` or `parent` before using it.
    public convenience init(concurrencyType type: ConcurrencyType) {
        self.init(type, coordinator: Self.placeholderCoordinator, parent: nil)
    }

    /// Creates a context of `type` on `coordinator`.
    public convenience init(_ type: ConcurrencyType, coordinator: PersistentStoreCoordinator) {
        self.init(type, coordinator: coordinator, parent: nil)
    }

    /// Creates a child context of `parent`: it sees the parent's unsaved changes, and `save()` pushes its own into
    /// the parent (objects inserted keep temporary IDs until the root context saves).
    public convenience init(_ type: ConcurrencyType, parent: ManagedObjectContext) {
        parent.hasChildren.store(true, ordering: .relaxed)
        self.init(type, coordinator: parent.coordinator, parent: parent)
    }

    private init(_ type: ConcurrencyType, coordinator: PersistentStoreCoordinator, parent: ManagedObjectContext?) {
        self.concurrencyType = type
        self.coordinator = coordinator
        self.parentContext = parent
        predicateShape = PredicateShape(recordsConstants: coordinator.probes.recordsFetchesByShape)
        switch type {
        case .mainQueue: queue = DispatchQueue.main
        case .privateQueue: queue = DispatchQueue(label: "faultline.context")
        }
        checksQueue = coordinator.probes.configuration.concurrencyDebug || ProbeConfiguration.environment.concurrencyDebug
        if type == .privateQueue { queue.setSpecific(key: queueKey, value: ObjectIdentifier(self)) }
        if checksQueue { objectFlags.insert(.checksQueue) }
    }

    deinit {
        reportPrefetchUse()
        var held: [ObjectKey] = []
        held.reserveCapacity(registry.count)
        for object in registry.values where object.flags.contains(.holdsSnapshot) { held.append(object.objectKeyForCache) }
        // As Core Data: objects that outlive their context are invalidated (their hooks called), never left
        // answering with values nothing keeps current.
        let start = ProbeClock.now()
        let invalidated = invalidateObjects(contextGoingAway: true, collecting: false)
        reader.releaseSnapshots(held)
        if probesEnabled && invalidated.count > 0 {
            coordinator.probes.record(.invalidate(InvalidateEvent(objects: invalidated.count, reason: .contextDeallocated,
                                                                  duration: ProbeClock.seconds(start, ProbeClock.now()), context: serialNumber)))
        }
    }

    // MARK: Queues

    var isOnQueue: Bool {
        switch concurrencyType {
        case .mainQueue: return Thread.isMainThread
        case .privateQueue: return DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self)
        }
    }

    /// Runs `block` asynchronously on the context's queue.
    /// Pending changes are processed (objects-did-change sent) when the block returns.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        if let service = tracedServiceContext {
            queue.async {
                ServiceContext.withValue(service) {
                    block()
                    self.processPendingChanges()
                }
            }
            return
        }
        queue.async {
            block()
            self.processPendingChanges()
        }
    }

    /// The caller's service context, to carry to the context's queue, when a tracing recorder listens (nil
    /// otherwise: one branch).
    @inline(__always) var tracedServiceContext: ServiceContext? {
        coordinator.probes.tracesOperations ? ServiceContext.current : nil
    }

    /// Queues `work` on the context's queue, after what is queued already.
    func enqueue(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs `body` on the context's queue and waits for it (runs it in place when already on the queue).
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        if isOnQueue { return try body() }
        if let service = tracedServiceContext {
            return try withoutActuallyEscaping(body) { escapable in
                try queue.sync { try ServiceContext.withValue(service) { try escapable() } }
            }
        }
        return try withoutActuallyEscaping(body) { escapable in
            try queue.sync { try escapable() }
        }
    }

    // MARK: Registration

    /// Objects registered in the context.
    public var registeredObjects: [ManagedObject] {
        registry.values + pendingInsertions + temporaryObjects.values.filter { $0.key < 0 && $0.managedObjectContext === self && !$0.isInserted }
    }
    /// Objects inserted since the last save.
    public var insertedObjects: [ManagedObject] { pendingInsertions }
    /// Saved objects changed since the last save.
    public var updatedObjects: [ManagedObject] { Array(updatedSet.values) }
    /// Objects deleted since the last save.
    public var deletedObjects: [ManagedObject] { Array(deletedSet.values) }
    /// True when there are unsaved inserts, updates or deletes.
    public var hasChanges: Bool { insertedCount > 0 || !updatedSet.isEmpty || !deletedSet.isEmpty }

    /// The object registered for `id`, or nil; never a fetch.
    public func registeredObject(for id: ManagedObjectID) -> ManagedObject? {
        if id.isTemporaryID { return heldObject(entity: id.entity, key: id.key) }
        if let object = registry[id.objectKey] { return object }
        return obtainedKeys.isEmpty ? nil : obtainedKeys[id.objectKey]
    }

    /// The object for `id`: the registered one, else a fault (no SQL). Check existence with `existingObject(with:)`.
    public func object(with id: ManagedObjectID) -> ManagedObject {
        if let object = registeredObject(for: id) { return object }
        let entity = model.entity(named: id.entity.name) ?? id.entity
        if id.isTemporaryID, parent != nil, entity.model === model {
            // A child context can reach its ancestors' inserted objects.
            return faultingObject(entity: entity, key: id.key)
        }
        guard !id.isTemporaryID, entity.model === model else {
            // A temporary ID from another context, or an ID of another model: nothing to fault in.
            let object = entity.managedClass.init(entity: entity, insertInto: nil)
            object.key = id.key
            object.flags = .inaccessible
            object.values = SlotRow(Array(repeating: .null, count: entity.properties.count))
            return object
        }
        return faultingObject(entity: entity, key: id.key)
    }

    /// The object for `id`, fulfilled; throws `StoreError.objectNotFound` when no such row exists.
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject {
        if let object = registeredObject(for: id), !object.isFault {
            // A fault that fired on a row that is gone stays registered, but is no existing object.
            guard !object.flags.contains(.inaccessible) else { throw StoreError.objectNotFound(id) }
            return object
        }
        if parent != nil, id.entity.model === model {
            let object = faultingObject(entity: id.entity, key: id.key)
            fulfillFault(object)
            guard !object.flags.contains(.inaccessible) else { throw StoreError.objectNotFound(id) }
            return object
        }
        guard !id.isTemporaryID else { throw StoreError.objectNotFound(id) }
        guard id.entity.model === model || model.entity(named: id.entity.name)?.versionHash == id.entity.versionHash else {
            throw StoreError.foreignObjectID(id.uriString)
        }
        let entity = id.entity.model === model ? id.entity : model.entity(named: id.entity.name)!
        let object = faultingObject(entity: entity, key: id.key)
        guard let row = try reader.snapshotForFault(entity: entity, key: id.key, retain: !object.flags.contains(.holdsSnapshot)) else {
            throw StoreError.objectNotFound(id)
        }
        fulfill(object, values: row.values, version: row.version)
        object.awakeFromFetch()
        return object
    }

    /// The object ID for a URI (`x-coredata://…/Entity/p12`), or nil when it is malformed or foreign.
    public func objectID(forURIRepresentation uri: URL) -> ManagedObjectID? {
        objectID(forURIString: uri.absoluteString)
    }

    /// The object ID for a URI string, or nil when it is malformed or foreign.
    public func objectID(forURIString text: String) -> ManagedObjectID? {
        ManagedObjectID(uriString: text, model: model, storeIdentifier: coordinator.storeIdentifier)
    }

    /// The uniqued object for a stored row; a new fault when none is registered.
    func faultingObject(entity: EntityDescription, key: Int64) -> ManagedObject {
        if key < 0 { return temporaryObject(entity: entity, key: key) }
        let objectKey = ObjectKey(table: Int32(entity.root.entityNumber), key: key)
        if let object = registry[objectKey] {
            if object.entity.isKind(of: entity) { return object }
            // A damaged store refers to a row as another entity than its Z_ENT says: not that object, whose values
            // have another shape, but an inaccessible one with the error.
            lastFaultError = .entityMismatch(table: entity.table.name, key: key, rowEntity: object.entity, expected: entity)
            let stand = newFault(entity: entity, key: key)
            stand.flags.remove(.fault)
            stand.flags.insert(.inaccessible)
            stand.values = SlotRow(Array(repeating: .null, count: entity.properties.count))
            stand.valuesAreCommitted()
            return stand
        }
        let object = newFault(entity: entity, key: key)
        registry[objectKey] = object
        return object
    }

    /// A fault of this context, not yet registered.
    func newFault(entity: EntityDescription, key: Int64) -> ManagedObject {
        let object = entity.managedClass.init(entity: entity, insertInto: nil)
        object.managedObjectContext = self
        object.key = key
        object.flags = [.fault, objectFlags]
        return object
    }

    // MARK: Inserting and deleting

    /// Inserts a new object (Core Data's `insert(_:)`; `ManagedObject.init(entity:insertInto:)` calls it): one made
    /// with no context joins this one with the values set on it since. An object already in a context, or saved, is
    /// left as it is.
    public func insert(_ object: ManagedObject) {
        if checksQueue { checkQueue(touching: nil) }
        guard object.managedObjectContext == nil, object.key == 0 else { return }
        let key = Self.temporaryKeys.wrappingAdd(1, ordering: .relaxed).newValue
        object.managedObjectContext = self
        object.key = -key
        // An object made outside a context brings the values set on it since.
        if object.values.isEmpty {
            object.values = object.entity.insertTemplate.withUnsafeBufferPointer { template in
                insertWriter.row(width: template.count) { slots in
                    for i in 0..<template.count { (slots + i).initialize(to: template[i]) }
                }
            }
            // The row is this object's alone until it is saved or handed out.
            if !object.values.isEmpty { object.flags.insert(.ownsValueRow) }
        }
        for (slot, value) in object.entity.transientDefaults { object.transientObjects[slot] = value }
        registerInsertion(object)
        object.awakeFromInsert()
    }

    /// Marks `object`, which holds its key and values, as inserted in this context: in insertion order, and
    /// reported to the change tracker and the undo manager when changes are tracked.
    func registerInsertion(_ object: ManagedObject) {
        object.flags = [.inserted, objectFlags, object.flags.intersection([.ownsValueRow, .keyObtained])]
        if object.flags.contains(.keyObtained) { obtainedKeys[object.obtainedObjectKey] = object }
        insertionOrder.append(object)
        insertedCount += 1
        if objectFlags.contains(.tracked) {
            changeTracker?.noteInsert(object)
            undoRecorder?.captureInsertion(object)
        }
    }

    /// Creates and inserts an object of the entity named `name`.
    public func insertNewObject(forEntityName name: String) throws -> ManagedObject {
        guard let entity = model.entity(named: name) else {
            throw ModelError(source: model.source, entity: name, problem: "no such entity")
        }
        guard !entity.isAbstract else {
            throw ModelError(source: model.source, entity: name, problem: "cannot insert an object of an abstract entity")
        }
        return entity.managedClass.init(entity: entity, insertInto: self)
    }

    /// Marks `object` deleted. Its delete rules (Nullify removes it from inverses, Cascade deletes destinations) are
    /// applied at the end of the event — `processPendingChanges()`: the end of a `perform` block, a save — or only
    /// when saving if `propagatesDeletesAtEndOfEvent` is false; Deny is checked when saving. Deleting a newly
    /// inserted object forgets it, its rules applied at once.
    public func delete(_ object: ManagedObject) {
        guard object.managedObjectContext === self, !object.isDeleted else { return }
        object.willAccessValues()
        object.prepareForDeletion()
        object.willChange()
        object.flags.insert(.deleted)
        changeTracker?.noteDelete(object)
        if object.flags.contains(.inserted) {
            insertedCount -= 1
        } else {
            updatedSet[ObjectIdentifier(object)] = nil
            deletedSet[ObjectIdentifier(object)] = object
        }
        if object.flags.contains(.inserted) {
            // It leaves the context now: nothing could apply its rules later.
            propagateDelete(of: object)
            unregister(object)
        } else {
            pendingDeletePropagation.append(object)
        }
    }

    func objectDidChange(_ object: ManagedObject) {
        guard !object.isInserted, !object.isDeleted else { return }
        updatedSet[ObjectIdentifier(object)] = object
    }

    func unregister(_ object: ManagedObject) {
        let key = object.objectKeyForCache
        if object.key > 0, registry.remove(object, at: key), !object.isFault { materializedCount -= 1 }
        if object.key < 0, temporaryObjects[object.key] === object { temporaryObjects[object.key] = nil }
        if object.key < 0 && object.flags.contains(.keyObtained) { obtainedKeys[object.obtainedObjectKey] = nil }
        if object.flags.contains(.holdsSnapshot) {
            object.flags.remove(.holdsSnapshot)
            reader.releaseSnapshot(key)
        }
        // Its `deinit` will not reach this context: its batch position goes now.
        if object.flags.contains(.batched) { leaveBatch(object) }
        object.managedObjectContext = nil
    }

    // MARK: Resetting

    /// Forgets every object: unsaved changes are lost and existing objects become unusable.
    public func reset() {
        reportPrefetchUse()
        let held = registry.values.compactMap { $0.flags.contains(.holdsSnapshot) ? $0.objectKeyForCache : nil }
        let start = ProbeClock.now()
        let invalidated = invalidateObjects(contextGoingAway: false, collecting: changeTracker != nil)
        insertWriter.endBlock()
        temporaryObjects.removeAll()
        obtainedKeys.removeAll()
        registry.removeAll()
        materializedCount = 0
        insertionOrder.removeAll()
        insertedCount = 0
        updatedSet.removeAll()
        deletedSet.removeAll()
        conflictChecks.removeAll()
        pendingDeletePropagation.removeAll()
        undoManager?.removeAllActions()
        reader.releaseSnapshots(held)
        if probesEnabled && invalidated.count > 0 {
            coordinator.probes.record(.invalidate(InvalidateEvent(objects: invalidated.count, reason: .reset,
                                                                  duration: ProbeClock.seconds(start, ProbeClock.now()), context: serialNumber)))
        }
        notifyInvalidatedAll(invalidated.objects)
    }

    /// Invalidates every object the context holds, as Core Data does on `reset()` and when a context goes away:
    /// each turns into a fault with no values and no context, its `willTurnIntoFault`/`didTurnIntoFault` called,
    /// so that an old object never answers with a stale value; setting one is an error. Tables are left to the
    /// caller. Going away, the context is not reachable from the hooks (it is being deinitialized).
    func invalidateObjects(contextGoingAway: Bool, collecting: Bool) -> (count: Int, objects: [ManagedObject]) {
        let hooks = model.hasCustomClasses
        var count = 0
        var objects: [ManagedObject] = []
        func invalidate(_ object: ManagedObject) {
            count += 1
            if collecting { objects.append(object) }
            if contextGoingAway { object.managedObjectContext = nil }
            invalidateObject(object, hooks: hooks)
        }
        for object in registry.values { invalidate(object) }
        for object in insertionOrder where object.managedObjectContext === self { invalidate(object) }
        for object in temporaryObjects.values where object.managedObjectContext === self { invalidate(object) }
        return (count, objects)
    }

    /// Turns `object` into an invalidated fault: no values, no context, its fault hooks called (when `hooks`, the
    /// model has custom classes). Tables are the caller's.
    func invalidateObject(_ object: ManagedObject, hooks: Bool) {
        if object.flags.contains(.batched) { leaveBatch(object) }
        if object.flags.contains(.watched) { watchedObjects[ObjectIdentifier(object)] = nil }
        if hooks && object.entity.hasCustomClass { object.willTurnIntoFault() }
        object.managedObjectContext = nil
        if object.flags.contains(.ownsValueRow) { object.values.clearInPlace() }
        object.flags = [.fault, .invalidated]
        object.values = []
        object.changes.removeAll()
        object.transientObjects.removeAll()
        if hooks && object.entity.hasCustomClass { object.didTurnIntoFault() }
    }

    /// Discards unsaved changes: inserted objects are forgotten, deleted ones restored, updated ones reverted.
    public func rollback() {
        undoManager?.removeAllActions()
        pendingDeletePropagation.removeAll()
        for object in pendingInsertions {
            object.flags.remove(.inserted)
            unregister(object)
        }
        let touched = Array(updatedSet.values) + Array(deletedSet.values)
        for object in touched {
            object.flags.subtract([.deleted, .updated])
            object.values = object.committed
            object.valuesAreCommitted()
            object.changes.removeAll()
            object.transientObjects.removeAll()
        }
        for object in registry.values + temporaryObjects.values {
            for case .many(let storage) in object.values where storage.changed { storage.revert() }
        }
        insertionOrder.removeAll()
        insertedCount = 0
        updatedSet.removeAll()
        deletedSet.removeAll()
        insertWriter.endBlock()
    }

    /// Objects still inserted, in insertion order.
    var pendingInsertions: [ManagedObject] {
        insertionOrder.count == insertedCount ? insertionOrder : insertionOrder.filter { $0.isInserted && $0.managedObjectContext === self }
    }

    /// Refreshes `object` from the store. With `mergeChanges` false (or no unsaved changes) it turns back into a
    /// fault, dropping unsaved changes and its hold on the row-cache snapshot; with true it takes the latest stored
    /// values and reapplies its unsaved changes on top.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard probesEnabled else { return refreshObject(object, mergeChanges: mergeChanges) }
        tracedRefresh(objects: 1, mergeChanges: mergeChanges) { refreshObject(object, mergeChanges: mergeChanges) }
    }

    /// `refresh(_:mergeChanges:)` without a probe event (merges and conflict resolution count their own).
    func refreshObject(_ object: ManagedObject, mergeChanges: Bool) {
        guard object.managedObjectContext === self, !object.isInserted else { return }
        changeTracker?.noteRefresh(object)
        if !mergeChanges || !object.hasChanges {
            object.willTurnIntoFault()
            defer { object.didTurnIntoFault() }
            // As Core Data: the fault lets go of its row-cache snapshot, so once no other context holds it the next
            // fire reads the store (and sees what other coordinators wrote since).
            if object.flags.contains(.holdsSnapshot) { reader.releaseSnapshot(object.objectKeyForCache) }
            if object.flags.contains(.watched) { watchedObjects[ObjectIdentifier(object)] = nil }
            if object.key > 0 && !object.isFault { materializedCount -= 1 }
            object.flags = object.flags.intersection([.checksQueue, .tracked, .batched])
            object.flags.insert(.fault)
            object.values = []
            object.valuesAreCommitted()
            object.changes.removeAll()
            object.transientObjects.removeAll()
            updatedSet[ObjectIdentifier(object)] = nil
            deletedSet[ObjectIdentifier(object)] = nil
            return
        }
        guard let row = underlyingRow(of: object) else { return }
        // Fetched properties are fetched again when next read (Core Data: refresh re-evaluates them).
        object.forgetFetchedValues()
        var merged = row.values
        for i in merged.indices where object.changes.contains(i) {
            merged[i] = object.values[i]
        }
        for relationship in object.entity.relationships where relationship.isToMany && relationship.index < merged.count {
            // A to-many takes the stored members with this context's additions and removals on top; one without
            // changes is simply read again when next used.
            guard case .many(let storage) = object.values[relationship.index], storage.changed else { continue }
            let stored = fireRelationshipFault(relationship, of: object)
            let removed = Set(storage.original.lazy.filter { !storage.contains($0) }.map(ObjectIdentifier.init))
            var members = stored.filter { !removed.contains(ObjectIdentifier($0)) }
            let present = Set(members.lazy.map(ObjectIdentifier.init))
            let originals = Set(storage.original.lazy.map(ObjectIdentifier.init))
            members += storage.objects.filter { !originals.contains(ObjectIdentifier($0)) && !present.contains(ObjectIdentifier($0)) }
            merged[relationship.index] = .many(ToManyStorage(objects: members, original: stored))
        }
        // As Core Data: awakeFromFetch runs on the merged values, then transient attributes get their values from
        // before the refresh back (seed 000 L2020–2080: a cached fullName stays "Sarit Jones").
        let transients = object.entity.attributes.filter(\.isTransient).map { ($0.index, object.values[$0.index], object.transientObjects[$0.index]) }
        object.values = merged
        object.committed = row.values
        object.version = row.version
        object.awakeFromFetch()
        for (slot, value, transientObject) in transients where slot < object.values.count {
            object.values[slot] = value
            object.transientObjects[slot] = transientObject
        }
    }

    /// Refreshes every registered object, keeping unsaved changes.
    public func refreshAllObjects() {
        let objects = registeredObjects.filter { !$0.isInserted }
        let refreshAll = { for object in objects { self.refreshObject(object, mergeChanges: true) } }
        if probesEnabled { tracedRefresh(objects: objects.count, mergeChanges: true, refreshAll) } else { refreshAll() }
    }
}

extension ManagedObject {
    var objectKeyForCache: ObjectKey { ObjectKey(table: entity.rootNumber, key: key) }
    /// The table key of the permanent key `obtainPermanentIDs(for:)` gave an unsaved object.
    var obtainedObjectKey: ObjectKey { ObjectKey(table: entity.rootNumber, key: pendingKey) }
}
