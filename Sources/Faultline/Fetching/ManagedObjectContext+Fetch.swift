/// Executing fetch requests in a context: rows go to the coordinator's row cache, objects are uniqued.
extension ManagedObjectContext {
    /// Fetches the objects `request` describes.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [T] {
        guard let entity = model.entity(named: request.entityName) else { throw FetchError.unknownEntity(request.entityName) }
        let entities = request.includesSubentities ? entity.selfAndDescendants : [entity]
        guard entities.allSatisfy({ $0.managedClass is T.Type }) else {
            throw FetchError.resultTypeMismatch(entity: entity.name, expected: "\(T.self)")
        }
        let objects = try fetchObjects(entity: entity, entities: entities, request: FetchRequest<ManagedObject>(request))
        // Every object is of a class checked above to be a T; arrays of class references share one layout.
        return unsafeBitCast(objects, to: [T].self)
    }

    /// The non-generic body of `fetch`, so that the per-row work is compiled once, for `ManagedObject`.
    private func fetchObjects(entity: EntityDescription, entities: [EntityDescription], request: FetchRequest<ManagedObject>) throws -> [ManagedObject] {
        var results: [ManagedObject] = []
        var keys: [Int64]? = nil
        if let ids = request.objectIDs {
            keys = ids.compactMap { id in
                guard !id.isTemporaryID, let own = model.entity(named: id.entity.name), own.isKind(of: entity) else { return nil }
                return id.key
            }
            if keys!.isEmpty { return pendingInserts(for: entities, request: request) }
        }
        let root = Int32(entity.root.entityNumber)
        let returnsFaults = request.returnsObjectsAsFaults
        let skipDeleted = request.includesPendingChanges && !deletedSet.isEmpty
        // A result holds each row once, so a context that had nothing registered needs no uniquing lookup.
        let mayBeRegistered = !registry.isEmpty
        do {
            try coordinator.fetchRows(entity: entity, includesSubentities: request.includesSubentities, keys: keys,
                                      limit: request.fetchLimit, offset: request.fetchOffset) { rowEntity, key, version, snapshot in
                if mayBeRegistered, let existing = registry[ObjectKey(table: root, key: key)] {
                    if skipDeleted && existing.isDeleted { return }
                    results.append(existing)
                    if existing.flags.contains(.holdsSnapshot) {
                        // Registered and holding: the object keeps its state (a refresh updates it), but the row
                        // cache takes a newer version of the row (a fault will be fulfilled from it).
                        if existing.isFault || existing.version != version { coordinator.refreshCachedRow(root: root, key: key, snapshot) }
                        return
                    }
                    let values = snapshot()
                    existing.flags.insert(.holdsSnapshot)
                    if existing.isFault && !returnsFaults { fulfill(existing, values: values, version: version) }
                    return
                }
                let object = rowEntity.managedClass.init(entity: rowEntity, insertInto: nil)
                object.managedObjectContext = self
                object.key = key
                let values = snapshot()
                if returnsFaults {
                    object.flags = [.fault, .holdsSnapshot]
                } else {
                    object.values = values
                    object.version = version
                    object.flags = .holdsSnapshot
                }
                registry[ObjectKey(table: root, key: key)] = object
                results.append(object)
            }
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
        if request.includesPendingChanges && insertedCount > 0 {
            results += pendingInserts(for: entities, request: request)
        }
        return results
    }

    private func pendingInserts(for entities: [EntityDescription], request: FetchRequest<ManagedObject>) -> [ManagedObject] {
        guard request.includesPendingChanges else { return [] }
        let numbers = Set(entities.map(\.entityNumber))
        var ids: Set<Int64>? = nil
        if let requested = request.objectIDs { ids = Set(requested.filter(\.isTemporaryID).map(\.key)) }
        return pendingInsertions
            .filter { numbers.contains($0.entity.entityNumber) && (ids?.contains($0.key) ?? true) }
    }

    /// The number of objects `request` would return.
    public func count<T: ManagedObject>(for request: FetchRequest<T>) throws -> Int {
        var faults = request
        faults.returnsObjectsAsFaults = true
        return try fetch(faults).count
    }
}
