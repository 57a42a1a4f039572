/// Relationship access and inverse maintenance.
///
/// A to-one slot holds `.object` once set in memory, or the stored destination key (`.integer`) as fetched; a
/// to-many slot holds `.many` once fired. Setting either side keeps the inverse in step.
extension ManagedObject {
    // MARK: To-one

    /// The destination of a to-one relationship (a fault if not yet loaded); no SQL is issued. From then on the
    /// object holds its destination, as a fired to-one does in Core Data: the destination stays alive as long as it.
    final func destination(of relationship: RelationshipDescription) -> ManagedObject? {
        switch slot(at: relationship.index) {
        case .object(let object): return object
        case .integer(let packed):
            guard let context = managedObjectContext else { return nil }
            let (key, entityNumber) = ToOneReference.unpack(packed, relationship: relationship)
            let model = entity.model!
            let destination = context.faultingObject(entity: entityNumber.flatMap { model.entity(number: $0) } ?? relationship.destination!, key: key)
            values[relationship.index] = .object(destination)
            return destination
        default: return nil
        }
    }

    /// Sets a to-one relationship and maintains its inverse.
    final func setDestination(_ newValue: ManagedObject?, of relationship: RelationshipDescription) {
        let old = destination(of: relationship)
        if old === newValue { return }
        setSlot(newValue.map(Slot.object) ?? .null, at: relationship.index)
        guard let inverse = relationship.inverse else { return }
        if let old { old.removeInverse(inverse, pointingAt: self) }
        if let newValue { newValue.addInverse(inverse, pointingAt: self) }
    }

    // MARK: To-many

    /// The members of a to-many relationship, firing the relationship fault if needed (member objects stay faults).
    final func objects(for relationship: RelationshipDescription) -> [ManagedObject] {
        toManyStorage(for: relationship)?.objects ?? []
    }

    /// The number of members of a to-many relationship (fires the relationship fault, not the members' faults).
    public final func count(forRelationship name: String) -> Int {
        guard let relationship = entity.relationship(named: name), relationship.isToMany else { return 0 }
        return toManyStorage(for: relationship, countOnly: true)?.count ?? 0
    }

    /// The members of the to-many relationship `name` (empty for unknown names).
    public final func objects(forRelationship name: String) -> [ManagedObject] {
        guard let relationship = entity.relationship(named: name), relationship.isToMany else { return [] }
        return objects(for: relationship)
    }

    /// The loaded members of a to-many relationship, firing its fault when needed (`countOnly`: the caller only
    /// wants their number — probes say so, as counting through a relationship fault in a loop is a finding).
    final func toManyStorage(for relationship: RelationshipDescription, countOnly: Bool = false) -> ToManyStorage? {
        if case .many(let storage) = slot(at: relationship.index) { return storage }
        guard let context = managedObjectContext, relationship.index < values.count else { return nil }
        let storage = ToManyStorage(objects: context.fireRelationshipFault(relationship, of: self, countOnly: countOnly))
        values[relationship.index] = .many(storage)
        return storage
    }

    /// Adds `object` to the to-many relationship `name` (at `index` for ordered relationships; the end when nil).
    public final func addObject(_ object: ManagedObject, toRelationship name: String, at index: Int? = nil) throws {
        let relationship = try toManyRelationship(name)
        try checkDestination(object, of: relationship)
        addObject(object, to: relationship, at: index)
    }

    /// Removes `object` from the to-many relationship `name`.
    public final func removeObject(_ object: ManagedObject, fromRelationship name: String) throws {
        removeObject(object, from: try toManyRelationship(name))
    }

    private func toManyRelationship(_ name: String) throws -> RelationshipDescription {
        guard let property = entity.property(named: name) else { throw ManagedObjectError.unknownKey(entity: entity.name, key: name) }
        guard let relationship = property as? RelationshipDescription, relationship.isToMany else {
            throw ManagedObjectError.notARelationship(entity: entity.name, key: name)
        }
        return relationship
    }

    final func addObject(_ object: ManagedObject, to relationship: RelationshipDescription, at index: Int? = nil) {
        guard let storage = toManyStorage(for: relationship) else { return }
        if storage.contains(object) {
            guard relationship.isOrdered, let index else { return }
            willChange()
            storage.remove(object)
            storage.insert(object, at: index)
            markChanged(relationship.index)
            return
        }
        willChange()
        storage.insert(object, at: index)
        markChanged(relationship.index)
        if let inverse = relationship.inverse { object.addInverse(inverse, pointingAt: self) }
    }

    final func removeObject(_ object: ManagedObject, from relationship: RelationshipDescription) {
        guard let storage = toManyStorage(for: relationship), storage.contains(object) else { return }
        willChange()
        storage.remove(object)
        markChanged(relationship.index)
        if let inverse = relationship.inverse { object.removeInverse(inverse, pointingAt: self) }
    }

    final func replaceObjects(_ newObjects: [ManagedObject], in relationship: RelationshipDescription) {
        let current = objects(for: relationship)
        let keep = Set(newObjects.lazy.map(ObjectIdentifier.init))
        for object in current where !keep.contains(ObjectIdentifier(object)) { removeObject(object, from: relationship) }
        for (i, object) in newObjects.enumerated() { addObject(object, to: relationship, at: relationship.isOrdered ? i : nil) }
    }

    // MARK: Inverse maintenance

    /// `self.inverse` must now include (to-many) or be (to-one) `source`.
    final func addInverse(_ inverse: RelationshipDescription, pointingAt source: ManagedObject) {
        if inverse.isToMany {
            guard let storage = toManyStorage(for: inverse), !storage.contains(source) else { return }
            willChange()
            storage.insert(source)
            markChanged(inverse.index)
        } else {
            let previous = destination(of: inverse)
            if previous === source { return }
            setSlot(.object(source), at: inverse.index)
            // The previous holder of `self` through the forward relationship loses it.
            if let previous, let forward = inverse.inverse { previous.dropForward(forward, member: self) }
        }
    }

    /// `self.inverse` must no longer include (to-many) or point at (to-one) `source`.
    final func removeInverse(_ inverse: RelationshipDescription, pointingAt source: ManagedObject) {
        if isDeleted && managedObjectContext == nil { return }
        if inverse.isToMany {
            guard let storage = toManyStorage(for: inverse), storage.contains(source) else { return }
            willChange()
            storage.remove(source)
            markChanged(inverse.index)
        } else if destination(of: inverse) === source {
            setSlot(.null, at: inverse.index)
        }
    }

    /// Removes `member` from this object's `forward` relationship without touching `member` (its side is
    /// already updated).
    private func dropForward(_ forward: RelationshipDescription, member: ManagedObject) {
        if forward.isToMany {
            guard let storage = toManyStorage(for: forward), storage.contains(member) else { return }
            willChange()
            storage.remove(member)
            markChanged(forward.index)
        } else if destination(of: forward) === member {
            setSlot(.null, at: forward.index)
        }
    }
}

/// Packs a to-one's stored destination key with its entity number when the destination has sub-entities.
enum ToOneReference {
    static let entityShift: Int64 = 48
    static let keyMask: Int64 = (1 << 48) - 1

    @inline(__always) static func pack(key: Int64, entityNumber: Int64?) -> Int64 {
        guard let entityNumber else { return key }
        return key | (entityNumber << entityShift)
    }

    @inline(__always) static func unpack(_ packed: Int64, relationship: RelationshipDescription) -> (key: Int64, entityNumber: Int?) {
        guard relationship.entityColumnName != nil else { return (packed, nil) }
        let number = Int(packed >> entityShift)
        return (packed & keyMask, number == 0 ? nil : number)
    }
}
