import Faultline
import Foundation

/// The seed's Product example (L2431–L2435): products with a number, searched with or without an index.
public enum ProductWorkload {
    public static let number = Attribute<Int64>("number")
    public static let name = Attribute<String>("name")

    public static func model(indexed: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Product", properties: [
                AttributeDescription(name: "number", type: .integer64, isOptional: false, defaultValue: Int64(0), isIndexed: indexed),
                AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
            ]),
        ])
    }

    /// `count` products numbered 0, 7, 14, …
    public static func generate(count: Int, into url: URL, model: ManagedObjectModel) throws {
        RowWorkload.removeStore(at: url)
        let context = try BenchStore.coldContext(model, at: url, probes: .disabled)
        try context.performAndWait {
            let entity = model.entity(named: "Product")!
            for i in 0..<count {
                let product = ManagedObject(entity: entity, insertInto: context)
                product[number] = Int64(i * 7)
                product[name] = "Product \(i)"
            }
            try context.save()
        }
    }
}
