/// A fetched results controller's probe events: each fetch (its sections and the cache's answer) and each round of
/// changes (its counts and time).
extension FetchedResultsController {
    private func event(_ kind: String, since start: UInt64) -> ResultsControllerEvent {
        ResultsControllerEvent(kind: kind, entity: fetchRequest.entityName, sectionNameKeyPath: sectionNameKeyPath, cacheName: cacheName,
                               objects: rows?.count ?? 0, sections: sectionList.count, batchSize: fetchRequest.fetchBatchSize,
                               cache: "none", duration: ProbeClock.seconds(start, ProbeClock.now()),
                               context: managedObjectContext.serialNumber)
    }

    func recordFetch(objects: Int, outcome: CacheOutcome, sectionsFrom: String, since start: UInt64) {
        guard managedObjectContext.probesEnabled else { return }
        var event = event("fetch", since: start)
        event.cache = outcome.name
        event.cacheReason = outcome.reason
        event.sectionsFrom = sectionsFrom
        managedObjectContext.coordinator.probes.record(.resultsController(event))
    }

    func recordChanges<Key: Hashable>(_ diff: FetchedResultsDiff<Key>, since start: UInt64) {
        guard managedObjectContext.probesEnabled, !diff.isEmpty else { return }
        var event = event("changes", since: start)
        for change in diff.objectChanges {
            switch change.type {
            case .insert: event.inserted += 1
            case .delete: event.deleted += 1
            case .move: event.moved += 1
            case .update: event.updated += 1
            }
        }
        for change in diff.sectionChanges {
            if change.type == .insert { event.sectionsInserted += 1 } else { event.sectionsDeleted += 1 }
        }
        managedObjectContext.coordinator.probes.record(.resultsController(event))
    }
}
