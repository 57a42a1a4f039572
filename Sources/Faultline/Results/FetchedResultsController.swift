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

    var objects: [ManagedObject]?
    var sectionList: [FetchedSection] = []
    private var observation: ContextObservation?
    private var positions: [ObjectIdentifier: Int]?

    /// Core Data's `init(fetchRequest:managedObjectContext:sectionNameKeyPath:cacheName:)`. Nothing is fetched
    /// until `performFetch()`.
    public init(fetchRequest: FetchRequest<ResultType>, managedObjectContext: ManagedObjectContext,
                sectionNameKeyPath: String?, cacheName: String?) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
    }

    deinit {
        guard let observation else { return }
        let context = managedObjectContext
        context.performAndWait { context.removeObserver(observation) }
    }

    // MARK: Fetching

    /// Fetches the request's objects, computes the sections, and starts tracking changes. Throws when the request
    /// has no sort descriptor, when the objects are not in section order, or when the fetch fails.
    public func performFetch() throws {
        guard !fetchRequest.sortDescriptors.isEmpty else { throw FetchedResultsError.noSortDescriptors(entity: fetchRequest.entityName) }
        let start = ProbeClock.now()
        let fetched: [ManagedObject] = try managedObjectContext.fetch(fetchRequest)
        var outcome = CacheOutcome.none
        var names: [String]? = nil
        if cacheName != nil && sectionNameKeyPath != nil {
            (names, outcome) = cachedSectionNames(count: fetched.count)
        }
        if names == nil {
            if sectionNameKeyPath != nil {
                // Every object's section name is read: one statement per 500 faults rather than one each.
                try managedObjectContext.fulfillFaults(for: fetched)
            }
            names = fetched.map(sectionName(of:))
        }
        let sectionNames = names!
        var seen: Set<String> = []
        for (i, name) in sectionNames.enumerated() where i == 0 || sectionNames[i - 1] != name {
            guard seen.insert(name).inserted else {
                throw FetchedResultsError.sectionsOutOfOrder(index: i, sectionName: name, keyPath: sectionNameKeyPath ?? "")
            }
        }
        install(fetched, names: sectionNames)
        if outcome.rebuilds, let error = writeCache() { outcome = .miss("\(outcome.reason ?? "rebuilt"); not written: \(error.localizedDescription)") }
        recordFetch(objects: fetched.count, outcome: outcome, since: start)
        if observation == nil {
            observation = managedObjectContext.addObjectsDidChangeObserver { [weak self] note in self?.contextDidChange(note) }
        }
    }

    /// The fetched objects, in order (nil before `performFetch()`).
    public var fetchedObjects: [ResultType]? {
        // Every object is of the request's class: `fetch` checked it, and tracking keeps only such objects.
        objects.map { unsafeBitCast($0, to: [ResultType].self) }
    }

    /// The fetched objects as managed objects (for a delegate, which sees any controller).
    public var fetchedManagedObjects: [ManagedObject]? { objects }

    /// The sections (nil before `performFetch()`): one named `""` without a section key path.
    public var sections: [any FetchedResultsSectionInfo]? { objects == nil ? nil : sectionList }

    /// The object at `indexPath` (section, row). Traps outside the sections, as Core Data raises.
    public func object(at indexPath: IndexPath) -> ResultType {
        unsafeDowncast(managedObject(at: indexPath), to: ResultType.self)
    }

    /// The object at `indexPath`, as a managed object (for a delegate, which sees any controller).
    public func managedObject(at indexPath: IndexPath) -> ManagedObject {
        guard let objects, indexPath.count == 2, indexPath[0] >= 0, indexPath[0] < sectionList.count,
              indexPath[1] >= 0, indexPath[1] < sectionList[indexPath[0]].numberOfObjects else {
            preconditionFailure("index path \(indexPath) is outside the fetched results controller's sections")
        }
        return objects[sectionList[indexPath[0]].start + indexPath[1]]
    }

    /// The index path of `object`, or nil when it is not among the fetched objects.
    public func indexPath(forObject object: ResultType) -> IndexPath? {
        guard let objects else { return nil }
        if positions == nil {
            var map: [ObjectIdentifier: Int] = [:]
            map.reserveCapacity(objects.count)
            for (i, object) in objects.enumerated() { map[ObjectIdentifier(object)] = i }
            positions = map
        }
        guard let position = positions?[ObjectIdentifier(object)] else { return nil }
        return layout(objects.map(ObjectIdentifier.init)).indexPath(of: position)
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

    /// Makes `list` the fetched objects, with `names` their section names (contiguous runs are sections).
    private func install(_ list: [ManagedObject], names: [String]) {
        objects = list
        positions = nil
        var sections: [FetchedSection] = []
        var start = 0
        for i in 0...list.count where i == list.count || (i > start && names[i] != names[start]) {
            if i > start || (sectionNameKeyPath == nil && list.isEmpty) {
                let name = list.isEmpty ? "" : names[start]
                sections.append(FetchedSection(name: name, indexTitle: indexTitle(for: name), start: start, numberOfObjects: i - start, all: list))
            }
            start = i
        }
        sectionList = sections
    }

    private func layout<Key: Hashable>(_ keys: [Key]) -> FetchedResultsDiff<Key>.Layout {
        FetchedResultsDiff<Key>.Layout(keys: keys, sections: sectionList.map { ($0.name, $0.start) })
    }

    /// Whether `object` is of the request's entity (or a sub-entity, when the request includes them).
    private func isFetchable(_ object: ManagedObject) -> Bool {
        guard let entity = try? managedObjectContext.fetchedEntity(named: fetchRequest.entityName) else { return false }
        return object.entity === entity || (fetchRequest.includesSubentities && object.entity.isKind(of: entity))
    }

    private func matches(_ object: ManagedObject) -> Bool {
        guard object.managedObjectContext === managedObjectContext, !object.isDeleted else { return false }
        guard let predicate = fetchRequest.predicate else { return true }
        return (try? predicate.matches(object)) ?? false
    }

    private func contextDidChange(_ note: ObjectsDidChange) {
        guard let old = objects else { return }
        let start = ProbeClock.now()
        if note.invalidatedAll { return refetchAfterReset(old) }
        let removed = Set(note.deleted.lazy.map(ObjectIdentifier.init))
        var changed: [ManagedObject] = []
        var changedIDs: Set<ObjectIdentifier> = []
        for object in note.updated + note.refreshed where isFetchable(object) && changedIDs.insert(ObjectIdentifier(object)).inserted {
            changed.append(object)
        }
        let inserted = note.inserted.filter { isFetchable($0) && !changedIDs.contains(ObjectIdentifier($0)) }
        guard !removed.isEmpty || !changed.isEmpty || !inserted.isEmpty else { return }
        let oldIDs = old.map(ObjectIdentifier.init)
        let present = Set(oldIDs)
        guard !changed.isEmpty || !inserted.isEmpty || !removed.isDisjoint(with: present) else { return }

        // Unchanged objects keep their order and sections; changed and new ones that match are placed among them by
        // the sort.
        let oldLayout = layout(oldIDs)
        var survivors: [ManagedObject] = []
        var survivorNames: [String] = []
        survivors.reserveCapacity(old.count)
        for (i, object) in old.enumerated() where !removed.contains(oldIDs[i]) && !changedIDs.contains(oldIDs[i]) {
            survivors.append(object)
            survivorNames.append(oldLayout.sectionName(of: i))
        }
        let descriptors = fetchRequest.sortDescriptors
        let oldIndex = Dictionary(uniqueKeysWithValues: oldIDs.enumerated().map { ($1, $0) })
        var placed: [(object: ManagedObject, values: [PredicateValue], order: Int)] = []
        for object in changed + inserted where matches(object) {
            placed.append((object, ManagedObjectContext.sortValues(of: object, descriptors), oldIndex[ObjectIdentifier(object)] ?? Int.max))
        }
        placed.sort { a, b in
            let order = ManagedObjectContext.compareSortValues(a.values, b.values, descriptors)
            return order == .orderedSame ? (a.order, a.object.key) < (b.order, b.object.key) : order == .orderedAscending
        }
        var survivorValues: [Int: [PredicateValue]] = [:]
        func values(at index: Int) -> [PredicateValue] {
            if let known = survivorValues[index] { return known }
            let computed = ManagedObjectContext.sortValues(of: survivors[index], descriptors)
            survivorValues[index] = computed
            return computed
        }
        var list: [ManagedObject] = []
        var names: [String] = []
        list.reserveCapacity(survivors.count + placed.count)
        var next = 0
        for item in placed {
            // After the survivors that sort before it or equal to it.
            var low = next, high = survivors.count
            while low < high {
                let middle = (low + high) / 2
                if ManagedObjectContext.compareSortValues(values(at: middle), item.values, descriptors) == .orderedDescending { high = middle } else { low = middle + 1 }
            }
            list.append(contentsOf: survivors[next..<low])
            names.append(contentsOf: survivorNames[next..<low])
            next = low
            list.append(item.object)
            names.append(sectionName(of: item.object))
        }
        list.append(contentsOf: survivors[next...])
        names.append(contentsOf: survivorNames[next...])
        install(list, names: names)
        let diff = FetchedResultsDiff(from: oldLayout, to: layout(list.map(ObjectIdentifier.init)), changed: changedIDs)
        report(diff, old: old, new: list)
        if cacheName != nil && sectionNameKeyPath != nil && !diff.isEmpty && !hasPendingChanges { _ = writeCache() }
        recordChanges(diff, since: start)
    }

    /// After the context's reset every old object is invalid: fetch again, pairing old and new objects by ID.
    private func refetchAfterReset(_ old: [ManagedObject]) {
        let oldLayout = layout(old.map(\.objectID))
        guard (try? performFetch()) != nil, let list = objects else { return }
        let newIDs = list.map(\.objectID)
        let paired = Set(oldLayout.keys).intersection(newIDs)
        let diff = FetchedResultsDiff(from: oldLayout, to: layout(newIDs), changed: paired)
        report(diff, old: old, new: list)
        recordChanges(diff, since: ProbeClock.now())
    }

    private func report<Key: Hashable>(_ diff: FetchedResultsDiff<Key>, old: [ManagedObject], new: [ManagedObject]) {
        guard !diff.isEmpty else { return }
        delegate?.controllerWillChangeContent(self)
        var sectionChanges: [FetchedResultsChangeSet.SectionChange] = []
        for change in diff.sectionChanges {
            sectionChanges.append(.init(name: change.name, index: change.index, type: change.type))
            guard let delegate else { continue }
            // A deleted section is reported empty: its objects are reported deleted next.
            let info = change.type == .insert ? sectionList[change.index]
                : FetchedSection(name: change.name, indexTitle: indexTitle(for: change.name), start: 0, numberOfObjects: 0, all: [])
            delegate.controller(self, didChange: info, atSectionIndex: change.index, for: change.type)
        }
        var objectChanges: [FetchedResultsChangeSet.ObjectChange] = []
        for change in diff.objectChanges {
            // The object as it is now; a deleted one as it was.
            let object = change.newPosition.map { new[$0] } ?? old[change.oldPosition!]
            objectChanges.append(.init(objectID: object.objectID, type: change.type, indexPath: change.indexPath, newIndexPath: change.newIndexPath))
            delegate?.controller(self, didChange: object, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
        }
        delegate?.controllerDidChangeContent(self)
        onChange?(FetchedResultsChangeSet(sections: sectionChanges, objects: objectChanges))
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
