import Foundation
import XCTest
@testable import Faultline

/// The SwiftData store of ../shared/fixtures/coredata-stores/swiftdata-metacocktails, opened without a model (its
/// `Z_MODELCACHE` holds the only one): composite attributes flattened into columns, a to-many without an inverse
/// kept in the destination's column `Z1SPEC`, a many-to-many join table.
final class SwiftDataStoreTests: XCTestCase {
    func cocktails(in dir: TemporaryDirectory) throws -> URL {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: the SwiftData store is not checked") }
        return try copyStore(fixtures.appendingPathComponent("coredata-stores/swiftdata-metacocktails/PreloadedCocktails.store"), into: dir)
    }

    /// Every object of every entity, each stored value — composite elements included — equal to what SQLite holds
    /// in its column, and every to-many's members equal to the rows that point at it.
    func testEveryObjectsValuesAreWhatSQLiteHolds() throws {
        let dir = TemporaryDirectory()
        let store = try cocktails(in: dir)
        let model = try XCTUnwrap(ManagedObjectModel.cachedInStore(at: store))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: store, options: .readOnly)
        let raw = try SQLiteConnection(path: store.path, create: false, readOnly: true)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        var compared = 0, elements = 0
        for entity in model.entities {
            let columns = entity.attributes.filter { $0.columnName != nil }
            let select = try raw.prepare("SELECT Z_PK, \(columns.map { $0.columnName! }.joined(separator: ", ")) FROM \(entity.table.name) WHERE Z_ENT = \(entity.entityNumber)")
            var rows: [Int64: [Slot]] = [:]
            while try select.step() { rows[select.int64(at: 0)] = columns.indices.map { select.slot(at: Int32($0 + 1)) } }
            try context.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: entity.name)
                request.returnsObjectsAsFaults = false
                let objects = try context.fetch(request)
                XCTAssertEqual(objects.count, rows.count, entity.name)
                for object in objects {
                    let row = try XCTUnwrap(rows[object.objectID.key], "\(entity.name) \(object.objectID.key)")
                    for (attribute, stored) in zip(columns, row) {
                        let read = try ValueCoding.slot(for: object.value(for: attribute), attribute: attribute)
                        XCTAssertTrue(Self.same(read, stored), "\(entity.name).\(attribute.name) of \(object.objectID.key): \(read) ≠ \(stored)")
                        compared += 1
                        if attribute.isCompositeElement { elements += 1 }
                    }
                    // A composite's value is its elements' values by name.
                    for composite in entity.attributes where composite.type == .composite && composite.elementName == nil {
                        let value = object.value(for: composite) as? [String: Any]
                        for element in composite.entityElements where element.type != .composite {
                            XCTAssertEqual(value?[element.elementName!].map { "\($0)" }, object.value(for: element).map { "\($0)" },
                                           "\(entity.name).\(element.name)")
                        }
                    }
                }
            }
        }
        XCTAssertEqual(compared, 416 * 37 + 78 + 1_893 * 3 + 396 * 15)
        XCTAssertGreaterThan(elements, 416 * 20)

        // Cocktail.spec has no inverse: its members are the ingredients whose Z1SPEC is the cocktail's key.
        let linked = try raw.prepare("SELECT Z1SPEC, count(*) FROM ZINGREDIENT WHERE Z1SPEC IS NOT NULL GROUP BY Z1SPEC")
        var members: [Int64: Int] = [:]
        while try linked.step() { members[linked.int64(at: 0)] = Int(linked.int64(at: 1)) }
        let garnishRows = try raw.prepare("SELECT Z_1COCKTAILS, count(*) FROM Z_1GARNISH GROUP BY Z_1COCKTAILS")
        var garnishes: [Int64: Int] = [:]
        while try garnishRows.step() { garnishes[garnishRows.int64(at: 0)] = Int(garnishRows.int64(at: 1)) }
        try context.performAndWait {
            for cocktail in try context.fetch(FetchRequest<ManagedObject>(entityName: "Cocktail")) {
                XCTAssertEqual((cocktail.value(forKey: "spec") as? [ManagedObject])?.count, members[cocktail.objectID.key] ?? 0)
                XCTAssertEqual((cocktail.value(forKey: "garnish") as? [ManagedObject])?.count, garnishes[cocktail.objectID.key] ?? 0)
            }
        }
        XCTAssertEqual(members.values.reduce(0, +), 1_893)
    }

    /// One cocktail as the fixture's summary shows it, its composite `author` as a dictionary; a predicate on a
    /// composite's element runs in SQL and in memory alike.
    func testCompositeValuesAndKeyPaths() throws {
        let dir = TemporaryDirectory()
        let store = try cocktails(in: dir)
        let model = try XCTUnwrap(ManagedObjectModel.cachedInStore(at: store))
        let cocktail = try XCTUnwrap(model.entity(named: "Cocktail"))
        XCTAssertEqual(cocktail.attribute(named: "author")?.type, .composite)
        XCTAssertEqual(cocktail.attribute(named: "author")?.entityElements.map(\.name), ["author.id", "author.person", "author.place", "author.year"])
        XCTAssertEqual(cocktail.attribute(named: "author.person")?.columnName, "ZPERSON")
        XCTAssertEqual(cocktail.attribute(named: "author.id")?.columnName, "ZID", "the composite sorts before `id`, which takes ZID1")
        XCTAssertEqual(cocktail.attribute(named: "id")?.columnName, "ZID1")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: store, options: .readOnly)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Cocktail", predicate: try ObjectPredicate(parsing: "author.person == %@", "Paul Harrington"))
            request.sortDescriptors = [FetchSortDescriptor(keyPath: "cocktailName")]
            let found = try context.fetch(request)
            XCTAssertFalse(found.isEmpty)
            let jasmine = try XCTUnwrap(found.first { $0.value(forKey: "cocktailName") as? String == "Jasmine" })
            let author = try XCTUnwrap(jasmine.value(forKey: "author") as? [String: Any])
            XCTAssertEqual(author["person"] as? String, "Paul Harrington")
            XCTAssertEqual(author["place"] as? String, "Townhouse Bar & Grill, Emeryville")
            XCTAssertEqual(author["year"] as? String, "1998")
            XCTAssertTrue(author["id"] is UUID)
            XCTAssertEqual(jasmine.value(forKey: "glasswareType") as? [String: String], ["glasswareType": "Stemmed"])
            let predicate = try ObjectPredicate(parsing: "author.person == %@", "Paul Harrington")
            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Cocktail"))
            XCTAssertEqual(try all.filter { try predicate.matches($0) }.count, found.count)
            // No author: every element nil, the composite nil.
            let anonymous = try context.fetch(FetchRequest<ManagedObject>(entityName: "Cocktail",
                                                                       predicate: try ObjectPredicate(parsing: "author.id == nil")))
            XCTAssertEqual(anonymous.count, 28)
            XCTAssertTrue(anonymous.allSatisfy { $0.value(forKey: "author") == nil })
            XCTAssertThrowsError(try context.fetch(FetchRequest<ManagedObject>(entityName: "Cocktail", predicate: try ObjectPredicate(parsing: "author == nil"))))
            // A dictionary fetch gives a composite as one dictionary, read from its elements' columns.
            let rows = FetchRequest<ManagedObject>(entityName: "Cocktail", predicate: try ObjectPredicate(parsing: "cocktailName == 'Jasmine'"))
            rows.propertiesToFetch = [PropertyToFetch("cocktailName"), PropertyToFetch("author")]
            let row = try XCTUnwrap(try context.fetchDictionaries(rows).first)
            XCTAssertEqual((row["author"] as? [String: Any])?["year"] as? String, "1998")
            XCTAssertEqual(row.keys.sorted(), ["author", "cocktailName"])
        }
    }

    /// A new store for the cached model has the SwiftData store's tables, columns and indexes for its entities; a
    /// composite set as a dictionary and a to-many without an inverse are written to the columns SwiftData reads.
    func testANewStoreIsLaidOutAndWrittenAsSwiftDataWritesIt() throws {
        let dir = TemporaryDirectory()
        let original = try cocktails(in: dir)
        let model = try XCTUnwrap(ManagedObjectModel.cachedInStore(at: original))
        let store = dir.file("new.store")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: store)
        func tables(_ url: URL) throws -> [String: String] {
            let connection = try SQLiteConnection(path: url.path, create: false, readOnly: true)
            let rows = try connection.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE', 'Z_PRIMARYKEY')")
            var result: [String: String] = [:]
            while try rows.step() { result[rows.text(at: 0)] = rows.text(at: 1) }
            return result
        }
        XCTAssertEqual(try tables(store), try tables(original))

        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let drink = try context.insertNewObject(forEntityName: "Cocktail")
            try drink.setValue("Test", forKey: "cocktailName")
            try drink.setValue("Collection", forKey: "collectionName")
            try drink.setValue(UUID(), forKey: "id")
            try drink.setValue(false, forKey: "favorite")
            try drink.setValue(false, forKey: "isCustomCocktail")
            try drink.setValue(["person": "Ada", "year": "2026"], forKey: "author")
            try drink.setValue(["glasswareType": "Coupe"], forKey: "glasswareType")
            XCTAssertThrowsError(try drink.setValue(["nobody": "x"], forKey: "author"), "an element the composite does not have")
            XCTAssertThrowsError(try drink.setValue("Ada", forKey: "author"), "a composite takes a dictionary")
            let garnish = try context.insertNewObject(forEntityName: "Garnish")
            try garnish.setValue("Lime", forKey: "name")
            try drink.setValue([garnish], forKey: "garnish")
            let base = try context.insertNewObject(forEntityName: "IngredientBase")
            for key in ["name", "baseCategory", "specialtyCategory", "umbrellaCategory"] { try base.setValue("Gin", forKey: key) }
            try base.setValue(UUID(), forKey: "id")
            try base.setValue(false, forKey: "isCustom")
            var parts: [ManagedObject] = []
            for unit in ["oz", "dash"] {
                let part = try context.insertNewObject(forEntityName: "Ingredient")
                try part.setValue(base, forKey: "ingredientBase")
                try part.setValue(UUID(), forKey: "id")
                try part.setValue(1.5, forKey: "value")
                try part.setValue(["unit": unit], forKey: "unit")
                parts.append(part)
            }
            try drink.setValue(parts, forKey: "spec")
            try context.save()
            try drink.setValue([parts[1]], forKey: "spec")
            try context.save()
        }
        let raw = try SQLiteConnection(path: store.path, create: false, readOnly: true)
        let row = try raw.prepare("SELECT ZPERSON, ZPLACE, ZYEAR, ZGLASSWARETYPE FROM ZCOCKTAIL")
        XCTAssertTrue(try row.step())
        XCTAssertEqual(row.text(at: 0), "Ada")
        XCTAssertTrue(row.isNull(at: 1))
        XCTAssertEqual(row.text(at: 2), "2026")
        XCTAssertEqual(row.text(at: 3), "Coupe")
        let links = try raw.prepare("SELECT ZUNIT, Z1SPEC FROM ZINGREDIENT ORDER BY ZUNIT")
        var found: [String: Int64?] = [:]
        while try links.step() { found[links.text(at: 0)] = links.isNull(at: 1) ? nil : links.int64(at: 1) }
        XCTAssertEqual(found, ["dash": 1, "oz": nil])

        // Read back in a new coordinator, and deleted: the ingredient's link is cleared, the row stays.
        let again = PersistentStoreCoordinator(managedObjectModel: try XCTUnwrap(ManagedObjectModel.cachedInStore(at: original)), probes: .disabled)
        try again.addPersistentStore(at: store)
        let reader = ManagedObjectContext(.privateQueue, coordinator: again)
        try reader.performAndWait {
            let drink = try XCTUnwrap(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Cocktail")).first)
            XCTAssertEqual((drink.value(forKey: "author") as? [String: Any])?.count, 2)
            XCTAssertEqual((drink.value(forKey: "spec") as? [ManagedObject])?.compactMap { ($0.value(forKey: "unit") as? [String: Any])?["unit"] as? String }, ["dash"])
            reader.delete(drink)
            try reader.save()
        }
        // The delete cascades to the one ingredient left in `spec`; the other keeps its row and no link.
        let after = try SQLiteConnection(path: store.path, create: false, readOnly: true)
        let left = try after.prepare("SELECT count(*), count(Z1SPEC), min(ZUNIT) FROM ZINGREDIENT")
        XCTAssertTrue(try left.step())
        XCTAssertEqual(left.int64(at: 0), 1)
        XCTAssertEqual(left.int64(at: 1), 0)
        XCTAssertEqual(left.text(at: 2), "oz")
    }

    static func same(_ a: Slot, _ b: Slot) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.integer(let x), .integer(let y)): return x == y
        case (.real(let x), .real(let y)): return x == y
        case (.real(let x), .integer(let y)), (.integer(let y), .real(let x)): return x == Double(y)
        case (.text(let x), .text(let y)): return x == y
        case (.blob(let x), .blob(let y)): return x == y
        default: return false
        }
    }
}
