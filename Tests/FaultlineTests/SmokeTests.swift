import XCTest
@testable import Faultline

final class SmokeTests: XCTestCase {
    func testDogWalkRoundTrip() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let (coordinator, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Fido", forKey: "name")
            for i in 0..<3 {
                let walk = try context.insertNewObject(forEntityName: "Walk")
                try walk.setValue(Date(timeIntervalSinceReferenceDate: Double(i)), forKey: "date")
                try walk.setValue(dog, forKey: "dog")
            }
            XCTAssertEqual(dog.count(forRelationship: "walks"), 3)
            try context.save()
            XCTAssertFalse(dog.objectID.isTemporaryID)
        }
        let second = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try second.performAndWait {
            let dogs = try second.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
            XCTAssertEqual(dogs.count, 1)
            XCTAssertEqual(dogs[0].value(forKey: "name") as? String, "Fido")
            let walks = dogs[0].objects(forRelationship: "walks")
            XCTAssertEqual(walks.map { ($0.value(forKey: "date") as! Date).timeIntervalSinceReferenceDate }, [0, 1, 2])
        }
    }
}
