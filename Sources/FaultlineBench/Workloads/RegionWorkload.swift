import Faultline
import Foundation

/// Moody's geographic regions reduced to what seed 001's index example needs (L5740–L5812): `markedForDeletionDate`
/// (nil for almost all rows), `updatedAt`, and `numericISO3166Code`; with either a single-column index on
/// `markedForDeletionDate` or the compound index (`markedForDeletionDate`, `updatedAt`).
public enum RegionWorkload {
    public static let updatedAt = Attribute<Date>("updatedAt")
    public static let markedForDeletionDate = Attribute<Date?>("markedForDeletionDate")
    public static let code = Attribute<Int16>("numericISO3166Code")

    public static func model(compoundIndex: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Country", properties: [
                AttributeDescription(name: "markedForDeletionDate", type: .date, isIndexed: !compoundIndex),
                AttributeDescription(name: "numericISO3166Code", type: .integer16, isOptional: false, defaultValue: Int16(0)),
                AttributeDescription(name: "updatedAt", type: .date, isOptional: false, defaultValue: Date(timeIntervalSinceReferenceDate: 0)),
            ], compoundIndexes: compoundIndex ? [["markedForDeletionDate", "updatedAt"]] : []),
        ])
    }

    /// `count` regions, one in a hundred marked for deletion, updated at seeded times over two years.
    public static func generate(count: Int, into url: URL, compoundIndex: Bool, seed: UInt64 = 5_740) throws {
        let model = try model(compoundIndex: compoundIndex)
        let context = try BenchStore.coldContext(model, at: url, probes: .disabled)
        var random = SeededGenerator(seed: seed)
        try context.performAndWait {
            let entity = model.entity(named: "Country")!
            for i in 0..<count {
                let region = ManagedObject(entity: entity, insertInto: context)
                region[code] = Int16(truncatingIfNeeded: i % 1_000)
                region[updatedAt] = Date(timeIntervalSinceReferenceDate: 6e8 + Double.random(in: 0..<6.3e7, using: &random))
                if Int.random(in: 0..<100, using: &random) == 0 { region[markedForDeletionDate] = Date(timeIntervalSinceReferenceDate: 6.6e8) }
                if i % 20_000 == 19_999 { try context.save(); context.reset() }
            }
            try context.save()
        }
    }
}
