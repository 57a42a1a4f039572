import Foundation

/// Executing fetch requests in a context: rows go to the coordinator's row cache, objects are uniqued.
extension ManagedObjectContext {
    /// Fetches the objects `request` describes.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>, file: StaticString = #fileID, line: UInt = #line) throws -> [T] {
        if checksQueue { checkQueue(touching: nil) }
        // One conversion of the request serves the fetch and its probe.
        let erased = request.spec
        let (entity, entities) = try fetchedEntities(erased)
        guard T.self == ManagedObject.self || entities.allSatisfy({ $0.managedClass is T.Type }) else {
            let odd = entities.first { !($0.managedClass is T.Type) } ?? entity
            throw FetchError.resultTypeMismatch(entity: odd.name, expected: "\(T.self)", actual: "\(odd.managedClass)",
                                                unresolvedClassName: model.unresolvedClassNames[odd.name])
        }
        let objects = try fetchObjects(entity: entity, entities: entities, request: erased, file: file, line: line)
        // Every object is of a class checked above to be a T; arrays of class references share one layout.
        return unsafeBitCast(objects, to: [T].self)
    }

    /// The probe site of `fetch`, not generic: a traced fetch of `[T]` would look up the metadata of `[T]` at run
    /// time on every call.
    private func fetchObjects(entity: EntityDescription, entities: [EntityDescription], request: FetchSpec,
                              file: StaticString, line: UInt) throws -> [ManagedObject] {
        guard probesEnabled else { return try fetchObjects(entity: entity, entities: entities, request: request) }
        let returnsObjects = request.includesPropertyValues && request.fetchBatchSize == 0
        let resultType: FetchEvent.ResultType = returnsObjects ? (request.returnsObjectsAsFaults ? .faults : .objects) : .ids
        // A fetch by object IDs fulfils faults the context has registered (batch faulting): not a lookup it could skip.
        return try tracedFetch(request, resultType: resultType, registers: returnsObjects && request.objectIDs == nil, callSite: callSite(file, line),
                               results: { $0.count }, uris: { $0.map(\.objectID.uriString) }) {
            try fetchObjects(entity: entity, entities: entities, request: request)
        }
    }

    /// A fetch of objects of any class, without a probe (for the other kinds of fetch that fall back on one).
    private func fetchUntraced(_ request: FetchSpec) throws -> [ManagedObject] {
        let (entity, entities) = try fetchedEntities(request)
        return try fetchObjects(entity: entity, entities: entities, request: request)
    }

    /// The request's entity, and the entities whose objects it fetches.
    func fetchedEntities(_ request: FetchSpec) throws -> (EntityDescription, [EntityDescription]) {
        let entity = try fetchedEntity(named: request.entityName)
        return (entity, entity.fetchedEntities(includingSubentities: request.includesSubentities))
    }

    /// The SQL of a request's predicate and order for `entity`; a predicate the store cannot run is a fetch error.
    func compiledFilter(_ predicate: ObjectPredicate?, _ sortDescriptors: [FetchSortDescriptor], entity: EntityDescription) throws -> FetchFilter {
        do {
            return try coordinator.fetchFilter(for: entity, predicate: predicate, sortDescriptors: sortDescriptors, shape: predicateShape)
        } catch let error as ObjectPredicateError {
            throw FetchError.predicate(error)
        }
    }

    /// The entity a request names (the last one fetched, when it is the same).
    func fetchedEntity(named name: String) throws -> EntityDescription {
        if let last = lastFetchedEntity, last.name == name { return last }
        guard let entity = model.entity(named: name) else { throw FetchError.unknownEntity(name, known: model.entities.map(\.name)) }
        lastFetchedEntity = entity
        return entity
    }

    /// The non-generic body of `fetch`, so that the per-row work is compiled once, for `ManagedObject`.
    private func fetchObjects(entity: EntityDescription, entities: [EntityDescription], request: FetchSpec) throws -> [ManagedObject] {
        let filter = try compiledFilter(request.predicate, request.sortDescriptors, entity: entity)
        var keys: [Int64]? = nil
        if let ids = request.objectIDs {
            keys = ids.compactMap { id in
                guard !id.isTemporaryID, let own = model.entity(named: id.entity.name), own.isKind(of: entity) else { return nil }
                return id.key
            }
        }
        let sortsInMemory = request.sortDescriptors.contains { $0.comparison == .localized }
        var pending = request.includesPendingChanges ? pendingCandidates(for: entities, request: request) : []
        // A child context sees its ancestors' unsaved changes as its starting state.
        let inherited = request.includesPendingChanges && parent != nil
            ? materializeParentOverlay(entityNumbers: Set(entities.map(\.entityNumber))) : nil
        if let inherited {
            let ids = request.objectIDs.map { Set($0.map(\.key)) }
            pending += inherited.objects.filter { ids?.contains($0.key) ?? true }
        }
        // With work left to do in memory, the limit and offset apply after it.
        let limitInSQL = !sortsInMemory && pending.isEmpty && inherited == nil
        var results: [ManagedObject] = []
        let idsOnly = !request.includesPropertyValues || request.fetchBatchSize > 0
        if keys?.isEmpty != true {
            if idsOnly {
                results = try faultsForKeys(entity: entity, keys: keys, filter: filter, request: request,
                                            limit: limitInSQL ? request.fetchLimit : 0, offset: limitInSQL ? request.fetchOffset : 0)
            } else {
                results = try storedObjects(entity: entity, keys: keys, filter: filter, request: request,
                                            limit: limitInSQL ? request.fetchLimit : 0, offset: limitInSQL ? request.fetchOffset : 0)
            }
        }
        if let deleted = inherited?.deleted, !deleted.isEmpty {
            results.removeAll { deleted.contains($0.objectKeyForCache) }
        }
        if !pending.isEmpty {
            results = try mergingPendingChanges(results, pending: pending, request: request)
        }
        if sortsInMemory || (!pending.isEmpty && !request.sortDescriptors.isEmpty) {
            if sortsInMemory { coordinator.noteInMemorySort() }
            results = Self.sorted(results, by: request.sortDescriptors)
        }
        if !limitInSQL {
            if request.fetchOffset > 0 { results = Array(results.dropFirst(request.fetchOffset)) }
            if request.fetchLimit > 0 { results = Array(results.prefix(request.fetchLimit)) }
        }
        if request.fetchBatchSize > 0 {
            registerBatches(results, size: request.fetchBatchSize)
        }
        // Prefetching reads the store: a child whose ancestors have changes fires its relationships through them.
        if !request.relationshipKeyPathsForPrefetching.isEmpty && !results.isEmpty && !parentChainHasChanges {
            for path in request.relationshipKeyPathsForPrefetching { try prefetch(path, from: results) }
        }
        return results
    }

    /// True when a child context's ancestors have unsaved changes (which the store does not know).
    var parentChainHasChanges: Bool {
        guard let parent else { return false }
        return parent.performAndWait { parent.hasChangesInChain() }
    }

    /// Objects for the rows a filter selects, read as IDs only: faults (uniqued) that hold no snapshot.
    private func faultsForKeys(entity: EntityDescription, keys: [Int64]?, filter: FetchFilter, request: FetchSpec,
                               limit: Int, offset: Int) throws -> [ManagedObject] {
        var filter = filter
        if let keys {
            let list = KeyList.condition("t0.Z_PK", count: keys.count)
            filter.condition = filter.condition.map { "(\($0)) AND " + list } ?? list
            filter.bindings += KeyList.bindings(keys)
        }
        let rows: [(EntityDescription, Int64)]
        do {
            rows = try reader.fetchKeys(entity: entity, includesSubentities: request.includesSubentities, filter: filter, limit: limit, offset: offset)
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
        let skipDeleted = request.includesPendingChanges && !deletedSet.isEmpty
        return rows.compactMap { rowEntity, key in
            let object = faultingObject(entity: rowEntity, key: key)
            return skipDeleted && object.isDeleted ? nil : object
        }
    }

    /// Rows from the store, as uniqued objects (faults or materialized); objects deleted in this context are left
    /// out when the request includes pending changes.
    func storedObjects(entity: EntityDescription, keys: [Int64]?, filter: FetchFilter, request: FetchSpec,
                               limit: Int, offset: Int) throws -> [ManagedObject] {
        var results: [ManagedObject] = []
        let root = Int32(entity.root.entityNumber)
        let returnsFaults = request.returnsObjectsAsFaults
        let skipDeleted = request.includesPendingChanges && !deletedSet.isEmpty
        // A result holds each row once, so a context that had nothing registered needs no uniquing lookup.
        let mayBeRegistered = !registry.isEmpty
        var awakened: [ManagedObject] = []
        // Held objects whose rows came back newer, when the request asks for them to be refreshed.
        var refetched: [ManagedObject] = []
        let refreshes = request.shouldRefreshRefetchedObjects
        do {
            try reader.fetchRows(entity: entity, includesSubentities: request.includesSubentities, keys: keys, filter: filter,
                                      limit: limit, offset: offset) { rowEntity, key, version, snapshot in
                if mayBeRegistered, let existing = registry[ObjectKey(table: root, key: key)] {
                    guard rowEntity.isKind(of: existing.entity) else {
                        throw StoreError.entityMismatch(table: entity.table.name, key: key, rowEntity: rowEntity, expected: existing.entity)
                    }
                    if skipDeleted && existing.isDeleted { return }
                    results.append(existing)
                    if existing.flags.contains(.holdsSnapshot) {
                        // Registered and holding: a fault asked for with values is fulfilled from this row (batch
                        // faulting); a materialized object keeps its state (a refresh updates it), but the row cache
                        // takes a newer version of the row.
                        if existing.isFault || existing.version != version {
                            let values = reader.refreshCachedRow(root: root, key: key, snapshot)
                            if existing.isFault && !returnsFaults {
                                fulfill(existing, values: values, version: version)
                                if rowEntity.hasCustomClass { awakened.append(existing) }
                            } else if refreshes && !existing.isFault {
                                refetched.append(existing)
                            }
                        }
                        return
                    }
                    let values = snapshot()
                    existing.flags.insert(.holdsSnapshot)
                    if existing.isFault && !returnsFaults {
                        fulfill(existing, values: values, version: version)
                        if rowEntity.hasCustomClass { awakened.append(existing) }
                    } else if refreshes && !existing.isFault && existing.version != version {
                        refetched.append(existing)
                    }
                    return
                }
                let object = rowEntity.managedClass.init(entity: rowEntity, insertInto: nil)
                object.managedObjectContext = self
                object.key = key
                let values = snapshot()
                if returnsFaults {
                    object.flags = [.fault, .holdsSnapshot, objectFlags]
                } else {
                    object.values = values
                    object.version = version
                    object.flags = [.holdsSnapshot, objectFlags]
                    materializedCount &+= 1
                    if rowEntity.hasCustomClass { awakened.append(object) }
                }
                registry[ObjectKey(table: root, key: key)] = object
                results.append(object)
            }
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
        // Outside the coordinator's lock: a hook may fire faults of its own.
        for object in refetched { refreshObject(object, mergeChanges: true) }
        for object in awakened { object.awakeFromFetch() }
        return results
    }

    /// Inserted and changed objects of the fetched entities, whose in-memory state may answer the request
    /// differently from their stored rows.
    func pendingCandidates(for entities: [EntityDescription], request: FetchSpec) -> [ManagedObject] {
        guard insertedCount > 0 || !updatedSet.isEmpty else { return [] }
        let numbers = Set(entities.map(\.entityNumber))
        var ids: Set<Int64>? = nil
        if let requested = request.objectIDs { ids = Set(requested.map(\.key)) }
        var candidates = pendingInsertions.filter { numbers.contains($0.entity.entityNumber) && (ids?.contains($0.key) ?? true) }
        if request.predicate != nil {
            candidates += updatedSet.values.filter { numbers.contains($0.entity.entityNumber) && (ids?.contains($0.key) ?? true) }
                .sorted { $0.key < $1.key }
        }
        return candidates
    }

    /// Applies the predicate in memory to pending objects: inserted ones that match join the result, changed ones
    /// join or leave it by their current values.
    private func mergingPendingChanges(_ stored: [ManagedObject], pending: [ManagedObject], request: FetchSpec) throws -> [ManagedObject] {
        var results = stored
        var present = Set(stored.map(ObjectIdentifier.init))
        for object in pending {
            let matches: Bool
            do {
                matches = try request.predicate.map { try $0.matches(object) } ?? true
            } catch let error as ObjectPredicateError {
                throw FetchError.predicate(error)
            }
            let id = ObjectIdentifier(object)
            if matches && !present.contains(id) {
                results.append(object)
                present.insert(id)
            } else if !matches && present.contains(id) {
                results.removeAll { $0 === object }
                present.remove(id)
            }
        }
        return results
    }

    /// Sorts objects in memory as the descriptors say (SQLite's order for binary and case-insensitive keys, nil
    /// first; `localizedStandardCompare` for localized ones).
    static func sorted(_ objects: [ManagedObject], by descriptors: [FetchSortDescriptor]) -> [ManagedObject] {
        guard !descriptors.isEmpty else { return objects }
        let keyed = objects.map { object in (object, sortValues(of: object, descriptors)) }
        return keyed.sorted { a, b in
            let order = compareSortValues(a.1, b.1, descriptors)
            return order == .orderedSame ? a.0.key < b.0.key : order == .orderedAscending
        }.map(\.0)
    }

    /// The values `descriptors` sort `object` by (nil values, and key paths that lead nowhere, as null).
    static func sortValues(of object: ManagedObject, _ descriptors: [FetchSortDescriptor]) -> [PredicateValue] {
        descriptors.map { descriptor in
            (try? PredicateEvaluator(variables: [:]).value(.key(descriptor.keyPath), object).predicateValue) ?? .null
        }
    }

    /// The order of two objects' sort values under `descriptors` (ascending: the first comes first).
    static func compareSortValues(_ a: [PredicateValue], _ b: [PredicateValue], _ descriptors: [FetchSortDescriptor]) -> ComparisonResult {
        for (i, descriptor) in descriptors.enumerated() {
            let order = compare(a[i], b[i], descriptor.comparison)
            if order == .orderedSame { continue }
            return (order == .orderedAscending) == descriptor.ascending ? .orderedAscending : .orderedDescending
        }
        return .orderedSame
    }

    private static func compare(_ a: PredicateValue, _ b: PredicateValue, _ comparison: FetchSortDescriptor.Comparison) -> ComparisonResult {
        switch (a.isNull, b.isNull) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: break
        }
        if comparison == .localized, case .string(let x) = a, case .string(let y) = b { return x.localizedStandardCompare(y) }
        return PredicateEvaluator.order(a, b, folding: comparison == .caseInsensitive ? 1 : 0) ?? .orderedSame
    }

    /// The object IDs of the objects `request` describes (Core Data's managed-object-ID result type): the store
    /// query reads IDs only, and no object is registered.
    public func fetchObjectIDs<T>(_ request: FetchRequest<T>, file: StaticString = #fileID, line: UInt = #line) throws -> [ManagedObjectID] {
        guard probesEnabled else { return try fetchObjectIDsUntraced(request) }
        return try tracedFetch(request.spec, resultType: .ids, callSite: callSite(file, line),
                               results: { $0.count }, uris: { $0.map(\.uriString) }) { try fetchObjectIDsUntraced(request) }
    }

    private func fetchObjectIDsUntraced<T>(_ request: FetchRequest<T>) throws -> [ManagedObjectID] {
        let plain = request.spec
        let (entity, entities) = try fetchedEntities(plain)
        // Pending changes and in-memory sorts need objects; otherwise IDs come straight from the store.
        if (request.includesPendingChanges && !pendingCandidates(for: entities, request: plain).isEmpty)
            || request.sortDescriptors.contains(where: { $0.comparison == .localized }) || request.objectIDs != nil
            || (request.includesPendingChanges && parentChainHasChanges) {
            return try fetchUntraced(plain).map(\.objectID)
        }
        let filter = try compiledFilter(request.predicate, request.sortDescriptors, entity: entity)
        let store = coordinator.storeIdentifier
        do {
            return try reader.fetchKeys(entity: entity, includesSubentities: request.includesSubentities, filter: filter,
                                             limit: request.fetchLimit, offset: request.fetchOffset)
                .compactMap { entity, key in
                    let id = ManagedObjectID(entity: entity, key: key, storeIdentifier: store)
                    return request.includesPendingChanges && registeredObject(for: id)?.isDeleted == true ? nil : id
                }
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
    }

    /// The number of objects `request` would return. Without pending changes it is one `SELECT COUNT(*)` that
    /// reads no rows.
    public func count<T>(for request: FetchRequest<T>, file: StaticString = #fileID, line: UInt = #line) throws -> Int {
        guard probesEnabled else { return try countUntraced(request) }
        return try tracedFetch(request.spec, resultType: .count, callSite: callSite(file, line),
                               results: { $0 }, uris: { _ in nil }) { try countUntraced(request) }
    }

    private func countUntraced<T>(_ request: FetchRequest<T>) throws -> Int {
        let plain = request.spec
        let (entity, entities) = try fetchedEntities(plain)
        let hasPending = request.includesPendingChanges && (!pendingCandidates(for: entities, request: plain).isEmpty
            || deletedSet.values.contains { object in entities.contains { $0 === object.entity } })
        guard !hasPending, request.objectIDs == nil, !(request.includesPendingChanges && parentChainHasChanges) else { return try fetchUntraced(plain).count }
        let filter = try compiledFilter(request.predicate, [], entity: entity)
        do {
            var count = try reader.countRows(entity: entity, includesSubentities: request.includesSubentities, filter: filter)
            if request.fetchOffset > 0 { count = max(0, count - request.fetchOffset) }
            if request.fetchLimit > 0 { count = min(count, request.fetchLimit) }
            return count
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
    }
}
