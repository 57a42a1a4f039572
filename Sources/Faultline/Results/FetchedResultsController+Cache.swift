import Foundation

/// How a fetch used the section cache.
enum CacheOutcome {
    /// No cache name (or no sections).
    case none
    /// The cache matched: no section was computed.
    case hit
    /// The cache was missing or did not match (the reason), and was rebuilt.
    case miss(String)
    /// The context's unsaved changes shape the sections: the cache (which describes the store) is neither read nor
    /// written.
    case bypassed

    var rebuilds: Bool { if case .miss = self { return true }; return false }

    var reason: String? { if case .miss(let reason) = self { return reason }; return nil }

    var name: String {
        switch self {
        case .none: return "none"
        case .hit: return "hit"
        case .miss: return "miss"
        case .bypassed: return "bypassed"
        }
    }
}

extension FetchedResultsController {
    /// What the cache records of the request: a changed entity, predicate, sort, section key path, limit or offset
    /// makes a different description.
    var requestDescription: String {
        let sort = fetchRequest.sortDescriptors.map { "\($0.keyPath):\($0.ascending ? "asc" : "desc"):\($0.comparison)" }.joined(separator: ",")
        return ["entity=\(fetchRequest.entityName)", "subentities=\(fetchRequest.includesSubentities)",
                "predicate=\(fetchRequest.predicate?.predicateFormat ?? "")", "sort=\(sort)", "section=\(sectionNameKeyPath ?? "")",
                "limit=\(fetchRequest.fetchLimit)", "offset=\(fetchRequest.fetchOffset)"].joined(separator: ";")
    }

    /// True when the context has unsaved changes of the request's entities (the sections then differ from the store's).
    var hasPendingChanges: Bool {
        guard fetchRequest.includesPendingChanges else { return false }
        let context = managedObjectContext
        guard let (_, entities) = try? context.fetchedEntities(fetchRequest.spec) else { return true }
        let numbers = Set(entities.map(\.entityNumber))
        return !context.pendingCandidates(for: entities, request: fetchRequest.spec).isEmpty
            || context.deletedObjects.contains { numbers.contains($0.entity.entityNumber) }
            || context.parentChainHasChanges
    }

    /// The rows' fingerprint now (one statement).
    func fingerprint() throws -> [Double] {
        let context = managedObjectContext
        let (entity, _) = try context.fetchedEntities(fetchRequest.spec)
        let filter = try context.compiledFilter(fetchRequest.predicate, [], entity: entity)
        return try context.reader.fingerprintRows(entity: entity, includesSubentities: fetchRequest.includesSubentities, filter: filter)
    }

    /// The sections (runs of one name) from the cache, when the cache matches the request, the store and the rows
    /// (`count` of them); else nil and why.
    func cachedSections(count: Int) -> ([(name: String, count: Int)]?, CacheOutcome) {
        guard let cacheName else { return (nil, .none) }
        if hasPendingChanges { return (nil, .bypassed) }
        guard let cache = SectionCache.load(named: cacheName) else { return (nil, .miss("no cache")) }
        guard cache.request == requestDescription else { return (nil, .miss("the request changed")) }
        guard cache.store == managedObjectContext.coordinator.storeIdentifier ?? "" else { return (nil, .miss("another store")) }
        guard cache.sections.allSatisfy({ $0.count >= 0 }), cache.sections.reduce(0, { $0 + $1.count }) == count,
              (try? fingerprint()) == cache.fingerprint else {
            return (nil, .miss("the rows changed"))
        }
        return (cache.sections.map { ($0.name, $0.count) }, .hit)
    }

    /// Writes the current sections to the cache; the error, when it could not be written.
    func writeCache() -> Error? {
        guard let cacheName else { return nil }
        do {
            let cache = SectionCache(request: requestDescription, store: managedObjectContext.coordinator.storeIdentifier ?? "",
                                     fingerprint: try fingerprint(),
                                     sections: sectionList.map { .init(name: $0.name, indexTitle: $0.indexTitle, count: $0.numberOfObjects) })
            return cache.write(named: cacheName)
        } catch {
            return error
        }
    }
}
