import Faultline
import Foundation

/// The point-lookup benchmark of anchors-performance.md (§3.2, the target in §6), through the engine: a `Text`
/// entity of ten String attributes `t0…t9` holding 12-character values, in a 200,000-row table, fetched one object
/// at a time by object ID (`SELF == %@`, a lookup by INTEGER PRIMARY KEY through the cached statement), each
/// lookup a different row, spread over the whole table.
public enum PointLookupWorkload {
    /// The table's size in the anchors' benchmark.
    public static let rows = 200_000

    /// The model.
    public static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Text", properties: (0..<10).map { AttributeDescription(name: "t\($0)", type: .string) }),
        ])
    }

    /// Creates a store at `url` with `count` rows, inserted with one save.
    public static func generate(rows count: Int, into url: URL) throws {
        let model = try model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let entity = context.model.entity(named: "Text")!
            let keys = (0..<10).map { Attribute<String>("t\($0)") }
            for i in 0..<count {
                let row = ManagedObject(entity: entity, insertInto: context)
                // Twelve digits, different in every column and row.
                for (j, key) in keys.enumerated() { row[key] = String(100_000_000_000 + (i &* 10 &+ j) &* 7_919 % 899_999_999_999) }
            }
            try context.save()
        }
    }

    /// `count` single-object fetches by object ID through `context`, fully materialized, on a table of `rows` rows:
    /// the `i`th fetches row `1 + i × 7,919 mod rows`, so that consecutive lookups land far apart and, while `count`
    /// is at most `rows`, none is repeated. Returns the objects found.
    public static func lookups(_ context: ManagedObjectContext, count: Int, rows: Int) throws -> Int {
        guard rows > 0 else { return 0 }
        return try context.performAndWait {
            let store = context.coordinator.storeIdentifier ?? ""
            // A stride that shares no factor with `rows` visits every row once before repeating one.
            let stride = rows % 7_919 == 0 ? 7_907 : 7_919
            var found = 0
            for i in 0..<count { found += try context.fetchOne("Text", key: i % rows &* stride % rows + 1, store: store) }
            return found
        }
    }
}
