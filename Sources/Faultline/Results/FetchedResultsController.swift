import Foundation

/// Core Data's `NSFetchedResultsController`: the results of a fetch request kept current as its context changes,
/// split into sections, with each round of changes reported to a delegate (a list's data source) and to
/// `onChange` (server code).
///
/// `performFetch()` fetches and starts tracking the context's objects-did-change notifications — its own changes at
/// the end of each event, another context's saves once merged — evaluating each inserted, changed, refreshed or
/// deleted object of the request's entity against the predicate and the sort, in memory, as Core Data does. Batch
/// requests are not seen until they are merged. Use it on its context's queue. docs/contexts.md, "Fetched results
/// controllers".
public final class FetchedResultsController<ResultType: ManagedObject>: AnyFetchedResultsController {
    /// The request: its sort descriptors order the objects (one at least); its predicate selects them.
    public let fetchRequest: FetchRequest<ResultType>
    /// The context the controller fetches in and tracks.
    public let managedObjectContext: ManagedObjectContext
    /// The key path whose value names each object's section (nil: one section). The request must sort by it first
    /// (or by a key that orders the sections the same way).
    public let sectionNameKeyPath: String?
    /// Core Data's section cache name (nil: no cache).
    public let cacheName: String?
    /// Told of each round of changes, in Core Data's order.
    public weak var delegate: (any FetchedResultsControllerDelegate)?
    /// Called after the delegate with each round of changes by object ID (on the context's queue).
    public var onChange: ((FetchedResultsChangeSet) -> Void)?
    private var streams: [AsyncStream<FetchedResultsChangeSet>.Continuation] = []

    var rows: ControllerRows?
    var sectionList: [FetchedSection] = []
    private var observation: ContextObservation?
    private var positions: [ControllerRows.Identity: Int]?

    /// Core Data's `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`. Nothing is fetched
    /// until `performFetch()`.
    public init(fetchRequest: FetchRequest<ResultType>, managedObjectContext: ManagedObjectContext,
                sectionNameKeyPath: String?, cacheName: String?) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    /// Every round of changes from now on, by object ID, as an asynchronous sequence (server code): it ends when the
    /// controller goes away. Rounds are kept until read (none is dropped).
    public func changeSets() -> AsyncStream<FetchedResultsChangeSet> {
        let (stream, continuation) = AsyncStream<FetchedResultsChangeSet>.makeStream(bufferingPolicy: .unbounded)
        streams.append(continuation)
        return stream
    }

    deinit {
        for stream in streams { stream.finish() }
        guard let observation else { return }
        let context = managedObjectContext
        context.performAndWait { context.removeObserver(observation) }
    }

    // MARK: Fetching

    /// Fetches the request's objects, computes the sections, and starts tracking changes. Throws when the request
    /// has no sort descriptor, when the objects are not in section order, or when the fetch fails.
    ///
    /// With a batch size the controller holds the rows' keys and fetches a batch's objects when one is read, as
    /// Core Data's does; the sections then come from one `GROUP BY` statement when the section key path is the first
    /// sort key and a string attribute (else every object's section value is read).
    public func performFetch() throws {
        guard !fetchRequest.sortDescriptors.isEmpty else { throw FetchedResultsError.noSortDescriptors(entity: fetchRequest.entityName) }
        let start = ProbeClock.now()
        let results: FetchedResults<ResultType> = try managedObjectContext.fetch(fetchRequest)
        let list: ControllerRows
        switch results.storage {
        case .objects(let objects):
            list = ControllerRows(context: managedObjectContext, entries: objects.map { .object($0) }, batchSize: 0, prefetching: [])
        case .controller(let other):
            list = ControllerRows(context: managedObjectContext, entries: other.entries, batchSize: other.batchSize, prefetching: other.prefetching)
        case .batched(let batched):
            list = ControllerRows(context: managedObjectContext,
                                  entries: batched.keys.indices.map { .row(batched.entities?[$0] ?? batched.entity, batched.keys[$0]) },
                                  batchSize: batched.batchSize, prefetching: fetchRequest.relationshipKeyPathsForPrefetching)
        }
        var outcome = CacheOutcome.none
        var runs: [(name: String, count: Int)]? = nil
        var sectionsFrom = sectionNameKeyPath == nil ? "none" : "cache"
        if cacheName != nil && sectionNameKeyPath != nil {
            (runs, outcome) = cachedSections(count: list.count)
        }
        if runs == nil { (runs, sectionsFrom) = try computeSections(list) }
        var seen: Set<String> = []
        var position = 0
        for run in runs! {
            guard seen.insert(run.name).inserted else {
                throw FetchedResultsError.sectionsOutOfOrder(index: position, sectionName: run.name, keyPath: sectionNameKeyPath ?? "")
            }
            position += run.count
        }
        install(list, runs: runs!)
        if outcome.rebuilds, let error = writeCache() { outcome = .miss("\(outcome.reason ?? "rebuilt"); not written: \(error.localizedDescription)") }
        recordFetch(objects: list.count, outcome: outcome, sectionsFrom: sectionsFrom, since: start)
        if observation == nil {
            observation = managedObjectContext.addObjectsDidChangeObserver { [weak self] note in self?.contextDidChange(note) }
        }
    }

    /// The sections of `list` as runs of one name: from a `GROUP BY` when the list is batched and the store can
    /// answer, else from every object's section value.
    private func computeSections(_ list: ControllerRows) throws -> ([(name: String, count: Int)], from: String) {
        guard let keyPath = sectionNameKeyPath else { return ([("", list.count)], "none") }
        if list.batchSize > 0, let grouped = try groupedSections(keyPath) { return (grouped, "store") }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(list.count)
        for i in 0..<list.count { if case .object(let object) = list.entries[i] { objects.append(object) } }
        if list.batchSize == 0 {
            // Every object's section name is read: one statement per 500 faults rather than one each.
            try managedObjectContext.fulfillFaults(for: objects)
        }
        var runs = SectionRuns()
        for i in 0..<list.count { runs.append(sectionName(of: list.object(at: i))) }
        return (runs.runs, "objects")
    }

    /// The sections counted by the store (`SELECT key, COUNT(*) … GROUP BY key ORDER BY key`), when the first sort
    /// descriptor is the section key path, compares binary, and the key path ends in a string attribute; else nil.
    private func groupedSections(_ keyPath: String) throws -> [(name: String, count: Int)]? {
        guard let first = fetchRequest.sortDescriptors.first, first.keyPath == keyPath, first.comparison == .binary,
              fetchRequest.fetchLimit == 0, fetchRequest.fetchOffset == 0,
              let entity = managedObjectContext.model.entity(named: fetchRequest.entityName),
              Self.attribute(at: keyPath, from: entity)?.type == .string else { return nil }
        let request = FetchRequest<NSDictionary>(entityName: fetchRequest.entityName, predicate: fetchRequest.predicate,
                                                 sortDescriptors: [FetchSortDescriptor(key: keyPath, ascending: first.ascending)])
        request.propertiesToFetch = [PropertyToFetch(keyPath), PropertyToFetch(.count, "*", as: "count")]
        request.propertiesToGroupBy = [keyPath]
        request.includesSubentities = fetchRequest.includesSubentities
        request.includesPendingChanges = false
        var runs = SectionRuns()
        for row in try managedObjectContext.fetchDictionaries(request) {
            // Nil and "" are one section (""), as when the objects are read: the store groups them apart, side by side.
            runs.append((row[keyPath] as? String) ?? "", count: (row["count"] as? Int64).map(Int.init) ?? (row["count"] as? Int) ?? 0)
        }
        return runs.runs
    }

    private static func attribute(at keyPath: String, from entity: EntityDescription) -> AttributeDescription? {
        var current = entity
        let parts = keyPath.split(separator: ".").map(String.init)
        for (i, part) in parts.enumerated() {
            guard let property = current.property(named: part) else { return nil }
            if i == parts.count - 1 { return property as? AttributeDescription }
            guard let relationship = property as? RelationshipDescription, !relationship.isToMany, let next = relationship.destination else { return nil }
            current = next
        }
        return nil
    }

    /// The fetched objects, in order (nil before `performFetch()`). With a batch size this reads every batch: use
    /// `fetchedResults` to read them as they are needed.
    public var fetchedObjects: [ResultType]? {
        // Every object is of the request's class: `fetch` checked it, and tracking keeps only such objects.
        rows.map { unsafeBitCast($0.allObjects, to: [ResultType].self) }
    }

    /// The fetched objects as a collection that fetches a batch when it is read (Core Data's `fetchedObjects` with a
    /// batch size).
    public var fetchedResults: FetchedResults<ResultType>? { rows.map { FetchedResults(controllerRows: $0) } }

    /// The fetched objects as managed objects (for a delegate, which sees any controller).
    public var fetchedManagedObjects: [ManagedObject]? { rows?.allObjects }

    /// The sections (nil before `performFetch()`): one named `""` without a section key path.
    public var sections: [any FetchedResultsSectionInfo]? { rows == nil ? nil : sectionList }

    /// The object at `indexPath` (section, row). Traps outside the sections, as Core Data raises.
    public func object(at indexPath: IndexPath) -> ResultType {
        unsafeDowncast(managedObject(at: indexPath), to: ResultType.self)
    }

    /// The object at `indexPath`, as a managed object (for a delegate, which sees any controller).
    public func managedObject(at indexPath: IndexPath) -> ManagedObject {
        guard let rows, indexPath.count == 2, indexPath[0] >= 0, indexPath[0] < sectionList.count,
              indexPath[1] >= 0, indexPath[1] < sectionList[indexPath[0]].numberOfObjects else {
            preconditionFailure("index path \(indexPath) is outside the fetched results controller's sections")
        }
        return rows.object(at: sectionList[indexPath[0]].start + indexPath[1])
    }

    /// The index path of `object`, or nil when it is not among the fetched objects.
    public func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let rows else { return nil }
        if positions == nil {
            var map: [ControllerRows.Identity: Int] = [:]
            map.reserveCapacity(rows.count)
            for i in 0..<rows.count { map[rows.identity(at: i)] = i }
            positions = map
        }
        guard let position = positions?[ControllerRows.Identity(object)] else { return nil }
        return layout([Int]()).indexPath(of: position)
    }

    /// The sections' index titles, in section order, each once.
    public var sectionIndexTitles: [String] {
        var seen: Set<String> = []
        return sectionList.compactMap { section in section.indexTitle.flatMap { seen.insert($0).inserted ? $0 : nil } }
    }

    /// Core Data's default index title of a section: its name's first letter, capitalized.
    public func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        sectionName.first.map { String($0).uppercased() }
    }

    /// The index of the first section whose index title is `title` (Core Data's `section(forSectionIndexTitle:at:)`);
    /// `sectionIndex` when none has it.
    public func section(forSectionIndexTitle title: String, at sectionIndex: Int) -> Int {
        sectionList.firstIndex { $0.indexTitle == title } ?? sectionIndex
    }

    // MARK: Tracking

    private func sectionName(of object: ManagedObject) -> String {
        guard let keyPath = sectionNameKeyPath else { return "" }
        switch object.value(forKeyPath: keyPath) {
        case nil: return ""
        case let text as String: return text
        case let value?: return "\(value)"
        }
    }

    private func indexTitle(for name: String) -> String? {
        if let delegate, let title = delegate.controller(self, sectionIndexTitleForSectionName: name) { return title }
        return sectionIndexTitle(forSectionName: name)
    }

    /// Makes `list` the fetched objects, in sections of the runs' names and lengths (one section, `""`, without a
    /// section key path, even when empty).
    private func install(_ list: ControllerRows, runs: [(name: String, count: Int)]) {
        rows = list
        positions = nil
        var sections: [FetchedSection] = []
        var start = 0
        for run in sectionNameKeyPath == nil ? [("", list.count)] : runs where run.count > 0 || sectionNameKeyPath == nil {
            sections.append(FetchedSection(name: run.name, indexTitle: indexTitle(for: run.name), start: start, numberOfObjects: run.count, rows: list))
            start += run.count
        }
        sectionList = sections
    }

    private func layout<Key: Hashable>(_ keys: [Key]) -> FetchedResultsDiff<Key>.Layout {
        FetchedResultsDiff<Key>.Layout(keys: keys, sections: sectionList.map { ($0.name, $0.start) })
    }

    /// Whether `object` is of `entity`, the request's (or a sub-entity, when the request includes them).
    private func isFetchable(_ object: ManagedObject, _ entity: EntityDescription) -> Bool {
        object.entity === entity || (fetchRequest.includesSubentities && object.entity.isKind(of: entity))
    }

    private func matches(_ object: ManagedObject) -> Bool {
        guard object.managedObjectContext === managedObjectContext, !object.isDeleted else { return false }
        guard let predicate = fetchRequest.predicate else { return true }
        return (try? predicate.matches(object)) ?? false
    }

    private func contextDidChange(_ note: ObjectsDidChange) {
        guard let list = rows else { return }
        let start = ProbeClock.now()
        if note.invalidatedAll { return refetchAfterReset(list) }
        guard let entity = try? managedObjectContext.fetchedEntity(named: fetchRequest.entityName) else { return }
        var known: [ControllerRows.Identity: ManagedObject] = [:]
        var removed: Set<ControllerRows.Identity> = []
        for object in note.deleted {
            let identity = ControllerRows.Identity(object)
            removed.insert(identity)
            known[identity] = object
        }
        var changed: [ManagedObject] = []
        var changedIDs: Set<ControllerRows.Identity> = []
        for object in note.updated + note.refreshed where isFetchable(object, entity) && changedIDs.insert(ControllerRows.Identity(object)).inserted {
            changed.append(object)
        }
        let inserted = note.inserted.filter { isFetchable($0, entity) && !changedIDs.contains(ControllerRows.Identity($0)) }
        guard !removed.isEmpty || !changed.isEmpty || !inserted.isEmpty else { return }
        // A merge's objects arrive as faults: their values are read in one statement per 500, not one each.
        try? managedObjectContext.fulfillFaults(for: changed + inserted)
        let oldIDs = list.identities
        guard !changed.isEmpty || !inserted.isEmpty || !removed.isDisjoint(with: oldIDs) else { return }

        // Unchanged objects keep their order and sections; changed and new ones that match are placed among them by
        // the sort.
        let oldLayout = layout(oldIDs)
        let oldEntries = list.entries
        var survivors: [Int] = []   // old positions
        survivors.reserveCapacity(oldIDs.count)
        for (i, identity) in oldIDs.enumerated() where !removed.contains(identity) && !changedIDs.contains(identity) { survivors.append(i) }
        let descriptors = fetchRequest.sortDescriptors
        var oldIndex: [ControllerRows.Identity: Int] = [:]
        for object in changed { known[ControllerRows.Identity(object)] = object }
        for (i, identity) in oldIDs.enumerated() where changedIDs.contains(identity) { oldIndex[identity] = i }
        var placed: [(object: ManagedObject, values: [PredicateValue], order: Int)] = []
        for object in changed + inserted where matches(object) {
            let identity = ControllerRows.Identity(object)
            known[identity] = object
            placed.append((object, ManagedObjectContext.sortValues(of: object, descriptors), oldIndex[identity] ?? Int.max))
        }
        placed.sort { a, b in
            let order = ManagedObjectContext.compareSortValues(a.values, b.values, descriptors)
            return order == .orderedSame ? (a.order, a.object.key) < (b.order, b.object.key) : order == .orderedAscending
        }
        var survivorValues: [Int: [PredicateValue]] = [:]
        func values(at index: Int) -> [PredicateValue] {
            if let cached = survivorValues[index] { return cached }
            let computed = ManagedObjectContext.sortValues(of: list.object(at: survivors[index]), descriptors)
            survivorValues[index] = computed
            return computed
        }
        var entries: [ControllerRows.Entry] = []
        entries.reserveCapacity(survivors.count + placed.count)
        var runs = SectionRuns()
        var next = 0
        // Survivors come in their old order: their old section is found by walking the old sections along.
        let oldSections = oldLayout.sections
        var section = 0
        func takeSurvivors(upTo end: Int) {
            while next < end {
                let position = survivors[next]
                while section + 1 < oldSections.count && oldSections[section + 1].start <= position { section += 1 }
                entries.append(oldEntries[position])
                runs.append(oldSections[section].name)
                next += 1
            }
        }
        for item in placed {
            // After the survivors that sort before it or equal to it.
            var low = next, high = survivors.count
            while low < high {
                let middle = (low + high) / 2
                if ManagedObjectContext.compareSortValues(values(at: middle), item.values, descriptors) == .orderedDescending { high = middle } else { low = middle + 1 }
            }
            takeSurvivors(upTo: low)
            entries.append(list.entry(for: item.object))
            runs.append(sectionName(of: item.object))
        }
        takeSurvivors(upTo: survivors.count)
        list.replace(entries)
        install(list, runs: runs.runs)
        let diff = FetchedResultsDiff(from: oldLayout, to: layout(list.identities), changed: changedIDs)
        report(diff) { change in
            if let object = known[change.key] { return object }
            if let position = change.newPosition { return list.object(at: position) }
            return Self.object(for: oldEntries[change.oldPosition!], in: self.managedObjectContext)
        }
        if cacheName != nil && sectionNameKeyPath != nil && !diff.isEmpty && !hasPendingChanges { _ = writeCache() }
        recordChanges(diff, since: start)
    }

    private static func object(for entry: ControllerRows.Entry, in context: ManagedObjectContext) -> ManagedObject {
        switch entry {
        case .object(let object): return object
        case .row(let entity, let key): return context.faultingObject(entity: entity, key: key)
        }
    }

    /// After the context's reset every old object is invalid: fetch again, pairing old and new rows by key.
    private func refetchAfterReset(_ old: ControllerRows) {
        let oldIDs = old.identities
        let oldEntries = old.entries
        let oldLayout = layout(oldIDs)
        guard (try? performFetch()) != nil, let list = rows else { return }
        let newIDs = list.identities
        let diff = FetchedResultsDiff(from: oldLayout, to: layout(newIDs), changed: Set(oldIDs).intersection(newIDs))
        report(diff) { change in
            if let position = change.newPosition { return list.object(at: position) }
            return Self.object(for: oldEntries[change.oldPosition!], in: self.managedObjectContext)
        }
        recordChanges(diff, since: ProbeClock.now())
    }

    private func report<Key: Hashable>(_ diff: FetchedResultsDiff<Key>, object: (FetchedResultsDiff<Key>.ObjectChange) -> ManagedObject) {
        guard !diff.isEmpty else { return }
        delegate?.controllerWillChangeContent(self)
        var sectionChanges: [FetchedResultsChangeSet.SectionChange] = []
        for change in diff.sectionChanges {
            sectionChanges.append(.init(name: change.name, index: change.index, type: change.type))
            guard let delegate else { continue }
            // A deleted section is reported empty: its objects are reported deleted next.
            let info = change.type == .insert ? sectionList[change.index]
                : FetchedSection(name: change.name, indexTitle: indexTitle(for: change.name), start: 0, numberOfObjects: 0, rows: nil)
            delegate.controller(self, didChange: info, atSectionIndex: change.index, for: change.type)
        }
        var objectChanges: [FetchedResultsChangeSet.ObjectChange] = []
        for change in diff.objectChanges {
            // The object as it is now; a deleted one as it was.
            let changed = object(change)
            objectChanges.append(.init(objectID: changed.objectID, type: change.type, indexPath: change.indexPath, newIndexPath: change.newIndexPath))
            delegate?.controller(self, didChange: changed, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
        }
        delegate?.controllerDidChangeContent(self)
        let changeSet = FetchedResultsChangeSet(sections: sectionChanges, objects: objectChanges)
        onChange?(changeSet)
        for stream in streams { stream.yield(changeSet) }
    }
}

/// Why a fetched results controller cannot fetch.
public enum FetchedResultsError: Error, CustomStringConvertible, Equatable {
    /// The request has no sort descriptor (Core Data raises).
    case noSortDescriptors(entity: String)
    /// The objects are not grouped by section: the section name of the object at `index` appeared before.
    case sectionsOutOfOrder(index: Int, sectionName: String, keyPath: String)

    public var description: String {
        switch self {
        case .noSortDescriptors(let entity):
            return "a fetched results controller needs a fetch request with sort descriptors (entity \(entity))"
        case .sectionsOutOfOrder(let index, let name, let keyPath):
            return "the fetched object at index \(index) has an out of order section name '\(name)': objects must be sorted by section name (sort first by '\(keyPath)')"
        }
    }
}

/// Sections as runs of one name, built row by row (or by counts): a name equal to the last run's extends it.
struct SectionRuns {
    private(set) var runs: [(name: String, count: Int)] = []

    mutating func append(_ name: String, count: Int = 1) {
        guard count > 0 else { return }
        if let last = runs.last, last.name == name { runs[runs.count - 1].count += count } else { runs.append((name, count)) }
    }
}
