import Faultline
import Foundation

/// The GRDB-shaped workload: a `Row` entity of ten Integer 64 attributes `a0…a9`, written and read through the
/// engine. Its raw SQLite twin is `RawSQLite`.
public enum RowWorkload {
    /// The model.
    public static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Row", properties: (0..<10).map { AttributeDescription(name: "a\($0)", type: .integer64) }),
        ])
    }

    /// Typed keys for `a0…a9`.
    public static let keys = (0..<10).map { Attribute<Int64>("a\($0)") }

    /// Removes a store file and its WAL companions.
    public static func removeStore(at url: URL) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    /// Creates a store at `url` and inserts `count` rows with one save. Returns the context, so that a caller
    /// timing the insert can tear it down outside the measurement.
    @discardableResult
    public static func insert(count: Int, into url: URL, model: ManagedObjectModel) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try insert(count: count, into: context)
        return context
    }

    /// Inserts `count` rows into `context` and saves once.
    public static func insert(count: Int, into context: ManagedObjectContext) throws {
        try context.performAndWait {
            let entity = context.model.entity(named: "Row")!
            for i in 0..<count {
                let row = ManagedObject(entity: entity, insertInto: context)
                for (j, key) in keys.enumerated() { row[key] = Int64(i * 10 + j) }
            }
            try context.save()
        }
    }

    /// `count` single-object fetches by object ID (`SELF == %@`, rows 1…1,000 in turn): a fetch-heavy workload
    /// where per-fetch costs (compiling the predicate, probes) weigh most. Returns the objects found.
    public static func smallFetches(_ context: ManagedObjectContext, count: Int) throws -> Int {
        try context.performAndWait {
            let store = context.coordinator.storeIdentifier ?? ""
            var found = 0
            for i in 0..<count { found += try context.fetchOne("Row", key: i % 1_000 + 1, store: store) }
            return found
        }
    }

    /// Fetches every row fully materialized through `context` and reads two attributes of each; returns a checksum.
    public static func fetchMaterialized(_ context: ManagedObjectContext) throws -> Int64 {
        try fetchMaterializedObjects(context).sum
    }

    /// `fetchMaterialized`, returning the objects too: held by the caller, they are not released (the context holds
    /// them weakly) until the caller lets go.
    public static func fetchMaterializedObjects(_ context: ManagedObjectContext) throws -> (sum: Int64, objects: [ManagedObject]) {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Row")
            request.returnsObjectsAsFaults = false
            var sum: Int64 = 0
            let rows = try context.fetch(request)
            for row in rows { sum &+= row[keys[0]] &+ row[keys[9]] }
            return (sum, rows)
        }
    }

    /// The fetch's three phases, as the peers run them: every row into materialized objects (fetch), every
    /// attribute of every object read (use), the objects dropped (release), all on the context's queue; returns a
    /// checksum.
    public static func fetchUseRelease(_ context: ManagedObjectContext, clock: PhaseClock) throws -> Int64 {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Row")
            request.returnsObjectsAsFaults = false
            let reader = EveryValue()
            var held: [ManagedObject]? = try context.fetch(request)
            clock.lap(.fetch)
            var sum: Int64 = 0
            for row in held! { sum &+= reader.sum(row) }
            clock.lap(.use)
            PhaseClock.release(&held)
            clock.lap(.release)
            return sum
        }
    }

    /// `existingObject(with:)` for each of `ids` on the context's queue, each in three phases: the object
    /// (fetch), its ten attributes read (use), the object dropped (release); returns a checksum.
    public static func pointLookups(_ context: ManagedObjectContext, ids: [ManagedObjectID], clock: PhaseClock) throws -> Int64 {
        try context.performAndWait {
            let reader = EveryValue()
            var sum: Int64 = 0
            clock.lap(.fetch)
            for id in ids {
                var object: ManagedObject? = try context.existingObject(with: id)
                clock.lap(.fetch)
                sum &+= reader.sum(object!)
                clock.lap(.use)
                PhaseClock.release(&object)
                clock.lap(.release)
            }
            return sum
        }
    }

    /// Reads all ten attributes of a row with the keys held one by one, as a program's typed properties hold them
    /// (`static let`), not iterated from an array per object (whose iteration retains and releases each key around
    /// each read: 30 ns a read where this is 8).
    struct EveryValue {
        let k0 = keys[0], k1 = keys[1], k2 = keys[2], k3 = keys[3], k4 = keys[4]
        let k5 = keys[5], k6 = keys[6], k7 = keys[7], k8 = keys[8], k9 = keys[9]

        @inline(__always) func sum(_ row: ManagedObject) -> Int64 {
            row[k0] &+ row[k1] &+ row[k2] &+ row[k3] &+ row[k4] &+ row[k5] &+ row[k6] &+ row[k7] &+ row[k8] &+ row[k9]
        }
    }
}
