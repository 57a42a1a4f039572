import Faultline
import Foundation

/// The report tests' workload store: cities, each with a mayor who lives there.
enum CityStore {
    static func model(indexedPopulation: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "City", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "population", type: .integer64, isIndexed: indexedPopulation),
                AttributeDescription(name: "rank", type: .integer64),
                RelationshipDescription(name: "mayor", destination: "Person", inverse: "mayorOf"),
                RelationshipDescription(name: "residents", destination: "Person", inverse: "homeTown", isToMany: true),
            ]),
            EntityDescription(name: "Person", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "mayorOf", destination: "City", inverse: "mayor"),
                RelationshipDescription(name: "homeTown", destination: "City", inverse: "residents"),
            ]),
        ])
    }

    /// Writes `cities` cities and their mayors to a new store at `store`, with probes off.
    static func write(cities: Int, model: ManagedObjectModel, to store: URL) throws {
        let setup = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try setup.addPersistentStore(at: store)
        let writer = ManagedObjectContext(.privateQueue, coordinator: setup)
        try writer.performAndWait {
            for i in 0..<cities {
                let city = try writer.insertNewObject(forEntityName: "City")
                try city.setValue("City \(i)", forKey: "name")
                try city.setValue(Int64(i * 1_000), forKey: "population")
                try city.setValue(Int64(cities - i), forKey: "rank")
                let mayor = try writer.insertNewObject(forEntityName: "Person")
                try mayor.setValue("Mayor \(i)", forKey: "name")
                try city.setValue(mayor, forKey: "mayor")
                try mayor.setValue(city, forKey: "homeTown")
            }
            try writer.save()
        }
    }
}
