import Foundation
import XCTest
@testable import Faultline

/// The City/Person model of the objc.io book's predicate chapter.
func makeCityModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(name: "City", properties: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "population", type: .integer64),
            AttributeDescription(name: "founded", type: .date),
            RelationshipDescription(name: "mayor", destination: "Person", inverse: "mayorOf"),
            RelationshipDescription(name: "residents", destination: "Person", inverse: "city", isToMany: true),
            RelationshipDescription(name: "visitors", destination: "Person", inverse: "citiesVisited", isToMany: true),
        ]),
        EntityDescription(name: "Person", properties: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "age", type: .integer16),
            AttributeDescription(name: "carsOwnedCount", type: .integer16),
            AttributeDescription(name: "hidden", type: .boolean, isOptional: false, defaultValue: false),
            RelationshipDescription(name: "city", destination: "City", inverse: "residents"),
            RelationshipDescription(name: "mayorOf", destination: "City", inverse: "mayor"),
            RelationshipDescription(name: "citiesVisited", destination: "City", inverse: "visitors", isToMany: true),
        ]),
    ])
}

final class PredicateFetchTests: XCTestCase {
    var dir: TemporaryDirectory!
    var coordinator: PersistentStoreCoordinator!
    var context: ManagedObjectContext!

    override func setUpWithError() throws {
        dir = TemporaryDirectory()
        (coordinator, context) = try makeStack(try makeCityModel(), in: dir)
    }

    // XCTest keeps each test case object until the run ends; without this, every test's folder would stay behind.
    override func tearDown() {
        context = nil
        coordinator = nil
        dir = nil
    }

    @discardableResult
    func person(_ name: String, age: Int?, cars: Int? = nil, city: ManagedObject? = nil) throws -> ManagedObject {
        let p = try context.insertNewObject(forEntityName: "Person")
        try p.setValue(name, forKey: "name")
        try p.setValue(age, forKey: "age")
        try p.setValue(cars, forKey: "carsOwnedCount")
        try p.setValue(city, forKey: "city")
        return p
    }

    func city(_ name: String, population: Int = 0) throws -> ManagedObject {
        let c = try context.insertNewObject(forEntityName: "City")
        try c.setValue(name, forKey: "name")
        try c.setValue(population, forKey: "population")
        return c
    }

    func names(_ entity: String, _ format: String, _ args: Any?..., sort: [FetchSortDescriptor] = [FetchSortDescriptor(keyPath: "name")]) throws -> [String] {
        let predicate = try ObjectPredicate(parsing: format, argumentArray: args)
        return try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: entity, predicate: predicate, sortDescriptors: sort))
                .map { $0.value(forKey: "name") as? String ?? "?" }
        }
    }

    func testSubqueryMatchesCitiesWithNoResidentsAndDiffersFromAnyAndAny() throws {
        try context.performAndWait {
            let empty = try city("Emptyville")
            let old = try city("Oldtown")
            try person("Olga", age: 80, city: old)
            let mixed = try city("Mixton")
            try person("A", age: 24, cars: 0, city: mixed)
            try person("B", age: 30, cars: 2, city: mixed)
            _ = empty
            try context.save()
        }
        // seed 001: SUBQUERY(residents, $x, $x.age >= 36).@count == 0 — a city with no residents matches.
        XCTAssertEqual(try names("City", "(SUBQUERY(%K, $x, $x.%K >= %lu).@count == 0)", "residents", "age", UInt(36)), ["Emptyville", "Mixton"])
        // ANY … && ANY … may be satisfied by different residents; the SUBQUERY needs one resident for both.
        XCTAssertEqual(try names("City", "ANY residents.age < 25 && ANY residents.carsOwnedCount == 2"), ["Mixton"])
        XCTAssertEqual(try names("City", "SUBQUERY(residents, $x, $x.age < 25 AND $x.carsOwnedCount == 2).@count != 0"), [])
        XCTAssertEqual(try names("City", "residents.@count == 2"), ["Mixton"])
        XCTAssertEqual(try names("City", "ALL residents.age > 25"), ["Emptyville", "Oldtown"])
        XCTAssertEqual(try names("City", "NONE residents.age > 25"), ["Emptyville"])
        XCTAssertEqual(try names("City", "residents.@avg.age == 27"), ["Mixton"])
        XCTAssertEqual(try names("City", "residents.@max.age > 50"), ["Oldtown"])
        XCTAssertEqual(try names("Person", "city.name == %@", "Mixton"), ["A", "B"])
    }

    func testBetweenIsInclusiveAndComparisonsAndNil() throws {
        try context.performAndWait {
            for (name, age) in [("a22", 22), ("b23", 23), ("c28", 28), ("d29", 29)] { try person(name, age: age) }
            try person("nobody", age: nil)
            try context.save()
        }
        XCTAssertEqual(try names("Person", "age BETWEEN {23, 28}"), ["b23", "c28"])
        XCTAssertEqual(try names("Person", "age BETWEEN %@", [23, 28]), ["b23", "c28"])
        XCTAssertEqual(try names("Person", "age IN {22, 29, 40}"), ["a22", "d29"])
        XCTAssertEqual(try names("Person", "age == nil"), ["nobody"])
        XCTAssertEqual(try names("Person", "age != nil AND age >= %d", 28), ["c28", "d29"])
        // The nil rule (docs/predicates.md): `!=` does not match nil, in SQL and in memory alike.
        XCTAssertEqual(try names("Person", "age != 23"), ["a22", "c28", "d29"])
        XCTAssertEqual(try names("Person", "age != 23 OR age == nil"), ["a22", "c28", "d29", "nobody"])
        XCTAssertEqual(try names("Person", "NOT (age == 23)"), ["a22", "c28", "d29", "nobody"], "NOT of a comparison with nil (false) is true")
        XCTAssertEqual(try names("Person", "hidden == NO AND age < 23"), ["a22"])
        XCTAssertEqual(try names("Person", "(age * 2) + 1 > 50"), ["c28", "d29"])
    }

    func testStringOperatorsAndFolding() throws {
        try context.performAndWait {
            for name in ["Saint-Étienne", "saint-denis", "Paris", "Pa*ris", "Århus", "Aarhus", "Zürich"] { _ = try city(name) }
            try context.save()
        }
        XCTAssertEqual(try names("City", "name BEGINSWITH[cd] %@", "saint-etienne"), ["Saint-Étienne"])
        XCTAssertEqual(try names("City", "name ==[cd] %@", "SAINT-ETIENNE"), ["Saint-Étienne"])
        XCTAssertEqual(try names("City", "name BEGINSWITH %@", "saint"), ["saint-denis"], "plain comparison is case-sensitive")
        XCTAssertEqual(try names("City", "name BEGINSWITH[c] %@", "saint"), ["Saint-Étienne", "saint-denis"])
        XCTAssertEqual(try names("City", "name ENDSWITH[n] 'ris'"), ["Pa*ris", "Paris"])
        XCTAssertEqual(try names("City", "name CONTAINS 'ri'"), ["Pa*ris", "Paris", "Zürich"])
        XCTAssertEqual(try names("City", "name LIKE 'P?ris'"), ["Paris"])
        XCTAssertEqual(try names("City", "name LIKE 'Pa\\\\*ris'"), ["Pa*ris"], "an escaped * is a literal star")
        XCTAssertEqual(try names("City", "name LIKE[c] '*RIS'"), ["Pa*ris", "Paris"])
        XCTAssertEqual(try names("City", "name MATCHES '[AB]?[ÅA]a?rhus'"), ["Aarhus", "Århus"])
        XCTAssertEqual(try names("City", "name MATCHES[cd] 'zurich'"), ["Zürich"])
        XCTAssertEqual(try names("City", "name BEGINSWITH[cd] ''"), ["Aarhus", "Pa*ris", "Paris", "saint-denis", "Saint-Étienne", "Zürich", "Århus"].sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    func testRelationshipsSelfAndObjects() throws {
        var alice: ManagedObject!
        try context.performAndWait {
            let paris = try city("Paris")
            let rome = try city("Rome")
            alice = try person("Alice", age: 40, city: paris)
            let bob = try person("Bob", age: 20, city: rome)
            try paris.setValue(alice, forKey: "mayor")
            try alice.setValue([rome, paris], forKey: "citiesVisited")
            try bob.setValue([rome], forKey: "citiesVisited")
            try context.save()
        }
        XCTAssertEqual(try names("City", "mayor == %@", alice), ["Paris"])
        XCTAssertEqual(try names("City", "mayor.age > 30"), ["Paris"])
        XCTAssertEqual(try names("City", "mayor == nil"), ["Rome"])
        XCTAssertEqual(try names("City", "visitors CONTAINS %@", alice), ["Paris", "Rome"])
        XCTAssertEqual(try names("City", "%@ IN visitors AND visitors.@count >= 2", alice.objectID), ["Rome"])
        XCTAssertEqual(try names("City", "ANY visitors.age <= %lu", UInt(20)), ["Rome"])
        XCTAssertEqual(try names("Person", "self == %@", alice), ["Alice"])
        XCTAssertEqual(try names("Person", "SELF IN %@", [alice!]), ["Alice"])
        XCTAssertThrowsError(try names("Person", "self == %@", alice.objectID.uriString), "a string is not an object") { error in
            XCTAssertTrue("\(error)".hasPrefix("fetch request: a Person object compared with String value"), "\(error)")
        }
        XCTAssertEqual(try names("Person", "self == CAST(%@, 'NSManagedObjectID')", alice.objectID.uriString), ["Alice"])
        assertTraceFormMatches(try ObjectPredicate(parsing: "self == %@ OR %@ IN visitors", alice.objectID, alice.objectID))
    }

    func testSortDescriptors() throws {
        try context.performAndWait {
            for (name, population) in [("b", 3), ("A", 1), ("é", 2), ("a", 2), ("Z", 5)] { _ = try city(name, population: population) }
            try context.save()
        }
        XCTAssertEqual(try names("City", "TRUEPREDICATE"), ["A", "Z", "a", "b", "é"], "binary order")
        XCTAssertEqual(try names("City", "TRUEPREDICATE", sort: [FetchSortDescriptor(keyPath: "name", comparison: .caseInsensitive)]), ["A", "a", "b", "Z", "é"])
        XCTAssertEqual(try names("City", "TRUEPREDICATE", sort: [FetchSortDescriptor(keyPath: "population", ascending: false), FetchSortDescriptor(keyPath: "name")]),
                       ["Z", "b", "a", "é", "A"])
        let before = coordinator.statistics.inMemorySorts
        XCTAssertEqual(try names("City", "TRUEPREDICATE", sort: [FetchSortDescriptor(keyPath: "name", comparison: .localized)]), ["a", "A", "b", "é", "Z"])
        XCTAssertEqual(coordinator.statistics.inMemorySorts, before + 1, "a localized sort is done, and recorded, in memory")
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "name", comparison: .localized)])
            request.fetchLimit = 2
            request.fetchOffset = 1
            XCTAssertEqual(try context.fetch(request).map { $0.value(forKey: "name") as? String }, ["A", "b"], "limit and offset apply after the in-memory sort")
        }
    }

    func testCountReadsNoRows() throws {
        try context.performAndWait {
            for i in 0..<10 { try person("p\(i)", age: i * 10) }
            try context.save()
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let before = coordinator.statistics
            XCTAssertEqual(try reader.count(for: FetchRequest<ManagedObject>(entityName: "Person", predicate: try ObjectPredicate(parsing: "age >= 50"))), 5)
            XCTAssertEqual(coordinator.statistics.statementsExecuted - before.statementsExecuted, 1)
            XCTAssertEqual(coordinator.statistics.rowCacheCount, before.rowCacheCount, "no row was read into the cache")
            XCTAssertTrue(reader.registeredObjects.isEmpty)
        }
    }

    func testRepeatedFetchesCompileOnce() throws {
        let predicate = try ObjectPredicate(parsing: "age > %d AND city.name BEGINSWITH[cd] %@", 3, "pa")
        let request = FetchRequest<ManagedObject>(entityName: "Person", predicate: predicate, sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
        try context.performAndWait {
            let before = coordinator.statistics.predicateCompilations
            for _ in 0..<5 { _ = try context.fetch(request) }
            XCTAssertEqual(coordinator.statistics.predicateCompilations - before, 1)
            _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: try ObjectPredicate(parsing: "age > %d", 4)))
            XCTAssertEqual(coordinator.statistics.predicateCompilations - before, 2, "another request compiles its own")
        }
    }

    /// A template is kept only when rebuilding the bindings from the scanned constants gives the compiled ones back;
    /// constants of another predicate, or too few, do not.
    func testATemplateIsKeptOnlyWhenItRebuildsTheCompiledBindings() throws {
        let entity = try XCTUnwrap(coordinator.managedObjectModel.entity(named: "Person"))
        let predicate = try ObjectPredicate(parsing: "name BEGINSWITH[cd] %@ AND age IN %@ AND city.name LIKE %@", "É*", [1, 2], "P?r*")
        let shape = PredicateShape()
        XCTAssertTrue(shape.scan(entity: entity.entityNumber, predicate: predicate, sortDescriptors: []))
        XCTAssertEqual(shape.constants.count, 3)
        let (filter, parameters) = try FetchFilter.compileWithParameters(predicate: predicate, sortDescriptors: [], entity: entity, storeIdentifier: nil)
        XCTAssertEqual(filter.bindings.count, 4, "a folded GLOB pattern, two ages, a LIKE pattern")
        let template = try XCTUnwrap(FetchFilterTemplate(filter, parameters: parameters, constants: shape.constants, textOf: predicate))
        XCTAssertNotNil(template.text, "kept for a trace that records fetches by shape")
        XCTAssertNil(FetchFilterTemplate(filter, parameters: parameters, constants: shape.constants, textOf: nil)?.text)
        let rebuilt = try template.filter(constants: [.string("é"), .array([.integer(7), .integer(8)]), .string("*a")])
        XCTAssertEqual(rebuilt.condition, filter.condition)
        XCTAssertEqual(rebuilt.bindings.map { "\($0)" }, [#"text("e*")"#, "integer(7)", "integer(8)", #"text("*a")"#])
        XCTAssertNil(FetchFilterTemplate(filter, parameters: parameters,
                                         constants: [.string("x"), .array([.integer(1), .integer(2)]), .string("P?r*")], textOf: predicate))
        XCTAssertNil(FetchFilterTemplate(filter, parameters: parameters, constants: Array(shape.constants.prefix(2)), textOf: predicate))
    }

    func testPendingChangesAreMatchedInMemory() throws {
        try context.performAndWait {
            let old = try person("old", age: 50)
            try person("young", age: 10)
            try context.save()
            try person("new", age: 60)                  // inserted, matches
            try person("newYoung", age: 5)              // inserted, does not match
            try old.setValue(Int16(20), forKey: "age")  // saved as 50 (matches in SQL), now 20
            let predicate = try ObjectPredicate(parsing: "age >= 40")
            let request = FetchRequest<ManagedObject>(entityName: "Person", predicate: predicate, sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            XCTAssertEqual(try context.fetch(request).map { $0.value(forKey: "name") as? String }, ["new"])
            XCTAssertEqual(try context.count(for: request), 1)
            let storedOnly = request.copy()
            storedOnly.includesPendingChanges = false
            XCTAssertEqual(try context.fetch(storedOnly).map { $0.value(forKey: "name") as? String }, ["old"])
        }
    }

    func testBadPredicatesAreClearErrors() throws {
        func error(_ format: String, _ args: Any?...) -> String {
            do {
                let predicate = try ObjectPredicate(parsing: format, argumentArray: args)
                _ = try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: predicate)) }
                return "no error"
            } catch { return "\(error)" }
        }
        XCTAssertEqual(error("height > 3"), "fetch request: entity 'Person' has no key 'height'")
        XCTAssertEqual(error("city.nmae == 'x'"), "fetch request: entity 'City' has no key 'nmae'")
        XCTAssertEqual(error("age == 'old'"), "fetch request: Person.age (Integer 16) compared with String value \"old\"")
        XCTAssertEqual(error("name > %@", Date(timeIntervalSinceReferenceDate: 0)), "fetch request: Person.name (String) compared with Date value CAST(0.0, \"NSDate\")")
        XCTAssertEqual(error("age BEGINSWITH '1'"), "fetch request: BEGINSWITH compares strings, not Person.age (Integer 16) values")
        XCTAssertEqual(error("self isKindOfClass: %@", "x"), "fetch request: the isKindOfClass: operator cannot be evaluated by the store")
        XCTAssertEqual(error("citiesVisited == nil"), "fetch request: 'citiesVisited' is a to-many relationship; use ANY, ALL, NONE, @count or IN")
        XCTAssertEqual(error("name == $NAME"), "fetch request: variable $NAME has no value (substitute template variables before fetching)")
        let templated = try ObjectPredicate(unboundFormat: "name == $NAME").substituting(["NAME": "x"])
        XCTAssertEqual(templated.predicateFormat, #"name == "x""#)
    }
}

final class PredicateIndexTests: XCTestCase {
    /// EXPLAIN QUERY PLAN of the fetch SQL for a predicate over City (name indexed).
    func plan(_ format: String, _ args: Any?...) throws -> String {
        let dir = TemporaryDirectory()
        let base = try makeCityModel()
        let city = base.entity(named: "City")!
        city.attribute(named: "name")!.isIndexed = true
        let model = try ManagedObjectModel(entities: base.entities.map { entity in
            EntityDescription(name: entity.name, properties: entity.declaredProperties)
        })
        let (coordinator, _) = try makeStack(model, in: dir)
        let entity = model.entity(named: "City")!
        let filter = try FetchFilter.compile(predicate: try ObjectPredicate(parsing: format, argumentArray: args), sortDescriptors: [],
                                             entity: entity, storeIdentifier: coordinator.storeIdentifier)
        let connection = try SQLiteConnection(path: dir.file("store.sqlite").path, create: false)
        let statement = try connection.prepare("EXPLAIN QUERY PLAN SELECT t0.Z_PK FROM ZCITY t0\(filter.joins) WHERE \(filter.condition!)")
        for (i, value) in filter.bindings.enumerated() { statement.bind(value, at: Int32(i + 1)) }
        var details: [String] = []
        while try statement.step() { details.append(statement.text(at: 3)) }
        return details.joined(separator: "; ")
    }

    func testNormalizedComparisonsUseTheIndexAndFoldedOnesScan() throws {
        XCTAssertTrue(try plan("name ==[n] %@", "ZAF").contains("USING COVERING INDEX ZCITY_ZNAME_INDEX (ZNAME=?)"))
        XCTAssertTrue(try plan("name BEGINSWITH[n] %@", "beziers").contains("USING COVERING INDEX ZCITY_ZNAME_INDEX (ZNAME>? AND ZNAME<?)"))
        XCTAssertTrue(try plan("name IN[n] %@", ["FRA", "FIN", "ISL"]).contains("USING COVERING INDEX ZCITY_ZNAME_INDEX (ZNAME=?)"))
        XCTAssertTrue(try plan("name BEGINSWITH[cd] %@", "beziers").hasPrefix("SCAN"), "[cd] folds every row: no index helps")
        XCTAssertTrue(try plan("name ENDSWITH[n] %@", "ers").contains("SCAN"))
        XCTAssertTrue(try plan("population > 5 AND name ==[n] 'x'").contains("INDEX ZCITY_ZNAME_INDEX"))
    }
}

final class FetchTemplateTests: XCTestCase {
    func testTemplatesWithSubstitutionVariables() throws {
        let model = try ManagedObjectModel(jsonData: Data("""
        {"entities": [{"name": "Dog", "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer16"}]}],
         "fetchRequests": {"olderThan": {"entity": "Dog", "predicate": "age > $AGE"}, "all": {"entity": "Dog"}}}
        """.utf8))
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            for (name, age) in [("Rex", 3), ("Fido", 9)] {
                let dog = try context.insertNewObject(forEntityName: "Dog")
                try dog.setValue(name, forKey: "name")
                try dog.setValue(age, forKey: "age")
            }
            try context.save()
            let request = try model.fetchRequest(fromTemplateWithName: "olderThan", substitutionVariables: ["AGE": 5])
            XCTAssertEqual(request.predicate?.predicateFormat, "age > 5")
            XCTAssertEqual(try context.fetch(request).map { $0.value(forKey: "name") as? String }, ["Fido"])
            XCTAssertEqual(try context.count(for: try model.fetchRequest(fromTemplateWithName: "all")), 2)
            XCTAssertThrowsError(try context.fetch(try model.fetchRequest(fromTemplateWithName: "olderThan"))) { error in
                XCTAssertEqual("\(error)", "fetch request: variable $AGE has no value (substitute template variables before fetching)")
            }
            XCTAssertThrowsError(try model.fetchRequest(fromTemplateWithName: "nope"))
        }
    }

    func testFetchRequestTemplateOfAFixtureModel() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: the fixture model's template is not checked") }
        let momc = try ManagedObjectModel(loadingContentsOf: fixtures.appendingPathComponent("xcdatamodels/36_atomicbird__momcom__momcTests_2.xml"))
        XCTAssertEqual(try momc.fetchRequest(fromTemplateWithName: "FetchRequestObjects").predicate?.predicateFormat, "booleanAttribute == 1 AND floatAttribute > 5")
    }
}
