/// The objects a fetch returned, as a random-access collection: Core Data's batched fetch result.
///
/// Ask for it by type — `let moods: FetchedResults<Mood> = try context.fetch(request)` — where Core Data code reads
/// `[Mood]`. With `fetchBatchSize` set it is Core Data's batch array: it holds the rows' keys (8 bytes a row) and
/// materializes the batch that holds an index when the index is read — one fetch of that batch's rows, its objects
/// with their values — keeping the last `Limits.batchedResultsBatches` batches read. Without a batch size (or when
/// the context's pending changes or an in-memory sort need every object) it holds the objects, as the `[T]` form
/// does. Use it on the context's queue, as its objects.
///
/// A Swift array on Linux cannot be lazy the way Core Data's `NSArray` is, so `fetch` returning `[T]` keeps
/// returning an object (a fault) per row; this type is the lazy form (docs/contexts.md, "Batched fetches").
public struct FetchedResults<Element: ManagedObject>: RandomAccessCollection, ExpressibleByArrayLiteral {
    let storage: Storage

    enum Storage {
        case objects([Element])
        case batched(BatchedRows)
        case controller(ControllerRows)
    }

    init(objects: [Element]) { storage = .objects(objects) }

    init(rows: BatchedRows) { storage = .batched(rows) }

    init(controllerRows: ControllerRows) { storage = .controller(controllerRows) }

    /// Results holding `elements`.
    public init(arrayLiteral elements: Element...) { storage = .objects(elements) }

    /// 0.
    public var startIndex: Int { 0 }

    /// The number of fetched objects.
    public var endIndex: Int {
        switch storage {
        case .objects(let objects): return objects.count
        case .batched(let rows): return rows.count
        case .controller(let rows): return rows.count
        }
    }

    /// The object at `position`; reading it materializes its batch when the results are batched.
    public subscript(position: Int) -> Element {
        switch storage {
        case .objects(let objects): return objects[position]
        // Every row's object is of a class the fetch checked to be an Element.
        case .batched(let rows): return unsafeDowncast(rows.object(at: position), to: Element.self)
        case .controller(let rows): return unsafeDowncast(rows.object(at: position), to: Element.self)
        }
    }

    /// The batch size the results materialize by; 0 when they hold every object.
    public var batchSize: Int {
        switch storage {
        case .objects: return 0
        case .batched(let rows): return rows.batchSize
        case .controller(let rows): return rows.batchSize
        }
    }

    /// The object ID at `position`, without materializing anything.
    public func objectID(at position: Int) -> ManagedObjectID {
        switch storage {
        case .objects(let objects): return objects[position].objectID
        case .batched(let rows): return rows.objectID(at: position)
        case .controller(let rows):
            switch rows.entries[position] {
            case .object(let object): return object.objectID
            case .row(let entity, let key): return ManagedObjectID(entity: entity, key: key, storeIdentifier: rows.context.coordinator.storeIdentifier)
            }
        }
    }

    /// How many batches are materialized now (at most `Limits.batchedResultsBatches`; 0 when not batched).
    public var materializedBatchCount: Int {
        if case .batched(let rows) = storage { return rows.window.count }
        return 0
    }
}

/// The rows of a batched fetch: keys in fetch order, and the batches last read.
final class BatchedRows {
    let context: ManagedObjectContext
    let request: FetchSpec
    /// The rows' keys, in the fetch's order.
    let keys: [Int64]
    /// Each row's entity, when the fetch spans sub-entities (else `entity` for every row).
    let entities: [EntityDescription]?
    let entity: EntityDescription
    let batchSize: Int
    /// Materialized batches, the most recently read last.
    var window: [(batch: Int, objects: [ManagedObject])] = []

    init(context: ManagedObjectContext, request: FetchSpec, keys: [Int64], entities: [EntityDescription]?, entity: EntityDescription) {
        self.context = context
        self.request = request
        self.keys = keys
        self.entities = entities
        self.entity = entity
        self.batchSize = request.fetchBatchSize
    }

    var count: Int { keys.count }

    func objectID(at position: Int) -> ManagedObjectID {
        ManagedObjectID(entity: entities?[position] ?? entity, key: keys[position], storeIdentifier: context.coordinator.storeIdentifier)
    }

    func object(at position: Int) -> ManagedObject {
        precondition(position >= 0 && position < keys.count, "index \(position) out of range of \(keys.count) fetched objects")
        let batch = position / batchSize
        let offset = position - batch * batchSize
        if let last = window.last, last.batch == batch { return last.objects[offset] }
        if let found = window.firstIndex(where: { $0.batch == batch }) {
            let entry = window.remove(at: found)
            window.append(entry)
            return entry.objects[offset]
        }
        let objects = context.materializeBatch(self, batch)
        if window.count >= Limits.batchedResultsBatches { window.removeFirst() }
        window.append((batch, objects))
        return objects[offset]
    }
}
