import Foundation
import XCTest
@testable import Faultline

/// A repository helper as Core Data code writes one: on `FetchRequestResult` where `Self` is a managed object.
extension FetchRequestResult where Self: ManagedObject {
    static func all(named entity: String, in context: ManagedObjectContext) throws -> [Self] {
        try context.fetch(FetchRequest<Self>(entityName: entity))
    }
}

/// Results as Core Data returns them through one `fetch(_:)`: objects, IDs, dictionaries or a count, chosen by the
/// request's result type.
final class FetchRequestResultTests: XCTestCase {
    func testEveryResultTypeThroughOneFetch() throws {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for name in ["Rex", "Ada"] {
                try EntityDescription.insertNewObject(forEntityName: "Dog", into: context).setValue(name, forKey: "name")
            }
            try context.save()
            XCTAssertEqual(try ManagedObject.all(named: "Dog", in: context).count, 2)

            let ids = try context.fetch(FetchRequest<ManagedObjectID>(entityName: "Dog"))
            XCTAssertEqual(ids.count, 2)
            XCTAssertTrue(ids.allSatisfy { !$0.isTemporaryID })

            let dictionaries = FetchRequest<NSDictionary>(entityName: "Dog", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            dictionaries.propertiesToFetch = [PropertyToFetch("name")]
            XCTAssertEqual(dictionaries.resultType, .dictionaryResultType)
            XCTAssertEqual(try context.fetch(dictionaries).compactMap { $0["name"] as? String }, ["Ada", "Rex"])

            XCTAssertEqual(try context.fetch(FetchRequest<NSNumber>(entityName: "Dog")).map(\.intValue), [2])

            // Core Data's untyped request: the result type decides.
            let untyped = FetchRequest<FetchRequestResult>(entityName: "Dog")
            XCTAssertEqual(untyped.resultType, .managedObjectResultType)
            XCTAssertEqual(try context.fetch(untyped).compactMap { ($0 as? ManagedObject)?.value(forKey: "name") as? String }.sorted(), ["Ada", "Rex"])
            untyped.resultType = .managedObjectIDResultType
            XCTAssertEqual(Set(try context.fetch(untyped).compactMap { $0 as? ManagedObjectID }), Set(ids))
            untyped.resultType = .countResultType
            XCTAssertEqual(try context.fetch(untyped).compactMap { ($0 as? NSNumber)?.intValue }, [2])
            untyped.resultType = .dictionaryResultType
            untyped.propertiesToFetch = [PropertyToFetch("name")]
            XCTAssertEqual(try context.fetch(untyped).compactMap { ($0 as? NSDictionary)?["name"] as? String }.sorted(), ["Ada", "Rex"])
            // And the batch delete Core Data code builds from one.
            let delete = BatchDeleteRequest(fetchRequest: FetchRequest<FetchRequestResult>(entityName: "Dog"))
            delete.resultType = .resultTypeCount
            XCTAssertEqual(try context.execute(delete).result as? Int, 2)
        }
    }
}
