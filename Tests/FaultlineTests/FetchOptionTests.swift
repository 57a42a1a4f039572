import Foundation
import XCTest
@testable import Faultline

/// Employee/Department of Apple's guide (seed 000, L4081–4155).
func makeCompanyModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(name: "Department", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "employees", destination: "Employee", inverse: "department", isToMany: true),
        ]),
        EntityDescription(name: "Employee", properties: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "salary", type: .integer32),
            RelationshipDescription(name: "department", destination: "Department", inverse: "employees"),
            RelationshipDescription(name: "projects", destination: "Project", inverse: "members", isToMany: true),
        ]),
        EntityDescription(name: "Project", properties: [
            AttributeDescription(name: "title", type: .string),
            RelationshipDescription(name: "members", destination: "Employee", inverse: "projects", isToMany: true),
        ]),
    ])
}

/// Six employees in three departments, each on one or two projects; returns a cold reader (empty row cache).
func seedCompany(in dir: TemporaryDirectory) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let model = try makeCompanyModel()
    let (_, writer) = try makeStack(model, in: dir)
    try writer.performAndWait {
        let departments = try ["Sales", "Legal", "Tech"].map { name -> ManagedObject in
            let d = try writer.insertNewObject(forEntityName: "Department")
            try d.setValue(name, forKey: "name")
            return d
        }
        let projects = try ["Apollo", "Gemini"].map { title -> ManagedObject in
            let p = try writer.insertNewObject(forEntityName: "Project")
            try p.setValue(title, forKey: "title")
            return p
        }
        for i in 0..<6 {
            let e = try writer.insertNewObject(forEntityName: "Employee")
            try e.setValue("E\(i)", forKey: "name")
            try e.setValue(1000 * (i + 1), forKey: "salary")
            try e.setValue(departments[i % 3], forKey: "department")
            try e.setValue(i % 2 == 0 ? [projects[0]] : projects, forKey: "projects")
        }
        try writer.save()
    }
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
    return (coordinator, ManagedObjectContext(.privateQueue, coordinator: coordinator))
}

final class FetchOptionTests: XCTestCase {
    func departmentNames(_ context: ManagedObjectContext, _ request: FetchRequest<ManagedObject>, batchFault: Bool = false) throws -> [String] {
        try context.performAndWait {
            let employees = try context.fetch(request)
            if batchFault { try context.fulfillFaults(for: employees.compactMap { $0.value(forKey: "department") as? ManagedObject }) }
            return employees.map { ($0.value(forKey: "department") as? ManagedObject)?.value(forKey: "name") as? String ?? "?" }
        }
    }

    func testPrefetchingAndBatchFaultingTurnNPlusOneIntoTwoRoundTrips() throws {
        let request = FetchRequest<ManagedObject>(entityName: "Employee", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
        let expected = ["Sales", "Legal", "Tech", "Sales", "Legal", "Tech"]
        do {
            let dir = TemporaryDirectory()
            let (coordinator, context) = try seedCompany(in: dir)
            let before = coordinator.statistics.statementsExecuted
            XCTAssertEqual(try departmentNames(context, request), expected)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 4, "one fetch, then one fault per department")
        }
        do {
            let dir = TemporaryDirectory()
            let (coordinator, context) = try seedCompany(in: dir)
            let prefetching = request.copy()
            prefetching.relationshipKeyPathsForPrefetching = ["department"]
            let before = coordinator.statistics.statementsExecuted
            XCTAssertEqual(try departmentNames(context, prefetching), expected)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 2, "one fetch and one prefetch")
        }
        do {
            let dir = TemporaryDirectory()
            let (coordinator, context) = try seedCompany(in: dir)
            let before = coordinator.statistics.statementsExecuted
            XCTAssertEqual(try departmentNames(context, request, batchFault: true), expected)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 2, "one fetch and one batch fault")
        }
    }

    func testToManyAndNestedPrefetching() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try seedCompany(in: dir)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Department", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            request.relationshipKeyPathsForPrefetching = ["employees.projects"]
            let before = coordinator.statistics.statementsExecuted
            let departments = try context.fetch(request)
            // departments, their employees (one statement), the join rows and the projects (two statements).
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 4)
            let snapshot = coordinator.statistics.statementsExecuted
            let titles = departments.map { d in
                d.objects(forRelationship: "employees").map { e in
                    e.objects(forRelationship: "projects").compactMap { $0.value(forKey: "title") as? String }.sorted().joined(separator: "+")
                }.sorted()
            }
            XCTAssertEqual(titles, [["Apollo", "Apollo+Gemini"], ["Apollo", "Apollo+Gemini"], ["Apollo", "Apollo+Gemini"]])
            XCTAssertEqual(coordinator.statistics.statementsExecuted, snapshot, "everything was prefetched")
        }
    }

    func testBatchedFetchReadsIDsThenOneStatementPerBatch() throws {
        let dir = TemporaryDirectory()
        let model = try makeCityModel()
        let (_, writer) = try makeStack(model, in: dir)
        try writer.performAndWait {
            for i in 0..<50 {
                let person = try writer.insertNewObject(forEntityName: "Person")
                try person.setValue("p\(i)", forKey: "name")
                try person.setValue(i, forKey: "age")
            }
            try writer.save()
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Person", predicate: try ObjectPredicate(parsing: "age >= 5"),
                                                      sortDescriptors: [FetchSortDescriptor(keyPath: "age", ascending: false)])
            request.fetchBatchSize = 20
            var count = coordinator.statistics.statementsExecuted
            let people = try context.fetch(request)
            XCTAssertEqual(people.count, 45)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - count, 1, "the first query reads IDs only")
            XCTAssertEqual(coordinator.statistics.rowCacheCount, 0, "and no row")
            XCTAssertTrue(people.allSatisfy(\.isFault))
            count = coordinator.statistics.statementsExecuted
            XCTAssertEqual(people[0].value(forKey: "age") as? Int16, 49)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - count, 1, "touching element 0 loads its batch")
            XCTAssertEqual(people.prefix(20).filter(\.isFault).count, 0)
            XCTAssertEqual(people.dropFirst(20).filter(\.isFault).count, 25)
            XCTAssertEqual(people.prefix(20).map { $0.value(forKey: "age") as? Int16 }, (30...49).reversed().map { Int16($0) })
            XCTAssertEqual(coordinator.statistics.statementsExecuted - count, 1)
            XCTAssertEqual(people[44].value(forKey: "age") as? Int16, 5)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - count, 2, "the last batch, with one statement")
        }
    }

    func testWithoutPropertyValuesEachFaultReadsItsOwnRow() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try seedCompany(in: dir)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.includesPropertyValues = false
            let before = coordinator.statistics
            let employees = try context.fetch(request)
            XCTAssertEqual(employees.count, 6)
            _ = employees.map { $0.value(forKey: "name") }
            let after = coordinator.statistics
            XCTAssertEqual(after.statementsExecuted - before.statementsExecuted, 7, "one IDs query, then six single-row SELECTs (seed 001 F12)")
            XCTAssertEqual(after.rowCacheMisses - before.rowCacheMisses, 6)
        }
    }

    func testObjectIDsResultAndFaultsRefreshedByFetchWithValues() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try seedCompany(in: dir)
        try context.performAndWait {
            let ids = try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "Employee", predicate: try ObjectPredicate(parsing: "salary > 3000")))
            XCTAssertEqual(ids.count, 3)
            XCTAssertEqual(coordinator.statistics.rowCacheCount, 0, "IDs only: no row read")
            XCTAssertTrue(context.registeredObjects.isEmpty)
            // `self IN %@` with values turns registered faults into objects in one statement.
            let faults = ids.map(context.object(with:))
            XCTAssertTrue(faults.allSatisfy(\.isFault))
            let request = FetchRequest<ManagedObject>(entityName: "Employee", predicate: try ObjectPredicate(parsing: "self IN %@", ids))
            request.returnsObjectsAsFaults = false
            let before = coordinator.statistics.statementsExecuted
            XCTAssertEqual(try context.fetch(request).count, 3)
            XCTAssertTrue(faults.allSatisfy { !$0.isFault })
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 1)
        }
    }

    /// A context remembers the entity it fetched last: every kind of fetch must still use the entity its request
    /// names (by its text, not its storage), and an unknown name must still be refused after a known one.
    func testEachFetchUsesTheEntityItsRequestNames() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try seedCompany(in: dir)
        try context.performAndWait {
            let built = String(["Depart", "ment"].joined())
            for (name, count) in [("Employee", 6), (built, 3), ("Project", 2), ("Employee", 6), ("Department", 3)] {
                let request = FetchRequest<ManagedObject>(entityName: name)
                XCTAssertEqual(try context.fetch(request).map(\.entity.name), Array(repeating: name, count: count))
                XCTAssertEqual(try context.fetchObjectIDs(request).count, count, name)
                XCTAssertEqual(try context.count(for: request), count, name)
                let dictionaries = request.copy()
                dictionaries.propertiesToFetch = [PropertyToFetch(.count, "*", as: "n")]
                XCTAssertEqual(try context.fetchDictionaries(dictionaries).first?["n"] as? Int64, Int64(count), name)
            }
            for fetch in [{ _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Employees")) },
                          { _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "")) }] {
                XCTAssertThrowsError(try fetch()) { error in
                    guard case FetchError.unknownEntity = error else { return XCTFail("\(error)") }
                }
            }
            // `FetchRequest<ManagedObject>()` compiles (Swift cannot exclude one class from a generic initializer):
            // it names no entity, and the error says so.
            XCTAssertThrowsError(try context.fetch(FetchRequest<ManagedObject>())) { error in
                XCTAssertTrue("\(error)".hasSuffix("a request for ManagedObject needs an entity: FetchRequest(entityName:)"), "\(error)")
            }
        }
    }
}

final class DictionaryFetchTests: XCTestCase {
    func testAggregatesGroupingHavingDistinctAndObjectIDs() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try seedCompany(in: dir)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Employee", sortDescriptors: [FetchSortDescriptor(keyPath: "department.name")])
            request.propertiesToFetch = [PropertyToFetch("department.name"), PropertyToFetch(.avg, "salary", as: "average"),
                                         PropertyToFetch(.count, "*", as: "people"), try PropertyToFetch(parsing: "max(salary) as top")]
            request.propertiesToGroupBy = ["department.name"]
            let before = coordinator.statistics.statementsExecuted
            let rows = try context.fetchDictionaries(request)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before, 1, "aggregates are computed by SQLite, in one statement")
            XCTAssertTrue(context.registeredObjects.isEmpty, "no object is made")
            XCTAssertEqual(rows.map { $0["department.name"] as? String }, ["Legal", "Sales", "Tech"])
            XCTAssertEqual(rows.map { $0["average"] as? Double }, [3500, 2500, 4500])
            XCTAssertEqual(rows.map { $0["people"] as? Int64 }, [2, 2, 2])
            XCTAssertEqual(rows.map { ($0["top"] as? Int32).map(Int.init) }, [5000, 4000, 6000])
            // HAVING may name an aggregate column.
            request.havingPredicate = try ObjectPredicate(parsing: "average > %d", 3000)
            XCTAssertEqual(try context.fetchDictionaries(request).map { $0["department.name"] as? String }, ["Legal", "Tech"])

            let distinct = FetchRequest<ManagedObject>(entityName: "Employee", predicate: try ObjectPredicate(parsing: "salary >= 2000"))
            distinct.propertiesToFetch = [PropertyToFetch("department")]
            distinct.returnsDistinctResults = true
            let departments = try context.fetchDictionaries(distinct).compactMap { $0["department"] as? ManagedObjectID }
            XCTAssertEqual(departments.count, 3)
            XCTAssertEqual(Set(departments.map { $0.entity.name }), ["Department"])
            XCTAssertEqual(try context.existingObject(with: departments[0]).entity.name, "Department")

            let all = FetchRequest<ManagedObject>(entityName: "Employee", sortDescriptors: [FetchSortDescriptor(keyPath: "salary", ascending: false)])
            all.fetchLimit = 2
            XCTAssertEqual(try context.fetchDictionaries(all).map { $0["name"] as? String }, ["E5", "E4"], "all stored attributes by default")
            all.propertiesToFetch = [PropertyToFetch("nonsense")]
            XCTAssertThrowsError(try context.fetchDictionaries(all)) { error in
                XCTAssertEqual("\(error)", "fetch request: entity 'Employee' has no key 'nonsense'")
            }
        }
        XCTAssertThrowsError(try PropertyToFetch(parsing: "median(salary)")) { error in
            XCTAssertEqual("\(error)", "unknown function 'median' in 'median(salary)' (known: count, sum, avg, min, max)")
        }
    }
}
