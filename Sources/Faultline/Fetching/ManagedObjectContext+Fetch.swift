/// Executing fetch requests in a context: rows go to the coordinator's row cache, objects are uniqued.
extension ManagedObjectContext {
    /// Fetches the objects `request` describes.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [T] {
        guard let entity = model.entity(named: request.entityName) else { throw FetchError.unknownEntity(request.entityName) }
        let entities = request.includesSubentities ? entity.selfAndDescendants : [entity]
        guard entities.allSatisfy({ $0.managedClass is T.Type }) else {
            throw FetchError.resultTypeMismatch(entity: entity.name, expected: "\(T.self)")
        }
        var results: [T] = []
        var keys: [Int64]? = nil
        if let ids = request.objectIDs {
            keys = ids.filter { !$0.isTemporaryID && $0.entity.isKind(of: entity) || (!$0.isTemporaryID && $0.entity.name == entity.name) }.map(\.key)
            if keys!.isEmpty { return pendingInserts(for: entities, request: request) }
        }
        let root = Int32(entity.root.entityNumber)
        let returnsFaults = request.returnsObjectsAsFaults
        let skipDeleted = request.includesPendingChanges && !deletedSet.isEmpty
        do {
            try coordinator.fetchRows(entity: entity, includesSubentities: request.includesSubentities, keys: keys,
                                      limit: request.fetchLimit, offset: request.fetchOffset) { rowEntity, key, version, values in
                let objectKey = ObjectKey(table: root, key: key)
                if let existing = registry[objectKey] {
                    if skipDeleted && existing.isDeleted { return false }
                    results.append(unsafeDowncast(existing, to: T.self))
                    guard !existing.flags.contains(.holdsSnapshot) else { return false }
                    if existing.isFault && !returnsFaults {
                        fulfill(existing, values: values, version: version)
                    } else {
                        existing.flags.insert(.holdsSnapshot)
                    }
                    return true
                }
                let object = rowEntity.managedClass.init(entity: rowEntity, insertInto: nil)
                object.managedObjectContext = self
                object.key = key
                if returnsFaults {
                    object.flags = [.fault, .holdsSnapshot]
                } else {
                    object.values = values
                    object.committed = values
                    object.version = version
                    object.flags = .holdsSnapshot
                }
                registry[objectKey] = object
                results.append(unsafeDowncast(object, to: T.self))
                return true
            }
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
        if request.includesPendingChanges && !insertedSet.isEmpty {
            results += pendingInserts(for: entities, request: request)
        }
        return results
    }

    private func pendingInserts<T: ManagedObject>(for entities: [EntityDescription], request: FetchRequest<T>) -> [T] {
        guard request.includesPendingChanges else { return [] }
        let numbers = Set(entities.map(\.entityNumber))
        var ids: Set<Int64>? = nil
        if let requested = request.objectIDs { ids = Set(requested.filter(\.isTemporaryID).map(\.key)) }
        return pendingInsertions
            .filter { numbers.contains($0.entity.entityNumber) && (ids?.contains($0.key) ?? true) }
            .map { unsafeDowncast($0, to: T.self) }
    }

    /// The number of objects `request` would return.
    public func count<T: ManagedObject>(for request: FetchRequest<T>) throws -> Int {
        var faults = request
        faults.returnsObjectsAsFaults = true
        return try fetch(faults).count
    }
}
