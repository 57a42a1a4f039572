import Foundation

/// An object of the object graph, living in one context.
///
/// Use it directly with key-value access (`value(forKey:)`, `setValue(_:forKey:)`), or subclass it with typed
/// properties built on `Attribute`, `ToOne` and `ToMany` keys. Objects are not Sendable: pass `objectID` across
/// contexts instead.
///
/// An object fetched or reached through a relationship starts as a fault: reading any property fulfils it,
/// loading all stored attributes at once from the row cache or with one SQL statement.
open class ManagedObject: CustomStringConvertible {
    /// The object's entity.
    public let entity: EntityDescription
    /// The context that owns the object; nil once the object is removed from it (reset, or deleted and saved).
    ///
    /// Not a weak reference (that costs on every fault): the context clears it for every object it lets go of,
    /// including when the context itself goes away.
    public internal(set) final var managedObjectContext: ManagedObjectContext? {
        @inline(__always) get { contextReference?.takeUnretainedValue() }
        @inline(__always) set { contextReference = newValue.map { Unmanaged.passUnretained($0) } }
    }
    /// `managedObjectContext`, unretained. Per-object paths (an object's release) call the context through it
    /// without retaining it: a context anything holds weakly keeps its reference counts in a side table, where
    /// each retain and release takes the slow path (a fifth of releasing a fetch's objects was these).
    @exclusivity(unchecked) final var contextReference: Unmanaged<ManagedObjectContext>?

    // The context's queue is the only accessor; skip dynamic exclusivity checks on the hot slots.
    @exclusivity(unchecked) var key: Int64 = 0
    @exclusivity(unchecked) var version: Int64 = 0
    @exclusivity(unchecked) @usableFromInline final var values = SlotRow() {
        // Any row assigned or changed through the property is a row others may share: no more writes in place.
        didSet { flags.remove(.ownsValueRow) }
    }
    /// The values as last fetched or saved, kept apart from `values` only once they differ (see `committed`).
    @exclusivity(unchecked) var committedCopy = SlotRow()
    @exclusivity(unchecked) @usableFromInline final var flags: Flags = []
    /// The fault's position in `batch` (declared here, it fills the padding after `flags`).
    @exclusivity(unchecked) var batchIndex: UInt32 = 0
    @exclusivity(unchecked) var changes = ChangeMask()
    /// Transient values that have no stored form (transformable, undefined, object ID types), by slot.
    var transientObjects: [Int: Any] = [:]
    /// The permanent key a save is about to give an inserted object (or gave it early, with `.keyObtained`).
    var pendingKey: Int64 = 0
    /// The version (Z_OPT) the current save gives the row.
    var pendingVersion: Int64 = 0
    /// The batched fetch result whose fault this is (with `.batched` in `flags`).
    var batch: ManagedObjectContext.FaultBatch?

    @usableFromInline
    struct Flags: OptionSet, Sendable {
        @usableFromInline let rawValue: UInt16
        @usableFromInline init(rawValue: UInt16) { self.rawValue = rawValue }
        /// `fault`, `checksQueue` and `watched`: the flags that make a read do more than read (see `slot(at:)`).
        @inlinable static var accessWork: UInt16 { 1 | 128 | 256 }
        static let fault = Flags(rawValue: 1)
        static let inserted = Flags(rawValue: 2)
        static let deleted = Flags(rawValue: 4)
        static let updated = Flags(rawValue: 8)
        static let holdsSnapshot = Flags(rawValue: 16)
        static let inaccessible = Flags(rawValue: 32)
        /// `committedCopy` holds the committed values (otherwise they are `values` themselves).
        static let hasCommittedCopy = Flags(rawValue: 64)
        /// The context checks that the object is used on its queue (concurrency debugging).
        static let checksQueue = Flags(rawValue: 128)
        /// Loaded by a prefetch while probes watch whether prefetched objects get used.
        static let watched = Flags(rawValue: 256)
        /// The context observes changes or records undo: changes must be reported to it.
        static let tracked = Flags(rawValue: 512)
        /// A fault of a batched fetch result (`batch`, `batchIndex`).
        static let batched = Flags(rawValue: 1024)
        /// An inaccessible fault (its row gone) that its context marked deleted (`shouldDeleteInaccessibleFaults`).
        static let deletedInStore = Flags(rawValue: 4096)
        /// Left behind by its context's `reset()`: no values, no context; setting a value is an error.
        static let invalidated = Flags(rawValue: 8192)
        /// An inserted object given its permanent key before its save (`obtainPermanentIDs(for:)`): `pendingKey`
        /// holds it, and its ID is permanent while `key` stays the temporary one until the save.
        static let keyObtained = Flags(rawValue: 16384)
        /// `values` is a row of the context's insert block that nothing else holds: changes are written in place
        /// (see `storeSlot`). Cleared when the row is assigned, changed through `values`, or handed out
        /// (`sharedValues`).
        static let ownsValueRow = Flags(rawValue: 2048)
    }

    /// The object's address: a key for the context's tables that never retains the object (its `deinit` uses it).
    @inline(__always) final var address: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The values as last fetched or saved. A fetched object shares one array with the row cache until its
    /// first change, so most objects never pay for a second copy.
    var committed: SlotRow {
        get { flags.contains(.hasCommittedCopy) ? committedCopy : sharedValues }
        set {
            committedCopy = newValue
            flags.insert(.hasCommittedCopy)
        }
    }

    /// The values, for a holder that keeps them (a snapshot, an undo record, a parent context's state): from now on
    /// a change copies the row first, as for any shared row.
    final var sharedValues: SlotRow {
        flags.remove(.ownsValueRow)
        return values
    }

    /// Writes one slot: in place when the object owns its row in the context's insert block (an inserted object's
    /// row shares its block with its neighbours', so copy-on-write would copy it out at the first change: an
    /// allocation per inserted object), else copy-on-write. Objects (a to-one, a to-many's storage) are never
    /// written into a shared block: the block would hold them, after the row is let go of, until its last row goes.
    @inline(__always) final func storeSlot(_ value: Slot, at index: Int) {
        if flags.contains(.ownsValueRow) && !value.holdsObject {
            values.assignInPlace(value, at: index)
        } else {
            values[index] = value
        }
    }

    /// Drops the separate committed copy: the current values are the committed ones.
    @inline(__always) final func valuesAreCommitted() {
        committedCopy = []
        flags.remove(.hasCommittedCopy)
    }

    /// Creates an object of `entity`, inserting it into `context` when one is given.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        self.entity = entity
        if let context { context.insert(self) }
    }

    deinit {
        // A row of its context's insert block that only this object held: its values go now, not with the block.
        if flags.contains(.ownsValueRow) { values.clearInPlace() }
        // The context holds unchanged objects weakly: one the program let go of leaves its registry here.
        contextReference?._withUnsafeGuaranteedRef { $0.objectWillDeinit(self) }
    }

    /// The name of the entity a typed subclass stands for; by default the class's own name.
    open class var entityName: String { String(describing: self) }

    /// Creates an object of this class's entity in `context`'s model and inserts it: the entity whose
    /// `representedClassName` names the class (Core Data's `entity()`), else the one named `Self.entityName`.
    ///
    /// Traps when the model has no such entity, as Core Data does; use
    /// `ManagedObjectContext.insertNewObject(forEntityName:)` to get an error instead.
    public required convenience init(context: ManagedObjectContext) {
        let name = ClassEntities.entity(for: Self.self)?.name ?? Self.entityName
        guard let entity = context.model.entity(named: name) else {
            preconditionFailure("the model has no entity named '\(name)' for \(Self.self)")
        }
        self.init(entity: entity, insertInto: context)
    }

    // MARK: State

    /// The object's ID: temporary until its first save.
    public var objectID: ManagedObjectID {
        let key = self.key < 0 && flags.contains(.keyObtained) ? pendingKey : self.key
        return ManagedObjectID(entity: entity, key: key, storeIdentifier: key > 0 ? managedObjectContext?.coordinator.storeIdentifier : nil)
    }

    /// True until a property is read or written.
    public var isFault: Bool { flags.contains(.fault) }
    /// True for an object inserted since the last save.
    public var isInserted: Bool { flags.contains(.inserted) }
    /// True for an object deleted since the last save.
    public var isDeleted: Bool { !flags.isDisjoint(with: [.deleted, .deletedInStore]) }
    /// True for a saved object with unsaved changes.
    public var isUpdated: Bool { flags.contains(.updated) }
    /// True when the object is inserted, updated or deleted.
    public var hasChanges: Bool { !flags.isDisjoint(with: [.inserted, .updated, .deleted]) }

    // MARK: Lifecycle (override in subclasses; set values here with `setPrimitiveValue` to avoid marking changes)

    /// Called once, after the object is inserted into a context; override to set up initial values.
    open func awakeFromInsert() {}
    /// Called after the object's values are loaded from the store (a fetch, a fault, a refresh).
    open func awakeFromFetch() {}
    /// Called during a save, before validation's second pass and the write, for each inserted, updated or
    /// deleted object. Changes made here are saved; objects they dirty get their own `willSave()`, but an object
    /// is called once per save, so there is no re-dirtying loop. Compare before setting all the same.
    open func willSave() {}
    /// Called after a save wrote the object (inserted, updated or deleted).
    open func didSave() {}
    /// Called when the object is deleted, before delete rules are applied.
    open func prepareForDeletion() {}
    /// Called before the object turns back into a fault (refresh without merging, a merged deletion).
    open func willTurnIntoFault() {}
    /// Called after the object turned back into a fault.
    open func didTurnIntoFault() {}
    /// Custom validation of an object about to be inserted; throw `ValidationFailure`s (or any error) to refuse.
    /// All failures of one save are reported together.
    open func validateForInsert() throws {}
    /// Custom validation of an updated object (see `validateForInsert`).
    open func validateForUpdate() throws {}
    /// Custom validation of a deleted object (see `validateForInsert`).
    open func validateForDelete() throws {}

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        "<\(type(of: self)) \(entity.name) \(objectID.uriString)\(isFault ? " (fault)" : "")>"
    }

    // MARK: Slot access (hot path)

    @inlinable @inline(__always) final func willAccessValues() {
        // One test covers the rare cases: a fault to fire, a queue to check, a prefetched object's first use.
        if flags.rawValue & Flags.accessWork != 0 { willAccessValuesSlowPath() }
    }

    @usableFromInline @inline(never)
    final func willAccessValuesSlowPath() {
        if flags.contains(.checksQueue) { managedObjectContext?.checkQueue(touching: self) }
        if flags.contains(.watched) {
            flags.remove(.watched)
            managedObjectContext?.notePrefetchedObjectUsed(self)
        }
        if flags.contains(.fault) { managedObjectContext?.fulfillFault(self) }
    }

    @inlinable @inline(__always) final func slot(at index: Int) -> Slot {
        willAccessValues()
        return index < values.count ? values[index] : .null
    }

    @usableFromInline final func setSlot(_ value: Slot, at index: Int) {
        willAccessValues()
        if index >= values.count {
            // A new object outside a context (Core Data's `insertInto: nil`, a batch insert's handler object) gets
            // values of its own when first set, kept when it is inserted later. (Faults are made this way too, and
            // must not pay for a row before they are filled.)
            guard values.isEmpty, managedObjectContext == nil, key == 0, index < entity.insertTemplate.count else { return }
            values = SlotRow(entity.insertTemplate)
        }
        willChange()
        if !flags.contains(.hasCommittedCopy) && !flags.contains(.inserted) {
            committedCopy = values
            flags.insert(.hasCommittedCopy)
        }
        storeSlot(value, at: index)
        markChanged(index)
    }

    /// Lets the undo manager, if any, keep the object's state from before the change that follows.
    @inline(__always) final func willChange() {
        if flags.contains(.tracked), let undo = managedObjectContext?.undoRecorder { undo.capture(self) }
    }

    final func markChanged(_ index: Int) {
        changes.insert(index)
        if flags.contains(.tracked), let tracker = managedObjectContext?.changeTracker { tracker.noteChange(self, slot: index) }
        if !flags.contains(.inserted) && !flags.contains(.updated) {
            flags.insert(.updated)
            managedObjectContext?.objectDidChange(self)
        }
    }

    var primaryKeyForStorage: Int64? {
        if key > 0 { return key }
        return pendingKey > 0 ? pendingKey : nil
    }

    // MARK: Key-value access

    /// The value of the property `key`: an attribute's Swift value, a to-one's object, or a to-many's objects
    /// (`[ManagedObject]`); nil for nil values. A key the entity does not have is a programming error: it traps,
    /// as Core Data raises `NSUnknownKeyException` — use `checkedValue(forKey:)` for keys from input.
    public func value(forKey key: String) -> Any? {
        guard let property = entity.property(named: key) else {
            if let fetched = entity.fetchedProperty(named: key) { return fetchedValue(for: fetched) }
            preconditionFailure("the entity \(entity.name) is not key value coding-compliant for the key \"\(key)\" (Core Data raises NSUnknownKeyException; checkedValue(forKey:) throws instead)")
        }
        return value(for: property)
    }

    /// `value(forKey:)` for a key that may not exist: an unknown key throws `ManagedObjectError.unknownKey`, naming
    /// the entity and the key; an invalidated object (its context reset) throws `ManagedObjectError.invalidated`.
    public func checkedValue(forKey key: String) throws -> Any? {
        if flags.contains(.invalidated), entity.property(named: key) != nil || entity.fetchedProperty(named: key) != nil {
            throw ManagedObjectError.invalidated(entity: entity.name, key: key)
        }
        guard let property = entity.property(named: key) else {
            if let fetched = entity.fetchedProperty(named: key) { return fetchedValue(for: fetched) }
            throw ManagedObjectError.unknownKey(entity: entity.name, key: key)
        }
        return value(for: property)
    }

    /// The value of `property` (see `value(forKey:)`).
    public func value(for property: PropertyDescription) -> Any? {
        if let attribute = property as? AttributeDescription {
            if attribute.type == .composite { return compositeValue(attribute) }
            if attribute.isTransient, let object = transientObjects[attribute.index] { return object }
            return ValueCoding.value(of: slot(at: attribute.index), type: attribute.type, transformer: attribute.valueTransformerName)
        }
        let relationship = property as! RelationshipDescription
        if relationship.isToMany { return objects(for: relationship) }
        return destination(of: relationship)
    }

    /// Sets the property `key`. Attributes take a Swift value of their type (numbers convert when they fit);
    /// to-one relationships take a `ManagedObject` or nil; to-many take an array of objects. Inverses are kept.
    public func setValue(_ value: Any?, forKey key: String) throws {
        guard let property = entity.property(named: key) else {
            throw ManagedObjectError.unknownKey(entity: entity.name, key: key)
        }
        if flags.contains(.invalidated) { throw ManagedObjectError.invalidated(entity: entity.name, key: key) }
        try setValue(value, for: property)
    }

    /// Sets `property` (see `setValue(_:forKey:)`).
    public func setValue(_ value: Any?, for property: PropertyDescription) throws {
        if let attribute = property as? AttributeDescription {
            if attribute.type == .composite {
                var slots: [(AttributeDescription, Slot)] = []
                try compositeSlots(value, of: attribute, into: &slots)
                for (element, slot) in slots { setSlot(slot, at: element.index) }
                return
            }
            let slot: Slot
            do { slot = try ValueCoding.slot(for: value, attribute: attribute) } catch let error as ValueError {
                throw ManagedObjectError.invalidValue(entity: entity.name, key: attribute.name, problem: error.problem)
            }
            if attribute.isTransient {
                if let value = ValueCoding.unwrap(value) { transientObjects[attribute.index] = value } else { transientObjects[attribute.index] = nil }
            }
            setSlot(slot, at: attribute.index)
            return
        }
        let relationship = property as! RelationshipDescription
        if relationship.isToMany {
            let unwrapped = ValueCoding.unwrap(value)
            // An array, or as Core Data takes them, a set (unordered) or an ordered set.
            let given: [ManagedObject]?
            switch unwrapped {
            case nil: given = []
            case let array as [ManagedObject]: given = array
            case let set as Set<ManagedObject>: given = Array(set)
            case let ordered as NSOrderedSet: given = ordered.array as? [ManagedObject]
            case let set as NSSet: given = set.allObjects as? [ManagedObject]
            default: given = nil
            }
            guard let objects = given else {
                throw ManagedObjectError.invalidValue(entity: entity.name, key: relationship.name, problem: "expected an array or set of objects, got \(type(of: unwrapped!))")
            }
            for object in objects { try checkDestination(object, of: relationship) }
            replaceObjects(objects, in: relationship)
        } else {
            let unwrapped = ValueCoding.unwrap(value)
            guard unwrapped == nil || unwrapped is ManagedObject else {
                throw ManagedObjectError.invalidValue(entity: entity.name, key: relationship.name, problem: "expected an object, got \(type(of: unwrapped!))")
            }
            let object = unwrapped as? ManagedObject
            if let object { try checkDestination(object, of: relationship) }
            setDestination(object, of: relationship)
        }
    }

    /// A composite attribute's value: its elements' values by name (nested composites as dictionaries), nil when
    /// every element is nil.
    private func compositeValue(_ composite: AttributeDescription) -> [String: Any]? {
        var result: [String: Any] = [:]
        for element in composite.entityElements {
            if let value = element.type == .composite ? compositeValue(element) : value(for: element) { result[element.elementName ?? element.name] = value }
        }
        return result.isEmpty ? nil : result
    }

    /// The element slots `value` (a dictionary by element name, or nil for all nil) gives a composite, checked in
    /// full before any is set.
    private func compositeSlots(_ value: Any?, of composite: AttributeDescription, into slots: inout [(AttributeDescription, Slot)]) throws {
        let unwrapped = ValueCoding.unwrap(value)
        guard unwrapped == nil || unwrapped is [String: Any] else {
            throw ManagedObjectError.invalidValue(entity: entity.name, key: composite.name,
                                                  problem: "a composite attribute takes a dictionary of its elements' values, got \(type(of: unwrapped!))")
        }
        let values = unwrapped as? [String: Any] ?? [:]
        let names = Set(composite.entityElements.compactMap(\.elementName))
        if let unknown = values.keys.sorted().first(where: { !names.contains($0) }) {
            throw ManagedObjectError.invalidValue(entity: entity.name, key: composite.name,
                                                  problem: "'\(unknown)' is not one of its elements (\(names.sorted().joined(separator: ", ")))")
        }
        for element in composite.entityElements {
            let given = values[element.elementName ?? ""]
            if element.type == .composite {
                try compositeSlots(given, of: element, into: &slots)
                continue
            }
            do { slots.append((element, try ValueCoding.slot(for: given, attribute: element))) } catch let error as ValueError {
                throw ManagedObjectError.invalidValue(entity: entity.name, key: element.name, problem: error.problem)
            }
        }
    }

    func checkDestination(_ object: ManagedObject, of relationship: RelationshipDescription) throws {
        guard object.entity.isKind(of: relationship.destination) else {
            throw ManagedObjectError.invalidValue(entity: entity.name, key: relationship.name, problem: "expected a \(relationship.destination.name), got a \(object.entity.name)")
        }
        guard object.managedObjectContext === managedObjectContext, managedObjectContext != nil else {
            throw ManagedObjectError.invalidValue(entity: entity.name, key: relationship.name, problem: "the object belongs to another context")
        }
    }

    /// The value of `key` without firing hooks or recording access (the object's fault still fires).
    public func primitiveValue(forKey key: String) -> Any? { value(forKey: key) }

    /// Sets the attribute `key` without marking the object changed: for caches and derived values set in
    /// `awakeFromFetch` or `awakeFromInsert`. Relationships are not primitive-settable.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) throws {
        guard let attribute = entity.attribute(named: key) else {
            throw ManagedObjectError.unknownKey(entity: entity.name, key: key)
        }
        let slot: Slot
        do { slot = try ValueCoding.slot(for: value, attribute: attribute) } catch let error as ValueError {
            throw ManagedObjectError.invalidValue(entity: entity.name, key: key, problem: error.problem)
        }
        willAccessValues()
        if attribute.isTransient { transientObjects[attribute.index] = ValueCoding.unwrap(value) }
        guard attribute.index < values.count else { return }
        if !flags.contains(.hasCommittedCopy) && !flags.contains(.inserted) && !attribute.isTransient {
            committedCopy = values
            flags.insert(.hasCommittedCopy)
        }
        storeSlot(slot, at: attribute.index)
    }

    /// Values changed since the last save, by key.
    public func changedValues() -> [String: Any?] {
        var result: [String: Any?] = [:]
        for property in entity.properties where changes.contains(property.index) || isToManyChanged(property) {
            result[property.name] = value(for: property)
        }
        return result
    }

    func isToManyChanged(_ property: PropertyDescription) -> Bool {
        guard property.index < values.count, case .many(let storage) = values[property.index] else { return false }
        return storage.changed
    }

    /// The value of `key` as of the last fetch or save (Core Data's `committedValue(forKey:)`): an attribute's
    /// value, a to-one's object, a to-many's members. Nil for inserted objects and unknown keys.
    public func committedValue(forKey key: String) -> Any? {
        guard !isInserted, let property = entity.property(named: key) else { return nil }
        willAccessValues()
        let index = property.index
        guard index < committed.count else { return nil }
        if let attribute = property as? AttributeDescription {
            if attribute.isTransient { return nil }
            return ValueCoding.value(of: committed[index], type: attribute.type, transformer: attribute.valueTransformerName)
        }
        let relationship = property as! RelationshipDescription
        if relationship.isToMany {
            if case .many(let storage) = values[index] { return storage.original }
            return objects(for: relationship)
        }
        switch committed[index] {
        case .object(let object): return object
        case .integer(let packed):
            guard let context = managedObjectContext else { return nil }
            let (key, entityNumber) = ToOneReference.unpack(packed, relationship: relationship)
            let destination = entityNumber.flatMap { entity.model!.entity(number: $0) } ?? relationship.destination!
            return context.faultingObject(entity: destination, key: key)
        default: return nil
        }
    }

    /// The stored values as of the last save or fetch, by key (attributes only).
    public func committedValues() -> [String: Any?] {
        var result: [String: Any?] = [:]
        for attribute in entity.attributes where !attribute.isTransient && attribute.index < committed.count {
            result[attribute.name] = ValueCoding.value(of: committed[attribute.index], type: attribute.type, transformer: attribute.valueTransformerName)
        }
        return result
    }

    // MARK: Typed access

    /// Reads or sets an attribute through a typed key. Inlinable and final, so that a read specializes to a few
    /// instructions in the caller's module (an overridable member of an open class is called through its class's
    /// table, unspecialized).
    @inlinable public final subscript<Value>(attribute: Attribute<Value>) -> Value {
        get {
            Value.decode(StoredValue(slot(at: attribute.index(in: entity))))
        }
        set {
            setSlot(newValue.encode().slot, at: attribute.index(in: entity))
        }
    }

    /// Reads or sets a to-one relationship through a typed key.
    public final subscript<Destination: ManagedObject>(relationship: ToOne<Destination>) -> Destination? {
        get {
            destination(of: relationship.relationship(in: entity)) as? Destination
        }
        set {
            setDestination(newValue, of: relationship.relationship(in: entity))
        }
    }

    /// Reads or replaces a to-many relationship through a typed key.
    public final subscript<Destination: ManagedObject>(relationship: ToMany<Destination>) -> [Destination] {
        get {
            objects(for: relationship.relationship(in: entity)).map { $0 as! Destination }
        }
        set {
            replaceObjects(newValue, in: relationship.relationship(in: entity))
        }
    }
}

/// Misuse of an object's properties: unknown key or a value of the wrong type.
public enum ManagedObjectError: Error, CustomStringConvertible, Sendable {
    /// The entity has no property `key`.
    case unknownKey(entity: String, key: String)
    /// The value does not fit the property: why.
    case invalidValue(entity: String, key: String, problem: String)
    /// `key` names an attribute where a relationship was needed.
    case notARelationship(entity: String, key: String)
    /// The object was invalidated by its context's `reset()` or deinitialization (Core Data raises an exception):
    /// fetch it again.
    case invalidated(entity: String, key: String)
    /// `obtainPermanentIDs(for:)` cannot give the object a permanent ID, for `reason`.
    case noPermanentID(entity: String, reason: String)

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        switch self {
        case .unknownKey(let entity, let key): return "entity '\(entity)' has no property '\(key)'"
        case .invalidValue(let entity, let key, let problem): return "\(entity).\(key): \(problem)"
        case .notARelationship(let entity, let key): return "\(entity).\(key) is not a relationship"
        case .invalidated(let entity, let key): return "\(entity).\(key): the object was invalidated (its context was reset or went away, or its deletion was saved); fetch it again from a context"
        case .noPermanentID(let entity, let reason): return "cannot obtain a permanent ID for an object of \(entity): \(reason)"
        }
    }
}
