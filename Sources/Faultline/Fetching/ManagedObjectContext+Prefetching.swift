/// Relationship prefetching: the destinations of a key path for a whole fetch result, one statement per
/// relationship and level (a many-to-many takes two: its join rows, then its destinations).
extension ManagedObjectContext {
    func prefetch(_ path: String, from results: [ManagedObject]) throws {
        var sources = results
        let names = path.split(separator: ".").map(String.init)
        guard names.count <= Limits.keyPathComponents else {
            throw FetchError.predicate(ObjectPredicateError(.limit, "prefetching '\(names.prefix(3).joined(separator: "."))…': the key path has \(names.count) components; the limit is \(Limits.keyPathComponents) (Limits.keyPathComponents)"))
        }
        for name in names {
            var next: [ManagedObject] = []
            var seen: Set<ObjectIdentifier> = []
            func add(_ object: ManagedObject) { if seen.insert(ObjectIdentifier(object)).inserted { next.append(object) } }
            // Sources may be of several sub-entities; each relationship is prefetched for the sources that have it.
            var byRelationship: [ObjectIdentifier: (RelationshipDescription, [ManagedObject])] = [:]
            var order: [ObjectIdentifier] = []
            for source in sources {
                guard let relationship = source.entity.relationship(named: name) else {
                    throw FetchError.predicate(ObjectPredicateError(.unknownKey, "prefetching '\(path)': entity '\(source.entity.name)' has no relationship '\(name)'"))
                }
                let id = ObjectIdentifier(relationship)
                if byRelationship[id] == nil { order.append(id) }
                byRelationship[id, default: (relationship, [])].1.append(source)
            }
            for id in order {
                let (relationship, group) = byRelationship[id]!
                if relationship.isToMany {
                    for member in try prefetchToMany(relationship, for: group) { add(member) }
                } else {
                    let destinations = group.compactMap { $0.destination(of: relationship) }
                    try fulfillFaults(for: destinations)
                    destinations.forEach(add)
                }
            }
            sources = next
            if sources.isEmpty { return }
        }
        if probesEnabled, let entity = results.first?.entity.name { watchPrefetched(sources, keyPath: path, entity: entity) }
    }

    /// Loads the members of a to-many relationship for every source whose relationship is not loaded yet.
    private func prefetchToMany(_ relationship: RelationshipDescription, for sources: [ManagedObject]) throws -> [ManagedObject] {
        var pending: [Int64: ManagedObject] = [:]
        var loaded: [ManagedObject] = []
        for source in sources {
            source.willAccessValues()
            guard relationship.index < source.values.count else { continue }
            if case .many(let storage) = source.values[relationship.index] {
                loaded += storage.objects
            } else if source.key > 0 {
                pending[source.key] = source
            }
        }
        guard !pending.isEmpty else { return loaded }
        var members: [Int64: [ManagedObject]] = [:]
        let keys = pending.keys.sorted()
        for slice in KeyList.chunks(keys) {
            let chunk = Array(slice)
            if relationship.joinTable != nil {
                let rows: [(Int64, EntityDescription, Int64)]
                do { rows = try reader.relationshipKeys(relationship, ofSources: chunk) } catch let error as StoreError { throw FetchError.store(error) }
                var destinations: [ManagedObject] = []
                for (source, entity, key) in rows {
                    let member = faultingObject(entity: entity, key: key)
                    destinations.append(member)
                    members[source, default: []].append(member)
                }
                try fulfillFaults(for: destinations)
            } else {
                let inverse = relationship.inverse!
                let column = inverse.columnName!
                // Ordered by the foreign key first, as Core Data's prefetch is: the key's index then gives the order
                // (each source's members by key), where ORDER BY Z_PK alone would sort them in a temporary B-tree.
                let orderBy = ["t0.\(column)"] + (inverse.orderColumnName.map { ["t0.\($0)"] } ?? []) + ["t0.Z_PK"]
                let filter = FetchFilter(joins: "", condition: KeyList.condition("t0.\(column)", count: chunk.count),
                                         orderBy: orderBy, bindings: KeyList.bindings(chunk))
                var request = FetchSpec(entityName: relationship.destination.name)
                request.returnsObjectsAsFaults = false
                request.includesPendingChanges = false
                for member in try storedObjects(entity: relationship.destination, keys: nil, filter: filter, request: request, limit: 0, offset: 0) {
                    switch member.values[inverse.index] {
                    case .integer(let packed): members[ToOneReference.unpack(packed, relationship: inverse).key, default: []].append(member)
                    case .object(let owner): members[owner.key, default: []].append(member)
                    default: break
                    }
                }
            }
        }
        var result = loaded
        for (key, source) in pending {
            let group = (members[key] ?? []).filter { !$0.isDeleted }
            source.values[relationship.index] = .many(ToManyStorage(objects: group))
            result += group
        }
        return result
    }
}
