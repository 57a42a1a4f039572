import Foundation
import XCTest
@testable import Faultline

/// `FetchRequest` is a class, as Core Data's `NSFetchRequest`: helpers configure the request they are given, a `let`
/// request can be changed, a fetch reads it once, and `copy()` makes an independent one.
final class FetchRequestClassTests: XCTestCase {
    /// The way repositories write it: a helper takes a request and configures it.
    func configure(_ request: FetchRequest<ManagedObject>, limit: Int) {
        request.fetchLimit = limit
        request.sortDescriptors = [FetchSortDescriptor(keyPath: "name")]
    }

    func testRequestsAreConfiguredByReference() throws {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for name in ["Rex", "Ada", "Bo"] {
                try EntityDescription.insertNewObject(forEntityName: "Dog", into: context).setValue(name, forKey: "name")
            }
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "Dog")
            configure(request, limit: 2)
            XCTAssertEqual(request.fetchLimit, 2, "the helper changed the caller's request")
            XCTAssertEqual(try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }, ["Ada", "Bo"])
            // A copy is independent of the original, both ways.
            let copy = request.copy()
            copy.fetchLimit = 0
            copy.predicate = try ObjectPredicate(parsing: "name BEGINSWITH 'R'")
            XCTAssertEqual(request.fetchLimit, 2)
            XCTAssertNil(request.predicate)
            XCTAssertEqual(try context.fetch(copy).count, 1)
            XCTAssertEqual(try context.count(for: request), 2)
            // A fetch reads the request when it starts: changing it afterwards changes the next fetch only.
            let first = try context.fetchObjectIDs(request)
            request.fetchLimit = 1
            XCTAssertEqual(first.count, 2)
            XCTAssertEqual(try context.fetchObjectIDs(request).count, 1)
        }
    }
}
