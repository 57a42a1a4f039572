import Foundation

/// Dictionary fetches: the values of chosen properties and aggregates, computed by SQLite, no objects made.
extension ManagedObjectContext {
    /// Rows of the properties `request.propertiesToFetch` names (all stored attributes when nil), as dictionaries;
    /// with `propertiesToGroupBy`, one row per group, filtered by `havingPredicate` (which may name aggregates).
    /// To-one relationships come back as object IDs. Pending changes are not included (as in Core Data).
    public func fetchDictionaries<T>(_ request: FetchRequest<T>, file: StaticString = #fileID, line: UInt = #line) throws -> [[String: Any]] {
        guard probesEnabled else { return try fetchDictionariesUntraced(request) }
        return try tracedFetch(request.spec, resultType: .dictionary, callSite: callSite(file, line),
                               results: { $0.count }, uris: { _ in nil }) { try fetchDictionariesUntraced(request) }
    }

    private func fetchDictionariesUntraced<T>(_ request: FetchRequest<T>) throws -> [[String: Any]] {
        let entity = try fetchedEntity(named: request.entityName)
        let requested = request.propertiesToFetch ?? entity.attributes.filter { !$0.isTransient && !$0.isCompositeElement }.map { PropertyToFetch($0.name) }
        // A composite is fetched as its elements' columns and comes back as one dictionary under its name.
        var composites: [(name: String, attribute: AttributeDescription)] = []
        var properties: [PropertyToFetch] = []
        for property in requested {
            if property.function == nil, let composite = entity.attribute(named: property.keyPath), composite.type == .composite {
                composites.append((property.name, composite))
                func leaves(_ attribute: AttributeDescription) -> [AttributeDescription] {
                    attribute.entityElements.flatMap { $0.type == .composite ? leaves($0) : [$0] }
                }
                properties += leaves(composite).map { PropertyToFetch($0.name) }
            } else {
                properties.append(property)
            }
        }
        guard !properties.isEmpty else { return [] }
        var compiler = PredicateCompiler(model: model, storeIdentifier: coordinator.storeIdentifier)
        let scope = PredicateCompiler.Scope(alias: "t0", entity: entity)
        do {
            var columns: [(name: String, sql: String, kind: PredicateCompiler.Kind)] = []
            for property in properties {
                let (sql, kind) = try compiler.selectTerm(property, in: scope)
                columns.append((property.name, sql, kind))
            }
            // Named columns are visible to the predicates and the order, as Core Data's expression names.
            for column in columns { compiler.aliases[column.name] = (column.sql, column.kind) }
            let condition = try request.predicate.map { try compiler.condition($0, in: scope) }
            let conditionBindings = compiler.takeBindings()
            var groupBy: [String] = []
            for key in request.propertiesToGroupBy {
                guard case .scalar(let sql, _) = try compiler.operand(.key(key), in: scope) else {
                    throw ObjectPredicateError(.unsupported, "cannot group by '\(key)': it is not a single value of \(entity.name)")
                }
                groupBy.append(sql)
            }
            let having = try request.havingPredicate.map { try compiler.condition($0, in: scope) }
            let havingBindings = compiler.takeBindings()
            var orderBy: [String] = []
            for descriptor in request.sortDescriptors where descriptor.comparison != .localized {
                orderBy.append(try compiler.orderTerm(descriptor, in: scope))
            }
            var sql = "SELECT " + (request.returnsDistinctResults ? "DISTINCT " : "") + columns.map(\.sql).joined(separator: ", ")
            sql += " FROM \(entity.table.name) t0" + scope.joinSQL
            var conditions: [String] = []
            var bindings: [Slot] = []
            if let plan = entityRestriction(entity, includesSubentities: request.includesSubentities) {
                conditions.append(plan.sql)
                bindings += plan.bounds.map(Slot.integer)
            }
            if let condition { conditions.append(condition); bindings += conditionBindings }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            if !groupBy.isEmpty { sql += " GROUP BY " + groupBy.joined(separator: ", ") }
            if let having { sql += " HAVING " + having; bindings += havingBindings }
            if !orderBy.isEmpty { sql += " ORDER BY " + orderBy.joined(separator: ", ") }
            if request.fetchLimit > 0 || request.fetchOffset > 0 {
                sql += " LIMIT ? OFFSET ?"
                bindings += [.integer(request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1), .integer(Int64(request.fetchOffset))]
            }
            let slots = try reader.queryRows(sql, bindings: bindings, columns: columns.count)
            let rowCount = columns.isEmpty ? 0 : slots.count / columns.count
            var results: [[String: Any]] = []
            results.reserveCapacity(rowCount)
            for number in 0..<rowCount {
                let first = number * columns.count
                var dictionary = [String: Any](minimumCapacity: columns.count)
                for (i, column) in columns.enumerated() {
                    let slot = slots[first + i]
                    if case .object = column.kind, !slot.isNull {
                        // An object's key, as a fetch of objects would check it.
                        guard case .integer(let key) = slot, Limits.primaryKeys.contains(key) else {
                            throw StoreError.invalidStoredValue(table: entity.table.name, column: column.sql, row: "row \(number + 1) of the result",
                                                                value: StoredKeyRule.describe(slot), expected: StoredKeyRule.key.description)
                        }
                    }
                    if let value = decode(slot, kind: column.kind) { dictionary[column.name] = value }
                }
                for (name, composite) in composites {
                    func assemble(_ attribute: AttributeDescription) -> [String: Any]? {
                        var value: [String: Any] = [:]
                        for element in attribute.entityElements {
                            let part = element.type == .composite ? assemble(element) : dictionary.removeValue(forKey: element.name)
                            if let part { value[element.elementName ?? element.name] = part }
                        }
                        return value.isEmpty ? nil : value
                    }
                    dictionary[name] = assemble(composite)
                }
                results.append(dictionary)
            }
            return results
        } catch let error as ObjectPredicateError {
            throw FetchError.predicate(error)
        } catch let error as StoreError {
            throw FetchError.store(error)
        }
    }

    private func entityRestriction(_ entity: EntityDescription, includesSubentities: Bool) -> (sql: String, bounds: [Int64])? {
        guard !entity.root.subentities.isEmpty else { return nil }
        let low = Int64(entity.entityNumber), high = Int64(includesSubentities ? entity.lastDescendantNumber : entity.entityNumber)
        if entity === entity.root && includesSubentities { return nil }
        return low == high ? ("t0.Z_ENT = ?", [low]) : ("t0.Z_ENT >= ? AND t0.Z_ENT <= ?", [low, high])
    }

    private func decode(_ slot: Slot, kind: PredicateCompiler.Kind) -> Any? {
        if case .null = slot { return nil }
        switch kind {
        case .attribute(let attribute):
            var slot = slot
            if attribute.storesExternally { slot = ExternalBinaryStorage(storePath: coordinator.storePath).read(slot) }
            return ValueCoding.value(of: slot, type: attribute.type, transformer: attribute.valueTransformerName)
        case .object(let entity):
            guard case .integer(let packed) = slot else { return nil }
            return ManagedObjectID(entity: entity, key: packed, storeIdentifier: coordinator.storeIdentifier)
        default:
            switch slot {
            case .integer(let n): return n
            case .real(let d): return d
            case .text(let s): return s
            case .blob(let d): return d
            default: return nil
            }
        }
    }
}
