import Foundation

/// Executing batch requests through a context (which they bypass: see each request's documentation).
extension ManagedObjectContext {
    /// Runs a batch update in SQL.
    public func execute(_ request: BatchUpdateRequest, file: StaticString = #fileID, line: UInt = #line) throws -> BatchUpdateResult {
        if checksQueue { checkQueue(touching: nil) }
        let entity = try batchEntity(request.entityName)
        var assignments: [(column: String, value: Slot)] = []
        for (key, value) in request.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
            guard let attribute = entity.attribute(named: key), !attribute.isTransient, let column = attribute.columnName else {
                throw BatchRequestError.unknownAttribute(entity: entity.name, key: key)
            }
            let slot = try batchSlot(value, attribute: attribute, entity: entity)
            if case .null = slot, !attribute.isOptional {
                throw BatchRequestError.invalidValue(entity: entity.name, key: key, problem: "required (not optional): nil is not allowed")
            }
            assignments.append((column, slot))
        }
        let filter = try batchFilter(request.predicate, entity: entity)
        var count = 0
        let rows = try tracedBatch("update", entity: entity, callSite: callSite(file, line), rowCount: { count }) {
            let outcome = try storeErrors {
                try coordinator.batchUpdate(entity: entity, includesSubentities: request.includesSubentities, filter: filter,
                                            assignments: assignments, keys: request.resultType == .objectIDs,
                                            updating: request.propertiesToUpdate.keys.sorted(), history: historyAttribution)
            }
            count = outcome.count
            return outcome.rows
        }
        coordinator.noteStoreChanged()
        return result(rows, request.resultType, count: count)
    }

    /// Runs a batch delete in SQL (delete rules applied in SQL).
    public func execute(_ request: BatchDeleteRequest, file: StaticString = #fileID, line: UInt = #line) throws -> BatchDeleteResult {
        if checksQueue { checkQueue(touching: nil) }
        var predicate = request.predicate
        if let ids = request.objectIDs {
            guard let first = ids.first else { return result([], request.resultType) }
            if let other = ids.first(where: { $0.entity.root.name != first.entity.root.name }) {
                throw BatchRequestError.mixedEntities(first.entity.root.name, other.entity.root.name)
            }
            predicate = .comparison(Comparison(.evaluatedObject, .in, .aggregate(ids.map { .constant(.objectID($0)) })))
        }
        let entity = try batchEntity(request.entityName)
        let filter = try batchFilter(predicate, entity: entity)
        let rows = try tracedBatch("delete", entity: entity, callSite: callSite(file, line)) {
            try storeErrors { try coordinator.batchDelete(entity: entity, includesSubentities: request.includesSubentities, filter: filter, history: historyAttribution) }
        }
        coordinator.noteStoreChanged()
        return result(rows, request.resultType)
    }

    /// Inserts rows in SQL, all or nothing.
    public func execute(_ request: BatchInsertRequest, file: StaticString = #fileID, line: UInt = #line) throws -> BatchInsertResult {
        if checksQueue { checkQueue(touching: nil) }
        let entity = try batchEntity(request.entityName)
        let attributes = entity.attributes.filter { !$0.isTransient && $0.columnName != nil }
        let known = Set(attributes.map(\.name))
        var rows: [[Slot]] = []
        rows.reserveCapacity(request.objects.count)
        // Each row is converted as it comes: a handler's dictionaries are not kept.
        func append(_ object: [String: Any]) throws {
            if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                throw BatchRequestError.unknownAttribute(entity: entity.name, key: unknown)
            }
            let index = rows.count
            rows.append(try attributes.map { attribute in
                let slot = try batchSlot(object[attribute.name] ?? attribute.defaultValue, attribute: attribute, entity: entity)
                if case .null = slot, !attribute.isOptional { throw BatchRequestError.missingValue(entity: entity.name, key: attribute.name, row: index) }
                return slot
            })
        }
        for object in request.objects { try append(object) }
        if let handler = request.dictionaryHandler {
            while true {
                let row = NSMutableDictionary()
                if handler(row) { break }
                guard rows.count < request.handlerRowLimit else {
                    throw BatchRequestError.tooManyRows(entity: entity.name, limit: request.handlerRowLimit)
                }
                var values: [String: Any] = [:]
                for (key, value) in row { values["\(key)"] = value }
                try append(values)
            }
        }
        if let handler = request.managedObjectHandler {
            while true {
                let object = entity.managedClass.init(entity: entity, insertInto: nil)
                if handler(object) { break }
                guard rows.count < request.handlerRowLimit else {
                    throw BatchRequestError.tooManyRows(entity: entity.name, limit: request.handlerRowLimit)
                }
                var values: [String: Any] = [:]
                for attribute in attributes { values[attribute.name] = try object.value(forKey: attribute.name) }
                try append(values)
            }
        }
        let columns = attributes.map { $0.columnName! }
        let constraints = entity.uniquenessConstraints.compactMap { names -> [String]? in
            let columns = names.compactMap { entity.property(named: $0)?.columnName }
            return columns.count == names.count ? columns : nil
        }
        let keys = try tracedBatch("insert", entity: entity, callSite: callSite(file, line)) {
            try storeErrors { try coordinator.batchInsert(entity: entity, columns: columns, rows: rows, uniquenessColumns: constraints, history: historyAttribution).map { (entity, $0) } }
        }
        coordinator.noteStoreChanged()
        return result(keys, request.resultType)
    }

    /// The author and context name a batch request's history transaction records.
    private var historyAttribution: HistoryAttribution { HistoryAttribution(author: transactionAuthor, contextName: name) }

    private func batchEntity(_ name: String) throws -> EntityDescription {
        guard let entity = model.entity(named: name) else { throw BatchRequestError.unknownEntity(name) }
        return entity
    }

    private func batchSlot(_ value: Any?, attribute: AttributeDescription, entity: EntityDescription) throws -> Slot {
        do { return try ValueCoding.slot(for: value, attribute: attribute) } catch let error as ValueError {
            throw BatchRequestError.invalidValue(entity: entity.name, key: attribute.name, problem: error.problem)
        }
    }

    private func batchFilter(_ predicate: ObjectPredicate?, entity: EntityDescription) throws -> FetchFilter? {
        guard let predicate else { return nil }
        do {
            return try FetchFilter.compile(predicate: predicate, sortDescriptors: [], entity: entity, storeIdentifier: coordinator.storeIdentifier)
        } catch let error as ObjectPredicateError {
            throw BatchRequestError.predicate(error)
        }
    }

    private func storeErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as StoreError { throw BatchRequestError.store(error) }
    }

    private func result<R: BatchResult>(_ rows: [(EntityDescription, Int64)], _ type: BatchResultType, count: Int? = nil) -> R {
        let identifier = coordinator.storeIdentifier
        return R(count: count ?? rows.count,
                 objectIDs: type == .objectIDs ? rows.map { ManagedObjectID(entity: $0.0, key: $0.1, storeIdentifier: identifier) } : [],
                 resultType: type)
    }
}
