import Faultline
import Foundation

/// Blobs stored inline, in an entity of their own (seed 001 P-58, P-59) or in external storage: photos with a name
/// and a payload of a given size, either a `data` attribute of `Photo` (inline, or with
/// `allowsExternalBinaryDataStorage`, in a file of its own past 100 KiB) or a to-one `payload` to `PhotoData`.
public enum PhotoWorkload {
    public static let name = Attribute<String>("name")
    public static let data = Attribute<Data?>("data")
    public static let payload = ToOne<ManagedObject>("payload")

    /// Where a photo's payload lives.
    public enum Storage: String, Sendable {
        case inline, separate, external
    }

    public static func model(separate: Bool) throws -> ManagedObjectModel { try model(storage: separate ? .separate : .inline) }

    public static func model(storage: Storage) throws -> ManagedObjectModel {
        if storage == .separate {
            return try ManagedObjectModel(entities: [
                EntityDescription(name: "Photo", properties: [
                    AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                    RelationshipDescription(name: "payload", destination: "PhotoData", inverse: "photo", deleteRule: .cascade),
                ]),
                EntityDescription(name: "PhotoData", properties: [
                    AttributeDescription(name: "data", type: .binary),
                    RelationshipDescription(name: "photo", destination: "Photo", inverse: "payload"),
                ]),
            ])
        }
        return try ManagedObjectModel(entities: [
            EntityDescription(name: "Photo", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                AttributeDescription(name: "data", type: .binary, allowsExternalBinaryDataStorage: storage == .external),
            ]),
        ])
    }

    /// `count` photos with `bytes` of seeded payload each.
    public static func generate(count: Int, bytes: Int, separate: Bool, into url: URL) throws {
        try generate(count: count, bytes: bytes, storage: separate ? .separate : .inline, into: url)
    }

    public static func generate(count: Int, bytes: Int, storage: Storage, into url: URL) throws {
        let model = try model(storage: storage)
        let separate = storage == .separate
        RowWorkload.removeStore(at: url)
        let context = try BenchStore.coldContext(model, at: url, probes: .disabled)
        var random = SeededGenerator(seed: UInt64(bytes))
        try context.performAndWait {
            let photoEntity = model.entity(named: "Photo")!
            for i in 0..<count {
                let photo = ManagedObject(entity: photoEntity, insertInto: context)
                photo[name] = "Photo \(i)"
                var blob = Data(count: bytes)
                blob.withUnsafeMutableBytes { raw in
                    for offset in stride(from: 0, to: bytes - 7, by: 8) { raw.storeBytes(of: random.next(), toByteOffset: offset, as: UInt64.self) }
                }
                if separate {
                    let holder = ManagedObject(entity: model.entity(named: "PhotoData")!, insertInto: context)
                    holder[data] = blob
                    photo[payload] = holder
                } else {
                    photo[data] = blob
                }
                if i % 200 == 199 { try context.save(); context.reset() }
            }
            try context.save()
        }
    }
}
