import Foundation
import XCTest
@testable import Faultline

/// Core Data's version hashes, computed: the public vectors, every fixture store's `NSStoreModelVersionHashes`
/// against the version that wrote it, and a compiled bundle's `VersionInfo.plist` against its Xcode source.
final class VersionHashTests: XCTestCase {
    func testThePublicVectors() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Recipe", properties: [
                RelationshipDescription(name: "ingredients", destination: "Ingredient", inverse: "recipe", isToMany: true),
                RelationshipDescription(name: "image", destination: "Image", inverse: "recipe"),
            ]),
            EntityDescription(name: "Ingredient", properties: [
                AttributeDescription(name: "amount", type: .string),
                AttributeDescription(name: "displayOrder", type: .integer16, isOptional: false),
                AttributeDescription(name: "name", type: .string, isOptional: false),
                RelationshipDescription(name: "recipe", destination: "Recipe", inverse: "ingredients", minCount: 1),
            ]),
            EntityDescription(name: "Image", properties: [
                AttributeDescription(name: "image", type: .transformable),
                RelationshipDescription(name: "recipe", destination: "Recipe", inverse: "image", isOptional: false, minCount: 1),
            ]),
        ])
        try Self.assertRecipesVectors(model)
        // The same entity with `amount` as Integer 16.
        let changed = try ManagedObjectModel(entities: [
            EntityDescription(name: "Recipe", properties: [
                RelationshipDescription(name: "ingredients", destination: "Ingredient", inverse: "recipe", isToMany: true),
            ]),
            EntityDescription(name: "Ingredient", properties: [
                AttributeDescription(name: "amount", type: .integer16),
                AttributeDescription(name: "displayOrder", type: .integer16, isOptional: false),
                AttributeDescription(name: "name", type: .string, isOptional: false),
                RelationshipDescription(name: "recipe", destination: "Recipe", inverse: "ingredients", minCount: 1),
            ]),
        ])
        let ingredient = try XCTUnwrap(changed.entity(named: "Ingredient"))
        XCTAssertEqual(ingredient.properties.first { $0.name == "amount" }?.coreDataVersionHash.base64EncodedString(), "RmH9Sk61kxsb8+GUEqlEkIuV4tDjxxhMNsHUu/tBW6I=")
        XCTAssertEqual(ingredient.coreDataVersionHash.base64EncodedString(), "7nbTTDaWG1lAddHYHum4xP4IA/N90NYv9GLkGK+sueQ=")
    }

    func testEveryFixtureStoresHashesAreItsVersions() throws {
        guard let fixtures = fixturesDirectory()?.appendingPathComponent("coredata-stores") else {
            throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked")
        }
        let cases: [(store: String, bundle: String, version: String)] = [
            ("bnr-coredatastack/TestModel.sqlite", "bnr-coredatastack/Sample.xcdatamodeld", "TestModel"),
            ("coredataplus-samplemodel/SampleModel_V1.sqlite", "coredataplus-samplemodel/SampleModel.xcdatamodeld", "SampleModel"),
            ("coredataplus-samplemodel/SampleModel_V2.sqlite", "coredataplus-samplemodel/SampleModel.xcdatamodeld", "SampleModel2"),
            ("flickrsearcher/starter_database.sqlite", "flickrsearcher/FlickrSearcher.xcdatamodeld", "FlickrSearcher"),
            ("wibosco-migration/CoreDataMigration_Example_1.sqlite", "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", "CoreDataMigration_Example"),
            ("wibosco-migration/CoreDataMigration_Example_2.sqlite", "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", "CoreDataMigration_Example 2"),
            ("wibosco-migration/CoreDataMigration_Example_3.sqlite", "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", "CoreDataMigration_Example 3"),
        ]
        var compared = 0
        for testCase in cases {
            let stored = try XCTUnwrap(PersistentStoreCoordinator.metadataForPersistentStore(at: fixtures.appendingPathComponent(testCase.store))["NSStoreModelVersionHashes"] as? [String: Data])
            let model = try XCTUnwrap(ManagedObjectModel.versions(ofBundle: fixtures.appendingPathComponent(testCase.bundle)).first { $0.name == testCase.version }?.model)
            let computed = model.coreDataVersionHashes
            XCTAssertEqual(Set(computed.keys), Set(stored.keys), testCase.store)
            for (entity, hash) in stored {
                XCTAssertEqual(computed[entity]?.base64EncodedString(), hash.base64EncodedString(), "\(testCase.store): \(entity)")
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 10)
        // A compiled bundle's VersionInfo.plist against its Xcode source, version by version.
        let folder = fixtures.appendingPathComponent("coredataplus-samplemodel")
        let compiled = try CompiledBundle(folder.appendingPathComponent("SampleModel.momd")).versionHashes
        for (name, model) in try ManagedObjectModel.versions(ofBundle: folder.appendingPathComponent("SampleModel.xcdatamodeld")) {
            guard let hashes = compiled[name] else { continue }
            XCTAssertEqual(model.coreDataVersionHashes.mapValues { $0.base64EncodedString() }, hashes.mapValues { $0.base64EncodedString() }, name)
        }
    }

    /// Every fixture store that caches its model: the cached model hashes as the store's metadata says — composite
    /// attributes (SwiftData), a derived attribute, a to-many built in code with max count -1, preserve-after-deletion
    /// — and the store's digest and checksum are computed from its hashes as Core Data computes them.
    func testEveryCachedModelHashesAsItsStoreSays() throws {
        guard let fixtures = fixturesDirectory()?.appendingPathComponent("coredata-stores") else {
            throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked")
        }
        var compared = 0, checksums = 0
        for store in ["coredataplus-samplemodel/SampleModel_V1.sqlite", "coredataplus-samplemodel/SampleModel_V2.sqlite",
                      "coredataplus-samplemodel2/SampleModel2_V1.sqlite", "coredataplus-samplemodel2/SampleModel2_V2.sqlite",
                      "swiftdata-metacocktails/PreloadedCocktails.store", "wibosco-migration/CoreDataMigration_Example_1.sqlite",
                      "wibosco-migration/CoreDataMigration_Example_2.sqlite", "wibosco-migration/CoreDataMigration_Example_3.sqlite",
                      "bnr-coredatastack/TestModel.sqlite"] {
            let dir = TemporaryDirectory()
            let copy = try copyStore(fixtures.appendingPathComponent(store), into: dir)
            let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(at: copy)
            let stored = try XCTUnwrap(metadata["NSStoreModelVersionHashes"] as? [String: Data], store)
            if let digest = metadata["NSStoreModelVersionHashesDigest"] as? String { XCTAssertEqual(StoreMetadata.digest(of: stored), digest, store) }
            if let checksum = metadata["NSStoreModelVersionChecksumKey"] as? String {
                XCTAssertEqual(StoreMetadata.checksum(of: stored), checksum, store)
                checksums += 1
            }
            guard let model = try ManagedObjectModel.cachedInStore(at: copy) else { continue }
            let computed = model.coreDataVersionHashes
            XCTAssertEqual(Set(computed.keys), Set(stored.keys), store)
            for (entity, hash) in stored {
                XCTAssertEqual(computed[entity]?.base64EncodedString(), hash.base64EncodedString(), "\(store): \(entity)")
                compared += 1
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 20)
        XCTAssertGreaterThanOrEqual(checksums, 1)
    }

    /// A store Faultline creates records Core Data's hashes, digest and checksum for its model, so that Core Data
    /// takes it for that model; opening compares them with the model's.
    func testNewStoresRecordCoreDatasHashes() throws {
        let dir = TemporaryDirectory()
        func shop(_ type: AttributeType) throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [
                EntityDescription(name: "Item", properties: [AttributeDescription(name: "title", type: type)]),
                EntityDescription(name: "Order", properties: [AttributeDescription(name: "title", type: .string)]),
            ])
        }
        let model = try shop(.string)
        _ = try makeStack(model, in: dir)
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(at: dir.file("store.sqlite"))
        let hashes = try XCTUnwrap(metadata["NSStoreModelVersionHashes"] as? [String: Data])
        XCTAssertEqual(hashes, model.coreDataVersionHashes)
        XCTAssertEqual(metadata["NSStoreModelVersionHashesDigest"] as? String, StoreMetadata.digest(of: hashes))
        XCTAssertEqual(metadata["NSStoreModelVersionChecksumKey"] as? String, StoreMetadata.checksum(of: hashes))
        XCTAssertEqual((metadata["FaultlineStoreFormat"] as? NSNumber)?.intValue, 3)
        XCTAssertEqual(PersistentStoreCoordinator.identification(of: dir.file("store.sqlite"), by: model), .hashes)
        // Another model under the same names is refused by the hashes.
        let other = try shop(.integer64)
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: other, probes: .disabled).addPersistentStore(at: dir.file("store.sqlite"))) { error in
            XCTAssertTrue("\(error)".contains("entity 'Item' changed"), "\(error)")
        }
    }

    /// Xcode keeps a derivation as typed (`pages.@count`); Core Data hashes the parsed form (`count:(pages)`), which
    /// the fixture's cached model has: both give the store's hash. A derivation of another form, or with a filter, is
    /// named as hashed by an unverified rule.
    func testDerivedAttributesHashAsCoreDataPrintsThem() throws {
        XCTAssertEqual(PropertyDescription.canonicalDerivation("pages.@count"), "count:(pages)")
        XCTAssertEqual(PropertyDescription.canonicalDerivation("items.@avg.price"), "average:(items.price)")
        XCTAssertEqual(PropertyDescription.canonicalDerivation("now()"), "now()")
        func book(_ expression: String, filter: String? = nil) throws -> EntityDescription {
            let count = AttributeDescription(name: "pagesCount", type: .integer64)
            count.derivationExpression = expression
            count.derivationFilter = filter
            let model = try ManagedObjectModel(entities: [
                EntityDescription(name: "Book", properties: [count, RelationshipDescription(name: "pages", destination: "Page", inverse: "book", isToMany: true)]),
                EntityDescription(name: "Page", properties: [RelationshipDescription(name: "book", destination: "Book", inverse: "pages")]),
            ])
            return try XCTUnwrap(model.entity(named: "Book"))
        }
        let typed = try book("pages.@count")
        XCTAssertEqual(typed.coreDataHashCaveats, [])
        XCTAssertEqual(try book("now()").coreDataHashCaveats, ["Book.pagesCount: a derived attribute's expression 'now()'"])
        XCTAssertEqual(try book("pages.@count", filter: "number > 1").coreDataHashCaveats, ["Book.pagesCount: a derived attribute with a filtering predicate"])
        guard let fixtures = fixturesDirectory()?.appendingPathComponent("coredata-stores") else {
            throw XCTSkip("../shared/fixtures is absent: the derived attribute's stored hash is not checked")
        }
        let dir = TemporaryDirectory()
        let cached = try XCTUnwrap(ManagedObjectModel.cachedInStore(at: try copyStore(fixtures.appendingPathComponent("coredataplus-samplemodel2/SampleModel2_V1.sqlite"), into: dir)))
        let stored = try XCTUnwrap(cached.entity(named: "Book")?.attribute(named: "pagesCount"))
        XCTAssertEqual(stored.derivationExpression, "count:(pages)")
        XCTAssertEqual(typed.attribute(named: "pagesCount")?.coreDataVersionHash, stored.coreDataVersionHash)
    }
}

extension VersionHashTests {
    /// The published vectors of Apple's Recipes sample (coredata-formats.md §1), checked on `model`.
    static func assertRecipesVectors(_ model: ManagedObjectModel, file: StaticString = #filePath, line: UInt = #line) throws {
        func hash(_ entity: String, _ property: String? = nil) throws -> String {
            let entity = try XCTUnwrap(model.entity(named: entity), file: file, line: line)
            guard let property else { return entity.coreDataVersionHash.base64EncodedString() }
            return try XCTUnwrap(entity.properties.first { $0.name == property }, file: file, line: line).coreDataVersionHash.base64EncodedString()
        }
        XCTAssertEqual(try hash("Ingredient", "amount"), "b9/jjR2iJtm4oldVJwj25X+/hpEL6/1CM5hLhgV48Iw=", file: file, line: line)
        XCTAssertEqual(try hash("Ingredient", "displayOrder"), "kMPJ+qU+fnBipO5Ajep+KT3rKB9zeOPrav0q4rMSt7k=", file: file, line: line)
        XCTAssertEqual(try hash("Ingredient", "name"), "jLmWXAAxrGiROYTzEQlBrZZTlb6f2bF9575UvHrUaJA=", file: file, line: line)
        XCTAssertEqual(try hash("Image", "image"), "dafQGIhBFATAxE1hyQd5z5cpRg0OLP4+M+W3+xhA6jU=", file: file, line: line)
        XCTAssertEqual(try hash("Ingredient", "recipe"), "GvmjTsOh76OGkr0Lmnxdh8u6FO4E+iuEYa0mRZPuKJQ=", file: file, line: line)
        XCTAssertEqual(try hash("Image", "recipe"), "fVH2lmmkHE4j/FvzfJ2et3KsNxcA8p5BJp2d/xd4hH0=", file: file, line: line)
        XCTAssertEqual(try hash("Ingredient"), "5tCLlA1r9p1UWdOTr3XJ+ZzBr6bxraWAs3Vt9zCAZek=", file: file, line: line)
    }
}
