import Foundation
import XCTest
@testable import Faultline

/// Key-value coding as Core Data persistence code uses it: key paths through relationships, the entity's static
/// insert, and a context's `userInfo` keyed by any hashable value.
final class KeyPathAccessTests: XCTestCase {
    func testKeyPathsFollowRelationships() throws {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let owner = EntityDescription.insertNewObject(forEntityName: "Person", into: context)
            try owner.setValue("Ann", forKey: "name")
            let dog = EntityDescription.insertNewObject(forEntityName: "Dog", into: context)
            try dog.setValue("Rex", forKey: "name")
            try dog.setValue(owner, forKey: "owner")
            for distance in [1.0, 2.5] {
                let walk = EntityDescription.insertNewObject(forEntityName: "Walk", into: context)
                try walk.setValue(distance, forKey: "distance")
                try walk.setValue(dog, forKey: "dog")
            }
            // Through to-ones: one value; through a to-many: one value per member.
            XCTAssertEqual(dog.value(forKeyPath: "owner.name") as? String, "Ann")
            XCTAssertEqual(dog.value(forKeyPath: "name") as? String, "Rex")
            XCTAssertEqual((dog.value(forKeyPath: "walks.distance") as? [Any])?.compactMap { $0 as? Double }, [1.0, 2.5])
            XCTAssertEqual((owner.value(forKeyPath: "dogs.walks.distance") as? [Any])?.count, 2)
            XCTAssertNil(dog.value(forKeyPath: "owner.nothing"))
            XCTAssertNil(dog.value(forKeyPath: "collar.dog"), "a nil step gives nil")
            // Setting through a to-one changes the object at its end.
            try dog.setValue("Anna", forKeyPath: "owner.name")
            XCTAssertEqual(owner.value(forKey: "name") as? String, "Anna")
            XCTAssertThrowsError(try dog.setValue("x", forKeyPath: "collar.name")) { error in
                XCTAssertTrue("\(error)".contains("'collar' leads to no object"), "\(error)")
            }
            try context.save()
            // userInfo takes any hashable key, as Core Data's dictionary does.
            context.userInfo["user"] = owner.objectID
            context.userInfo[7] = "seven"
            XCTAssertEqual(context.userInfo["user"] as? ManagedObjectID, owner.objectID)
            XCTAssertEqual(context.userInfo[7] as? String, "seven")
        }
    }
}
