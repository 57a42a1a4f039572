import Foundation
import XCTest
@testable import Faultline

/// The same predicates through SQL (a fetch) and through the in-memory evaluator, over generated data: the
/// results must be the same objects.
final class PredicateDifferentialTests: XCTestCase {
    /// A store of 12 cities and 120 people with names that test folding and patterns, some values nil.
    private func seededStore(in dir: TemporaryDirectory) throws -> ManagedObjectContext {
        let (_, context) = try makeStack(try makeCityModel(), in: dir)
        var generator = SplitMix(seed: 7)
        let cityNames = ["Saint-Étienne", "saint-denis", "Paris", "Århus", "Aarhus", "Zürich", "Köln", "Ōsaka", "Rome", "rome", "A*B", "a?c"]
        let personNames = ["Ann", "ann", "Åsa", "Bob", "Émile", "emile", "Zoë", "zoe", "Ünal", "Li", "X", "x y"]
        try context.performAndWait {
            var cities: [ManagedObject] = []
            for name in cityNames {
                let city = try context.insertNewObject(forEntityName: "City")
                try city.setValue(name, forKey: "name")
                try city.setValue(Int(generator.next() % 1_000_000), forKey: "population")
                if generator.next() % 4 != 0 { try city.setValue(Date(timeIntervalSinceReferenceDate: Double(generator.next() % 10_000)), forKey: "founded") }
                cities.append(city)
            }
            for i in 0..<120 {
                let person = try context.insertNewObject(forEntityName: "Person")
                try person.setValue(generator.next() % 7 == 0 ? nil : personNames[Int(generator.next() % UInt64(personNames.count))] + "\(i % 3)", forKey: "name")
                try person.setValue(generator.next() % 6 == 0 ? nil : Int(generator.next() % 90), forKey: "age")
                try person.setValue(generator.next() % 5 == 0 ? nil : Int(generator.next() % 4), forKey: "carsOwnedCount")
                try person.setValue(generator.next() % 2 == 0, forKey: "hidden")
                if generator.next() % 5 != 0 { try person.setValue(cities[Int(generator.next() % UInt64(cities.count))], forKey: "city") }
                let visited = (0..<Int(generator.next() % 4)).map { _ in cities[Int(generator.next() % UInt64(cities.count))] }
                try person.setValue(Array(Set(visited.map(ObjectIdentifier.init))).compactMap { id in visited.first { ObjectIdentifier($0) == id } }, forKey: "citiesVisited")
                if i < cities.count { try cities[i].setValue(person, forKey: "mayor") }
            }
            try context.save()
        }
        return context
    }

    func testSQLAndMemoryAgree() throws {
        let dir = TemporaryDirectory()
        let context = try seededStore(in: dir)
        let personPredicates = [
            "age > 30", "age >= 30 AND age < 60", "age != 30 AND age != nil", "age == nil", "age != nil", "NOT age > 30", "age BETWEEN {20, 40}",
            "age IN {1, 2, 3, 50, 60}", "carsOwnedCount == 2 OR hidden == YES", "hidden", "NOT hidden",
            "name BEGINSWITH 'A'", "name BEGINSWITH[c] 'a'", "name BEGINSWITH[cd] 'a'", "name ==[cd] 'emile1'", "name CONTAINS 'o'",
            "name CONTAINS[cd] 'E'", "name ENDSWITH '2'", "name LIKE '?nn*'", "name LIKE[c] '*N*'", "name MATCHES '[A-Z].*1'",
            "name MATCHES[c] 'z.*'", "name < 'M'", "name >= 'a'", "name IN {'Ann0', 'Bob1', 'x y2'}", "name IN[c] {'ann0', 'BOB1'}",
            "city.name == 'Paris'", "city.name BEGINSWITH[cd] 'saint'", "city == nil", "city.population > 500000", "city.founded > %@",
            "ANY citiesVisited.name == 'Rome'", "ALL citiesVisited.population > 100000", "NONE citiesVisited.name BEGINSWITH 'A'",
            "citiesVisited.@count >= 2", "citiesVisited.@count == 0", "citiesVisited.@max.population > 900000",
            "citiesVisited.@sum.population > 1000000", "citiesVisited.@avg.population < 300000", "citiesVisited.@min.population < 10000",
            "SUBQUERY(citiesVisited, $c, $c.population > 500000 AND $c.name BEGINSWITH[c] 'r').@count > 0",
            "(age + carsOwnedCount) * 2 > 80", "age > 20 AND (name BEGINSWITH 'Z' OR city.name == 'Köln')", "mayorOf != nil",
            "mayorOf.population > 100 AND age < 50", "TRUEPREDICATE", "FALSEPREDICATE",
        ]
        let cityPredicates = [
            "residents.@count > 8", "ANY residents.age > 80", "ALL residents.age > 10", "NONE residents.hidden == YES",
            "SUBQUERY(residents, $x, $x.age >= 36).@count == 0", "SUBQUERY(residents, $x, $x.age < 25 AND $x.carsOwnedCount == 2).@count != 0",
            "ANY residents.age < 25 AND ANY residents.carsOwnedCount == 2", "mayor.age > 40", "ANY visitors.name BEGINSWITH[cd] 'e'",
            "founded == nil", "founded BETWEEN %@", "name LIKE[cd] '*a*'", "name MATCHES '.*[*?].*'", "name ==[c] 'ROME'",
            "residents.@avg.age > 45", "name LIKE 'A\\\\*B'",
        ]
        let founded = Date(timeIntervalSinceReferenceDate: 5_000)
        let range = [Date(timeIntervalSinceReferenceDate: 1_000), Date(timeIntervalSinceReferenceDate: 6_000)]
        // A predicate that selects nothing, or everything, proves little: most of these must split the data.
        var informative = 0
        defer { XCTAssertGreaterThan(informative, (personPredicates.count + cityPredicates.count) * 3 / 4) }
        for (entity, predicates) in [("Person", personPredicates), ("City", cityPredicates)] {
            let reader = ManagedObjectContext(.privateQueue, coordinator: context.coordinator)
            try reader.performAndWait {
                let everything = try reader.fetch(FetchRequest<ManagedObject>(entityName: entity))
                for format in predicates {
                    let args: [Any?] = format.contains("%@") ? [format.contains("BETWEEN") ? range : founded] : []
                    let predicate = try ObjectPredicate(parsing: format, argumentArray: args)
                    let viaSQL = Set(try reader.fetch(FetchRequest<ManagedObject>(entityName: entity, predicate: predicate)).map(ObjectIdentifier.init))
                    let inMemory = Set(try everything.filter { try predicate.matches($0) }.map(ObjectIdentifier.init))
                    XCTAssertEqual(viaSQL, inMemory, "\(entity): \(format) — SQL \(viaSQL.count), memory \(inMemory.count)")
                    if viaSQL.count > 0 && viaSQL.count < everything.count { informative += 1 }
                }
            }
        }
    }

    /// Where they differ, as Core Data's do: `!=` against a value. NSPredicate in memory says nil differs from 30;
    /// SQL's `ZAGE <> 30` is not true for NULL, so the store leaves those rows out (the optional-not-equal finding).
    func testNotEqualKeepsNilInMemoryAndNotInSQL() throws {
        let dir = TemporaryDirectory()
        let context = try seededStore(in: dir)
        try context.performAndWait {
            let everything = try context.fetch(FetchRequest<ManagedObject>(entityName: "Person"))
            let predicate = try ObjectPredicate(parsing: "age != 30")
            let viaSQL = Set(try context.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: predicate)).map(ObjectIdentifier.init))
            let inMemory = Set(try everything.filter { try predicate.matches($0) }.map(ObjectIdentifier.init))
            let nilAges = Set(everything.filter { $0.value(forKey: "age") == nil }.map(ObjectIdentifier.init))
            XCTAssertFalse(nilAges.isEmpty)
            XCTAssertTrue(viaSQL.isDisjoint(with: nilAges))
            XCTAssertEqual(inMemory, viaSQL.union(nilAges))
            XCTAssertTrue(try ObjectPredicate(parsing: "age != nil").evaluate(with: everything.first { $0.value(forKey: "age") != nil }!))
            XCTAssertFalse(try ObjectPredicate(parsing: "age != nil").evaluate(with: everything.first { $0.value(forKey: "age") == nil }!))
        }
    }

    /// Fetches whose predicates differ only in their constants' values share one compiled SQL text; where a value
    /// changes the SQL (nil, a collection's length, an object of another entity), the fetch compiles its own. Each
    /// fetch must still match what the in-memory evaluator selects.
    func testFetchesOfOneShapeShareTheirSQLAndStillAgree() throws {
        let dir = TemporaryDirectory()
        let context = try seededStore(in: dir)
        let coordinator = context.coordinator
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let people = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person", sortDescriptors: [FetchSortDescriptor(keyPath: "age")]))
            let cities = try reader.fetch(FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [FetchSortDescriptor(keyPath: "name")]))
            // (format, first arguments, second arguments, whether the second fetch reuses the first one's SQL)
            let cases: [(String, [Any?], [Any?], Bool)] = [
                ("age > %@", [30], [60], true),
                ("age == %@", [30], [nil], false),
                ("age == %@ OR name == %@", [nil, "Ann0"], [nil, "Bob1"], true),
                ("name BEGINSWITH[cd] %@", ["a"], ["É"], true),
                ("name BEGINSWITH %@", ["A"], ["x*"], true),
                ("name LIKE[c] %@", ["?nn*"], ["*O*"], true),
                ("name MATCHES %@", ["[A-Z].*1"], ["z.*"], true),
                ("name CONTAINS[cd] %@", ["E"], ["o"], true),
                ("name IN %@", [["Ann0", "Bob1"]], [["Li0", "x y2"]], true),
                ("name IN %@", [["Ann0", "Bob1"]], [["Li0", "x y2", "Zoë1"]], false),
                ("name IN[c] {%@, %@}", ["ann0", "BOB1"], ["li1", "X Y2"], true),
                ("age BETWEEN %@", [[20, 40]], [[50, 60]], true),
                ("age BETWEEN {%@, %@}", [20, 40], [50, 60], true),
                ("city == %@", [cities[0]], [cities[5]], true),
                ("city == %@", [cities[0]], [people[0]], false),
                ("SELF == %@", [people[3]], [people[40]], true),
                ("SELF IN %@", [[people[1], people[2]]], [[people[7], people[9]]], true),
                ("city.name ==[c] %@ AND age > %@", ["ROME", 20], ["paris", 40], true),
                ("ANY citiesVisited.name == %@", ["Rome"], ["Paris"], true),
                ("ANY citiesVisited.population > %@ AND hidden == %@", [100_000, true], [900_000, false], true),
                ("(age + carsOwnedCount) * 2 > %@", [80], [120], true),
                ("SUBQUERY(citiesVisited, $c, $c.population > %@).@count > 0", [500_000], [900_000], false),
            ]
            for (format, first, second, shared) in cases {
                for (i, args) in [first, second].enumerated() {
                    let predicate = try ObjectPredicate(parsing: format, argumentArray: args)
                    let before = coordinator.statistics.predicateCompilations
                    let viaSQL = Set(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: predicate)).map(ObjectIdentifier.init))
                    let compiled = coordinator.statistics.predicateCompilations - before
                    let inMemory = Set(try people.filter { try predicate.matches($0) }.map(ObjectIdentifier.init))
                    XCTAssertEqual(viaSQL, inMemory, "\(predicate) — SQL \(viaSQL.count), memory \(inMemory.count)")
                    // (A first fetch may find its shape compiled by an earlier case.)
                    if i == 1 { XCTAssertEqual(compiled, shared ? 0 : 1, "\(predicate): compilations") }
                }
            }
        }
    }
}
