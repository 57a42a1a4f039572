import Foundation
import XCTest
@testable import Faultline

/// Typed subclass used by the tests: natural Swift properties over typed keys.
final class Dog: ManagedObject {
    static let nameKey = Attribute<String?>("name")
    static let walksKey = ToMany<Walk>("walks")
    static let ownerKey = ToOne<ManagedObject>("owner")

    var name: String? {
        get { self[Dog.nameKey] }
        set { self[Dog.nameKey] = newValue }
    }
    var walks: [Walk] {
        get { self[Dog.walksKey] }
        set { self[Dog.walksKey] = newValue }
    }
}

final class Walk: ManagedObject {
    static let dateKey = Attribute<Date?>("date")
    static let distanceKey = Attribute<Double>("distance")
    static let dogKey = ToOne<Dog>("dog")

    var date: Date? {
        get { self[Walk.dateKey] }
        set { self[Walk.dateKey] = newValue }
    }
    var distance: Double {
        get { self[Walk.distanceKey] }
        set { self[Walk.distanceKey] = newValue }
    }
    var dog: Dog? {
        get { self[Walk.dogKey] }
        set { self[Walk.dogKey] = newValue }
    }
}

final class FaultingTests: XCTestCase {
    func model() throws -> ManagedObjectModel {
        let model = try makeTestModel()
        try model.register(Dog.self, forEntityName: "Dog")
        try model.register(Walk.self, forEntityName: "Walk")
        return model
    }

    /// Saves one dog with `walks` walks through a first context; returns the dog's ID.
    func seed(_ coordinator: PersistentStoreCoordinator, walks: Int) throws -> ManagedObjectID {
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            let dog = Dog(context: context)
            dog.name = "Fido"
            for i in 0..<walks {
                let walk = Walk(context: context)
                walk.date = Date(timeIntervalSinceReferenceDate: Double(i * 60))
                walk.distance = Double(i)
                walk.dog = dog
            }
            try context.save()
            return dog.objectID
        }
    }

    func testObjectIDsAreTemporaryUntilSavedThenCarryTheStoreURI() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try model(), in: dir)
        try context.performAndWait {
            let dog = Dog(context: context)
            XCTAssertTrue(dog.objectID.isTemporaryID)
            XCTAssertTrue(dog.objectID.uriString.hasPrefix("x-coredata:///Dog/t"))
            XCTAssertTrue(dog.isInserted)
            try context.save()
            XCTAssertFalse(dog.objectID.isTemporaryID)
            XCTAssertEqual(dog.objectID.uriString, "x-coredata://\(coordinator.storeIdentifier!)/Dog/p1")
            XCTAssertEqual(context.objectID(forURIString: dog.objectID.uriString), dog.objectID)
            XCTAssertEqual(dog.objectID.uriRepresentation().absoluteString, dog.objectID.uriString)
            XCTAssertFalse(dog.isInserted)
            let second = Dog(context: context)
            try context.save()
            XCTAssertEqual(second.objectID.primaryKey, 2, "keys come from Z_PRIMARYKEY.Z_MAX + 1")
        }
    }

    func testObjectIDsFromURIStringsRejectMalformedForeignAndTemporaryOnes() throws {
        let dir = TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Hünd", properties: [AttributeDescription(name: "n", type: .integer64)])])
        let (coordinator, context) = try makeStack(model, in: dir)
        let store = try XCTUnwrap(coordinator.storeIdentifier)
        try context.performAndWait {
            let dog = ManagedObject(entity: try XCTUnwrap(model.entity(named: "Hünd")), insertInto: context)
            XCTAssertNil(context.objectID(forURIString: dog.objectID.uriString), "temporary IDs name no row")
            try context.save()
            let uri = dog.objectID.uriString
            XCTAssertEqual(uri, "x-coredata://\(store)/H%C3%BCnd/p1")
            XCTAssertEqual(context.objectID(forURIString: uri), dog.objectID)
            XCTAssertEqual(context.objectID(forURIString: "x-coredata://\(store)/Hünd/p1"), dog.objectID)
            XCTAssertEqual(context.objectID(forURIString: "x-coredata://\(store)/H%C3%BCnd/p9223372036854775807")?.primaryKey, Int64.max)
            for bad in ["", "x-coredata://", "x-coredata://\(store)", "x-coredata://\(store)/H%C3%BCnd", "x-coredata://\(store)/H%C3%BCnd/",
                        "x-coredata://\(store)/H%C3%BCnd/p", "x-coredata://\(store)/H%C3%BCnd/p0", "x-coredata://\(store)/H%C3%BCnd/p-1",
                        "x-coredata://\(store)/H%C3%BCnd/p+1", "x-coredata://\(store)/H%C3%BCnd/p1/", "x-coredata://\(store)/H%C3%BCnd/t1",
                        "x-coredata://\(store)/H%C3%BCnd/p9223372036854775808", "x-coredata://\(store)/H%ZZnd/p1",
                        "x-coredata://\(store)/Dog/p1", "x-coredata://\(store)x/H%C3%BCnd/p1", "x-coredata:///H%C3%BCnd/p1",
                        "http://\(store)/H%C3%BCnd/p1"] {
                XCTAssertNil(context.objectID(forURIString: bad), bad)
            }
        }
    }

    /// A typed request keeps its options through the fetch, and one whose entity's objects are of another class
    /// is refused.
    func testTypedRequestsKeepTheirOptionsAndRefuseAnotherEntitysClass() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try model(), in: dir)
        _ = try seed(coordinator, walks: 5)
        try context.performAndWait {
            let walks = FetchRequest<Walk>(entityName: "Walk", predicate: try ObjectPredicate(parsing: "distance >= 1"),
                                           sortDescriptors: [FetchSortDescriptor(keyPath: "distance", ascending: false)])
            walks.fetchLimit = 2
            walks.fetchOffset = 1
            XCTAssertEqual(try context.fetch(walks).map(\.distance), [3, 2])
            walks.includesSubentities = false
            XCTAssertEqual(try context.count(for: walks), 2, "a count honours the limit and offset, as Core Data's does")
            XCTAssertThrowsError(try context.fetch(FetchRequest<Dog>(entityName: "Walk"))) { error in
                guard case FetchError.resultTypeMismatch(let entity, let expected, let actual, let unresolved)? = error as? FetchError else {
                    return XCTFail("\(error)")
                }
                XCTAssertEqual(entity, "Walk")
                XCTAssertTrue(expected.hasSuffix("Dog"), expected)
                XCTAssertTrue(actual.hasSuffix("Walk"), actual)
                XCTAssertNil(unresolved)
            }
        }
    }

    func testUniquingGivesOneInstancePerIDPerContext() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _) = try makeStack(try model(), in: dir)
        let id = try seed(coordinator, walks: 3)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let a = context.object(with: id)
            let fetched = try context.fetch(FetchRequest<Dog>())
            XCTAssertTrue(fetched[0] === a)
            XCTAssertTrue(try context.existingObject(with: id) === a)
            XCTAssertTrue(context.registeredObject(for: id) === a)
            let walks = fetched[0].walks
            XCTAssertTrue(walks.allSatisfy { $0.dog === a }, "navigating back gives the same instance")
            let walksAgain = try context.fetch(FetchRequest<Walk>())
            XCTAssertEqual(Set(walksAgain.map(ObjectIdentifier.init)), Set(walks.map(ObjectIdentifier.init)))
        }
        let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        other.performAndWait {
            XCTAssertEqual(other.object(with: id).objectID, id)
        }
    }

    func testFaultFiresOnceAndLoadsAllAttributesWithOneStatement() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _) = try makeStack(try model(), in: dir)
        _ = try seed(coordinator, walks: 3)
        // A fresh coordinator has an empty row cache: the fault must go to SQLite.
        let cold = PersistentStoreCoordinator(managedObjectModel: try model())
        try cold.addPersistentStore(at: dir.file("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: cold)
        let walkID = ManagedObjectID(entity: cold.managedObjectModel.entity(named: "Walk")!, key: 2, storeIdentifier: cold.storeIdentifier)
        context.performAndWait {
            let walk = context.object(with: walkID) as! Walk
            XCTAssertTrue(walk.isFault)
            let before = cold.statistics
            XCTAssertEqual(walk.distance, 1)
            XCTAssertFalse(walk.isFault)
            let after = cold.statistics
            XCTAssertEqual(after.statementsExecuted - before.statementsExecuted, 1, "one SELECT fulfils the fault")
            XCTAssertEqual(after.rowCacheMisses - before.rowCacheMisses, 1)
            // Every stored attribute came with it: no more SQL for the others, nor for reading again.
            XCTAssertEqual(walk.date, Date(timeIntervalSinceReferenceDate: 60))
            XCTAssertNotNil(walk.dog)
            XCTAssertEqual(walk.distance, 1)
            XCTAssertEqual(cold.statistics.statementsExecuted, after.statementsExecuted)
        }
    }

    func testRowCacheHitFulfilsAFaultWithoutSQL() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _) = try makeStack(try model(), in: dir)
        _ = try seed(coordinator, walks: 5)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        // Held while the second context reads: an object the program drops lets go of its snapshot.
        var walks: [Walk] = []
        try context.performAndWait {
            // The fetch puts the rows in the row cache; objects come back as faults.
            walks = try context.fetch(FetchRequest<Walk>())
            XCTAssertEqual(walks.count, 5)
            XCTAssertTrue(walks.allSatisfy(\.isFault))
            let before = coordinator.statistics
            XCTAssertEqual(walks.map(\.distance), [0, 1, 2, 3, 4])
            let after = coordinator.statistics
            XCTAssertEqual(after.statementsExecuted, before.statementsExecuted, "row-cache hits issue no SQL")
            XCTAssertEqual(after.rowCacheHits - before.rowCacheHits, 5)
            XCTAssertEqual(after.rowCacheMisses, before.rowCacheMisses)
        }
        // Another context on the same coordinator shares the row cache.
        let second = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        second.performAndWait {
            let walk = second.object(with: ManagedObjectID(entity: coordinator.managedObjectModel.entity(named: "Walk")!, key: 3, storeIdentifier: coordinator.storeIdentifier)) as! Walk
            let before = coordinator.statistics.statementsExecuted
            XCTAssertEqual(walk.distance, 2)
            XCTAssertEqual(coordinator.statistics.statementsExecuted, before)
        }
        withExtendedLifetime(walks) {}
    }

    func testToOneFaultResolvesWithoutSQLAndToManyFiresOnce() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _) = try makeStack(try model(), in: dir)
        _ = try seed(coordinator, walks: 4)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let walks = try context.fetch(FetchRequest<Walk>())
            _ = walks[0].distance
            var before = coordinator.statistics.statementsExecuted
            let dog = try XCTUnwrap(walks[0].dog)
            XCTAssertEqual(coordinator.statistics.statementsExecuted, before, "a to-one gives a fault, no SQL")
            XCTAssertTrue(dog.isFault)
            _ = dog.name
            before = coordinator.statistics.statementsExecuted
            XCTAssertEqual(dog.count(of: Dog.walksKey), 4)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 1, "the to-many fault fires with one SELECT")
            XCTAssertEqual(dog.walks.count, 4)
            XCTAssertEqual(dog.walks.map(\.distance), [0, 1, 2, 3])
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 1, "and only once")
        }
    }

    func testRowCacheReleasesRowsNobodyHolds() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _) = try makeStack(try model(), in: dir)
        _ = try seed(coordinator, walks: 10)
        var context: ManagedObjectContext? = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        // The program holds each context's objects (a context holds unchanged objects weakly).
        var firstWalks: [Walk]? = try context!.performAndWait { try context!.fetch(FetchRequest<Walk>()) }
        let held = coordinator.statistics.rowCacheCount
        XCTAssertGreaterThanOrEqual(held, 10)
        let second = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let secondWalks = try second.performAndWait { try second.fetch(FetchRequest<Walk>()) }
        context = nil
        firstWalks = nil
        XCTAssertNil(firstWalks)
        XCTAssertEqual(coordinator.statistics.rowCacheCount, held, "the second context still holds the walks")
        second.reset()
        XCTAssertEqual(coordinator.statistics.rowCacheCount, held - 10, "the walks are released when no context holds them")
        withExtendedLifetime(secondWalks) {}
    }

    func testExistingObjectForAMissingRowThrows() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try model(), in: dir)
        let id = ManagedObjectID(entity: coordinator.managedObjectModel.entity(named: "Dog")!, key: 99, storeIdentifier: coordinator.storeIdentifier)
        try context.performAndWait {
            XCTAssertThrowsError(try context.existingObject(with: id)) { error in
                XCTAssertEqual("\(error)", "object \(id.uriString) no longer exists in the store")
            }
            let fault = context.object(with: id) as! Dog
            XCTAssertNil(fault.name)
            XCTAssertNotNil(context.lastFaultError)
        }
    }

    func testFetchByIDsWithLimitAndOffsetAndPendingChanges() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _) = try makeStack(try model(), in: dir)
        _ = try seed(coordinator, walks: 6)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let page = FetchRequest<Walk>()
            page.fetchLimit = 2
            page.fetchOffset = 3
            XCTAssertEqual(try context.fetch(page).map(\.distance), [3, 4])
            page.fetchLimit = 0
            XCTAssertEqual(try context.fetch(page).map(\.distance), [3, 4, 5], "an offset without a limit")
            let all = try context.fetch(FetchRequest<Walk>())
            let byID = FetchRequest<Walk>()
            byID.objectIDs = [all[5].objectID, all[1].objectID]
            XCTAssertEqual(Set(try context.fetch(byID).map(\.distance)), [1, 5])
            // Pending changes: a new walk is included, a deleted one left out.
            let extra = Walk(context: context)
            extra.distance = 99
            context.delete(all[0])
            let pending = try context.fetch(FetchRequest<Walk>()).map(\.distance)
            XCTAssertEqual(pending, [1, 2, 3, 4, 5, 99])
            let storedOnly = FetchRequest<Walk>()
            storedOnly.includesPendingChanges = false
            XCTAssertEqual(try context.fetch(storedOnly).count, 6)
            XCTAssertThrowsError(try context.fetch(FetchRequest<Dog>(entityName: "Walk"))) { error in
                XCTAssertEqual("\(error)", "fetch request: objects of 'Walk' are Walk, not Dog — register Dog for it with model.register(_:forEntityName:), or give the model its class name")
            }
        }
    }

    func testTemporaryIDFromAnotherContextIsNotFound() throws {
        let dir = TemporaryDirectory()
        let (coordinator, first) = try makeStack(try model(), in: dir)
        let temporary = first.performAndWait { Dog(context: first).objectID }
        let second = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try second.performAndWait {
            XCTAssertNil(second.registeredObject(for: temporary))
            XCTAssertThrowsError(try second.existingObject(with: temporary))
            let object = second.object(with: temporary) as! Dog
            XCTAssertNil(object.name)
            XCTAssertTrue(second.registeredObjects.isEmpty, "nothing was registered for it")
        }
    }

    func testSubentitiesShareTheRootTableAndFetchPolymorphically() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        try context.performAndWait {
            let europe = try context.insertNewObject(forEntityName: "Continent")
            try europe.setValue(150, forKey: "code")
            let france = try context.insertNewObject(forEntityName: "Country")
            try france.setValue(250, forKey: "code")
            try france.setValue(europe, forKey: "continent")
            XCTAssertThrowsError(try context.insertNewObject(forEntityName: "Region"))
            try context.save()
            context.reset()
            let regions = try context.fetch(FetchRequest<ManagedObject>(entityName: "Region"))
            XCTAssertEqual(Set(regions.map(\.entity.name)), ["Continent", "Country"])
            let onlyCountries = FetchRequest<ManagedObject>(entityName: "Country")
            onlyCountries.includesSubentities = false
            let countries = try context.fetch(onlyCountries)
            XCTAssertEqual(countries.count, 1)
            let continent = try XCTUnwrap(countries[0].value(forKey: "continent") as? ManagedObject)
            XCTAssertEqual(continent.entity.name, "Continent")
            XCTAssertEqual(continent.value(forKey: "code") as? Int32, 150)
            XCTAssertEqual(continent.objects(forRelationship: "countries").first.map(ObjectIdentifier.init), ObjectIdentifier(countries[0]))
        }
    }
}
