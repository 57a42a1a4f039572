/// Core Data's batched fetch: the rows' keys up front, each batch's objects when it is read.
extension ManagedObjectContext {
    /// Fetches the objects `request` describes as `FetchedResults`: with `fetchBatchSize` set, Core Data's batch
    /// array — one statement for the keys now, one per batch when the batch is read. Chosen by the result's type:
    /// `let items: FetchedResults<Item> = try context.fetch(request)` (the `[T]` form is preferred otherwise).
    @_disfavoredOverload
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>, file: StaticString = #fileID, line: UInt = #line) throws -> FetchedResults<T> {
        let spec = request.spec
        guard spec.fetchBatchSize > 0, try fetchesLazily(spec) else {
            return FetchedResults(objects: try fetch(request, file: file, line: line))
        }
        if checksQueue { checkQueue(touching: nil) }
        let (entity, entities) = try fetchedEntities(spec)
        guard T.self == ManagedObject.self || entities.allSatisfy({ $0.managedClass is T.Type }) else {
            // The `[T]` form says which entity's class does not fit.
            return FetchedResults(objects: try fetch(request, file: file, line: line))
        }
        let rows: BatchedRows
        if probesEnabled {
            rows = try tracedFetch(spec, resultType: .ids, callSite: callSite(file, line), results: { $0.count }, uris: { _ in nil }) {
                try batchedRows(spec, entity: entity)
            }
        } else {
            rows = try batchedRows(spec, entity: entity)
        }
        return FetchedResults(rows: rows)
    }

    /// True when a batched fetch can hold keys: no pending change of the fetched entities, no unsaved state in a
    /// parent, no in-memory sort and no explicit object IDs (those need the objects, as the `[T]` form fetches them).
    private func fetchesLazily(_ request: FetchSpec) throws -> Bool {
        guard request.includesPropertyValues, request.objectIDs == nil,
              !request.sortDescriptors.contains(where: { $0.comparison == .localized }) else { return false }
        guard request.includesPendingChanges else { return true }
        let (_, entities) = try fetchedEntities(request)
        return pendingCandidates(for: entities, request: request).isEmpty && !parentChainHasChanges
    }

    /// The keys of the rows `request` selects, in its order (objects deleted in this context left out).
    private func batchedRows(_ request: FetchSpec, entity: EntityDescription) throws -> BatchedRows {
        let filter = try compiledFilter(request.predicate, request.sortDescriptors, entity: entity)
        let found: [(EntityDescription, Int64)]
        do {
            found = try reader.fetchKeys(entity: entity, includesSubentities: request.includesSubentities, filter: filter,
                                         limit: request.fetchLimit, offset: request.fetchOffset)
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
        let skipDeleted = request.includesPendingChanges && !deletedSet.isEmpty
        var keys: [Int64] = []
        keys.reserveCapacity(found.count)
        var entities: [EntityDescription]? = nil
        for (rowEntity, key) in found {
            if skipDeleted, let object = registry[ObjectKey(table: rowEntity.rootNumber, key: key)], object.isDeleted { continue }
            if entities == nil && rowEntity !== entity {
                // A row of a sub-entity: from here on each row says its entity.
                entities = Array(repeating: entity, count: keys.count)
                entities!.reserveCapacity(found.count)
            }
            keys.append(key)
            entities?.append(rowEntity)
        }
        return BatchedRows(context: self, request: request, keys: keys, entities: entities, entity: entity)
    }

    /// The objects of batch `batch` of `rows`, in order, with their values: one fetch of the rows not materialized
    /// in this context yet. If that fetch fails, the objects are faults (each fires on its own when used, and a row
    /// that is gone sets `lastFaultError`, as any fault).
    func materializeBatch(_ rows: BatchedRows, _ batch: Int) -> [ManagedObject] {
        if checksQueue { checkQueue(touching: nil) }
        let start = batch * rows.batchSize
        let end = min(start + rows.batchSize, rows.count)
        var objects: [ManagedObject] = []
        objects.reserveCapacity(end - start)
        for position in start..<end {
            objects.append(faultingObject(entity: rows.entities?[position] ?? rows.entity, key: rows.keys[position]))
        }
        try? fulfillFaults(for: objects)
        if !rows.request.relationshipKeyPathsForPrefetching.isEmpty {
            for path in rows.request.relationshipKeyPathsForPrefetching { try? prefetch(path, from: objects) }
        }
        return objects
    }
}
