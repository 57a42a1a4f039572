/// A fetched results controller's objects, in order: the objects themselves, or — for a request with a batch size —
/// the rows' keys, a batch's objects fetched when one of them is read (as `FetchedResults`), the last
/// `Limits.batchedResultsBatches` batches kept. Objects the context inserted and has not saved are held as objects.
final class ControllerRows {
    enum Entry {
        case row(EntityDescription, Int64)
        case object(ManagedObject)
    }

    /// What a row is across rounds of changes: its table and key once it has one, else the object.
    enum Identity: Hashable {
        case row(Int32, Int64)
        case object(ObjectIdentifier)

        init(_ object: ManagedObject) {
            self = object.key > 0 ? .row(object.entity.rootNumber, object.key) : .object(ObjectIdentifier(object))
        }
    }

    let context: ManagedObjectContext
    let batchSize: Int
    let prefetching: [String]
    private(set) var entries: [Entry]
    private var window: [(batch: Int, objects: [ManagedObject])] = []

    init(context: ManagedObjectContext, entries: [Entry], batchSize: Int, prefetching: [String]) {
        self.context = context
        self.entries = entries
        self.batchSize = batchSize
        self.prefetching = prefetching
    }

    var count: Int { entries.count }

    func identity(at position: Int) -> Identity {
        switch entries[position] {
        case .row(let entity, let key): return .row(entity.rootNumber, key)
        case .object(let object): return Identity(object)
        }
    }

    var identities: [Identity] { entries.indices.map(identity(at:)) }

    /// The object at `position`, its batch fetched when it is a row not read yet.
    func object(at position: Int) -> ManagedObject {
        switch entries[position] {
        case .object(let object): return object
        case .row(let entity, let key):
            guard batchSize > 0 else { return context.faultingObject(entity: entity, key: key) }
            let batch = position / batchSize
            if let found = window.firstIndex(where: { $0.batch == batch }) {
                let entry = window.remove(at: found)
                window.append(entry)
                return entry.objects[position - batch * batchSize]
            }
            let start = batch * batchSize, end = min(start + batchSize, entries.count)
            let objects = (start..<end).map { i -> ManagedObject in
                switch entries[i] {
                case .object(let object): return object
                case .row(let entity, let key): return context.faultingObject(entity: entity, key: key)
                }
            }
            try? context.fulfillFaults(for: objects)
            for path in prefetching { try? context.prefetch(path, from: objects) }
            if window.count >= Limits.batchedResultsBatches { window.removeFirst() }
            window.append((batch, objects))
            return objects[position - start]
        }
    }

    /// Every object, in order (all batches fetched).
    var allObjects: [ManagedObject] { entries.indices.map(object(at:)) }

    /// The entry for `object` in a list being rebuilt: its row when it has a permanent key and the list is batched.
    func entry(for object: ManagedObject) -> Entry {
        batchSize > 0 && object.key > 0 ? .row(object.entity, object.key) : .object(object)
    }

    /// Replaces the entries (a round of changes moved positions: the batches read are let go of).
    func replace(_ newEntries: [Entry]) {
        entries = newEntries
        window.removeAll()
    }
}
