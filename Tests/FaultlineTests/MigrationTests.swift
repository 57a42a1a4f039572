import Foundation
import XCTest
@testable import Faultline

/// Migrating stores Apple's Core Data wrote (../shared/fixtures/coredata-stores) to later versions of their model,
/// each from a temporary copy, and the inference rules on models written for the test.
final class MigrationTests: XCTestCase {
    func storesFolder() throws -> URL {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: migrations of Core Data's stores are not checked") }
        return fixtures.appendingPathComponent("coredata-stores")
    }

    /// Every row of `table` as column → value, by Z_PK.
    func rows(_ path: String, _ table: String) throws -> [Int64: [String: String]] {
        try rows(try SQLiteConnection(path: path, create: false), table)
    }

    func rows(_ connection: SQLiteConnection, _ table: String) throws -> [Int64: [String: String]] {
        let statement = try connection.prepare("SELECT * FROM \(table)")
        var result: [Int64: [String: String]] = [:]
        let count = statement.columnCount
        while try statement.step() {
            var row: [String: String] = [:]
            for i in 0..<count { row[statement.columnName(at: i)] = "\(statement.slot(at: i))" }
            result[statement.int64(at: 0)] = row
        }
        return result
    }

    /// Version 3 → 4 of wibosco's model (a Boolean added): every object keeps its key, its values and its links,
    /// the new attribute has its default, the store keeps its UUID, and no scratch file is left.
    func testAStoreMigratesByInferenceAndKeepsEveryValue() throws {
        let folder = try storesFolder()
        let dir = TemporaryDirectory()
        let store = try copyStore(folder.appendingPathComponent("wibosco-migration/CoreDataMigration_Example_3.sqlite"), into: dir)
        let before = (posts: try rows(store.path, "ZPOST"), colors: try rows(store.path, "ZCOLOR"))
        let uuid = try XCTUnwrap(PersistentStoreCoordinator.metadataForPersistentStore(at: store)["NSStoreUUID"] as? String)
        let bundle = folder.appendingPathComponent("wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        let plan = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle)
        XCTAssertEqual(plan.steps.map(\.to), ["CoreDataMigration_Example 4"])
        XCTAssertEqual(plan.steps[0].rows, ["Post": 7_995, "Color": 7_995])
        let after = (posts: try rows(store.path, "ZPOST"), colors: try rows(store.path, "ZCOLOR"))
        XCTAssertEqual(after.posts.count, before.posts.count)
        for (key, old) in before.posts {
            let new = try XCTUnwrap(after.posts[key])
            for column in ["Z_ENT", "ZDATE", "ZPOSTID", "ZCOLOR"] { XCTAssertEqual(new[column], old[column], "Post p\(key) \(column)") }
            XCTAssertEqual(new["ZHIDE"], "integer(0)", "the new Boolean has its default")
        }
        for (key, old) in before.colors {
            let new = try XCTUnwrap(after.colors[key])
            for column in ["ZCOLORID", "ZHEX", "ZPOST"] { XCTAssertEqual(new[column], old[column], "Color p\(key) \(column)") }
        }
        XCTAssertEqual(try PersistentStoreCoordinator.metadataForPersistentStore(at: store)["NSStoreUUID"] as? String, uuid)
        // It opens with the current version, and a read follows the links.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(loadingContentsOf: bundle))
        try coordinator.addPersistentStore(at: store)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let post = try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Post", predicate: try ObjectPredicate(parsing: "postID == %@", "3415CF33-29D7-4DB3-ABF0-720E0C9B8226"))).first)
            XCTAssertTrue((post.value(forKey: "color") as? ManagedObject)?.value(forKey: "post") as? ManagedObject === post)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.contains("migrating") }, [])
    }

    /// Core Data migrated CoreDataPlus's version-1 store to version 2 (an entity renamed through its Renaming ID, a
    /// transformable and a UUID attribute dropped, a fetch index added); Faultline's migration of the same store gives
    /// the same rows.
    func testFaultlinesMigrationGivesCoreDatasRows() throws {
        let folder = try storesFolder().appendingPathComponent("coredataplus-samplemodel")
        let dir = TemporaryDirectory()
        let store = try copyStore(folder.appendingPathComponent("SampleModel_V1.sqlite"), into: dir)
        let other = TemporaryDirectory()
        let coreData = try copyStore(folder.appendingPathComponent("SampleModel_V2.sqlite"), into: other)
        let plan = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: folder.appendingPathComponent("SampleModel.xcdatamodeld"), version: "SampleModel2")
        XCTAssertTrue(plan.description.contains("entity ExpensiveSportCar → LuxuryCar: copied"), plan.description)
        XCTAssertTrue(plan.description.contains("entity Car: - color"), plan.description)
        for table in ["ZCAR", "ZPERSON"] {
            let ours = try rows(store.path, table), theirs = try rows(coreData.path, table)
            XCTAssertEqual(ours.count, theirs.count, table)
            for (key, expected) in theirs {
                var mine = try XCTUnwrap(ours[key], "\(table) p\(key)")
                var expected = expected
                mine["Z_OPT"] = nil
                expected["Z_OPT"] = nil
                XCTAssertEqual(mine, expected, "\(table) p\(key)")
            }
        }
    }

    /// Version 1 → 4 of wibosco's model: version 3 adds a required to-one relationship to a new entity, which no old
    /// object has; the migration stops naming them and the store keeps every byte.
    func testDataTheNewVersionDoesNotAllowStopsTheMigrationAndChangesNothing() throws {
        let folder = try storesFolder()
        let dir = TemporaryDirectory()
        let store = try copyStore(folder.appendingPathComponent("wibosco-migration/CoreDataMigration_Example_1.sqlite"), into: dir)
        let before = try Data(contentsOf: store)
        let bundle = folder.appendingPathComponent("wibosco-migration/CoreDataMigration_Example.xcdatamodeld")
        // The dry run performs the whole migration (on a scratch copy): it meets the migration's error, as the migration does.
        for dryRun in [true, false] {
            XCTAssertThrowsError(try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, dryRun: dryRun)) { error in
                XCTAssertTrue("\(error)".hasPrefix("migration, entity 'Post', property 'color': from 'CoreDataMigration_Example 2' to 'CoreDataMigration_Example 3': the new version requires this relationship and the old objects have no destination for it: p1, p2"), "\(error)")
            }
            XCTAssertEqual(try Data(contentsOf: store), before, "dry run \(dryRun): nothing written")
        }
        let plan = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, version: "CoreDataMigration_Example 2", dryRun: true)
        XCTAssertTrue(plan.description.contains("entity Post: + hexColor, - color"), plan.description)
        XCTAssertTrue(plan.description.contains("values: dropped Post.color 1001; defaulted Post.hexColor 1001"), plan.description)
        XCTAssertEqual(try Data(contentsOf: store), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.url.path), [store.lastPathComponent])
        // Up to version 2 it goes.
        try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, version: "CoreDataMigration_Example 2")
        XCTAssertEqual(try rows(store.path, "ZPOST").count, 1_001)
    }

    /// The derived-attribute fixture (SampleModel2: `Book.pagesCount` is `pages.@count`, kept by Core Data's
    /// triggers; persistent history on), version 1's store migrated to version 2's model (each from a store's
    /// Z_MODELCACHE): the new store has the new version's triggers — which keep counting after the migration — and
    /// the old store's persistent history, its changes renumbered to the new model's entities. Core Data's
    /// documentation does not say what a migration does with history; keeping it loses nothing (docs/migration.md).
    func testAMigratedStoreKeepsItsDerivedAttributeTriggersAndItsHistory() throws {
        let folder = try storesFolder().appendingPathComponent("coredataplus-samplemodel2")
        let dir = TemporaryDirectory()
        let store = try copyStore(folder.appendingPathComponent("SampleModel2_V1.sqlite"), into: dir)
        let v2Dir = TemporaryDirectory()
        let v2Store = try copyStore(folder.appendingPathComponent("SampleModel2_V2.sqlite"), into: v2Dir)
        let source = try XCTUnwrap(try ManagedObjectModel.cachedInStore(at: store)), destination = try XCTUnwrap(try ManagedObjectModel.cachedInStore(at: v2Store))
        source.versionName = "SampleModel2 V1"
        destination.versionName = "SampleModel2 V2"
        func strings(_ sql: String) throws -> [String] {
            let connection = try SQLiteConnection(path: store.path, create: false)
            let statement = try connection.prepare(sql)
            var found: [String] = []
            while try statement.step() { found.append(statement.text(at: 0)) }
            return found
        }
        let triggers = "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"
        let before = (transactions: try strings("SELECT count(*) FROM ATRANSACTION"), changes: try strings("SELECT count(*) FROM ACHANGE"),
                      strings: try strings("SELECT ZNAME FROM ATRANSACTIONSTRING ORDER BY Z_PK"),
                      changed: try strings("SELECT p.Z_NAME || ' ' || count(*) FROM ACHANGE c JOIN Z_PRIMARYKEY p ON p.Z_ENT = c.ZENTITY GROUP BY p.Z_NAME ORDER BY p.Z_NAME"),
                      counts: try strings("SELECT ZPAGESCOUNT FROM ZBOOK ORDER BY Z_PK"))
        XCTAssertEqual(try strings(triggers).count, 5, "the fixture's own triggers")
        let plan = try PersistentStoreCoordinator.migrateStore(at: store, from: source, to: destination)
        XCTAssertEqual(plan.steps.count, 1)
        XCTAssertEqual(try strings(triggers), ["Z_DA_ZBOOK_Book_pagesCount_SOURCE_INSERT", "Z_DA_ZPAGE_Book_pagesCount_PARAMETER_DELETE",
                                               "Z_DA_ZPAGE_Book_pagesCount_PARAMETER_INSERT", "Z_DA_ZPAGE_Book_pagesCount_PARAMETER_UPDATE_DECREMENT",
                                               "Z_DA_ZPAGE_Book_pagesCount_PARAMETER_UPDATE_INCREMENT"])
        XCTAssertEqual(try strings("SELECT ZPAGESCOUNT FROM ZBOOK ORDER BY Z_PK"), before.counts, "the counts as they were")
        // History: every transaction, change and string kept, each change still naming its entity.
        XCTAssertEqual(try strings("SELECT count(*) FROM ATRANSACTION"), before.transactions)
        XCTAssertEqual(try strings("SELECT count(*) FROM ACHANGE"), before.changes)
        XCTAssertEqual(try strings("SELECT ZNAME FROM ATRANSACTIONSTRING ORDER BY Z_PK"), before.strings)
        XCTAssertEqual(try strings("SELECT p.Z_NAME || ' ' || count(*) FROM ACHANGE c JOIN Z_PRIMARYKEY p ON p.Z_ENT = c.ZENTITY GROUP BY p.Z_NAME ORDER BY p.Z_NAME"),
                       before.changed)
        XCTAssertTrue(plan.description.contains("history: 1 transaction, \(before.changes[0]) changes kept"), plan.description)
        // The triggers still count: a page added to book 1 counts.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: destination)
        try coordinator.addPersistentStore(at: store)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let book = try context.existingObject(with: try XCTUnwrap(context.objectID(forURIString: "x-coredata://\(coordinator.storeIdentifier ?? "")/Book/p1")))
            let first = try context.existingObject(with: try XCTUnwrap(context.objectID(forURIString: "x-coredata://\(coordinator.storeIdentifier ?? "")/Page/p1")))
            try insertPage(number: 1_000, into: context, book: book, contentOf: first)
            try context.save()
        }
        XCTAssertEqual(try strings("SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 1"), ["\(Int(before.counts[0])! + 1)"])
    }

    /// A store no version of the bundle fits (made by SampleModel version 1, migrated with a bundle that holds only
    /// version 2): migrated, as Core Data does, from the model the store caches — its hashes are the store's. The dry
    /// run and the migration agree, the dropped values are counted, and the store then opens by its hashes.
    func testAStoreNoVersionFitsMigratesFromTheModelItCaches() throws {
        let folder = try storesFolder().appendingPathComponent("coredataplus-samplemodel")
        let dir = TemporaryDirectory()
        let store = try copyStore(folder.appendingPathComponent("SampleModel_V1.sqlite"), into: dir)
        let bundle = dir.file("Only.xcdatamodeld")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: folder.appendingPathComponent("SampleModel.xcdatamodeld/SampleModel2.xcdatamodel"),
                                         to: bundle.appendingPathComponent("SampleModel2.xcdatamodel"))
        XCTAssertThrowsError(try PersistentStoreCoordinator.open(store, withVersionOf: bundle, options: .readOnly), "no version fits")
        let before = try Data(contentsOf: store)
        let dry = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, dryRun: true)
        XCTAssertEqual(dry.from, PersistentStoreCoordinator.cachedModelName)
        XCTAssertEqual(try Data(contentsOf: store), before, "a dry run writes nothing")
        XCTAssertThrowsError(try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, allowLoss: false)) { error in
            XCTAssertTrue("\(error)".contains("would drop values (dropped Person.id 20)"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: store), before)
        let real = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle)
        XCTAssertEqual(real.description, dry.description.replacingOccurrences(of: "dry run: the whole migration ran on a scratch copy of the store, which is gone; the store is as it was (it drops 20 values: the migration runs only with --allow-loss)\n", with: ""))
        XCTAssertEqual(real.steps.map(\.rows), [["Car": 115, "SportCar": 5, "LuxuryCar": 5, "Person": 20]])
        let opened = try PersistentStoreCoordinator.openIdentifyingVersion(store, withVersionOf: bundle, options: .readOnly)
        XCTAssertEqual(opened.version, "SampleModel2")
        XCTAssertEqual(opened.identifiedBy, .hashes)
        // A store whose cache is not the model that wrote it is not migrated from it.
        let otherDir = TemporaryDirectory()
        let other = try copyStore(folder.appendingPathComponent("SampleModel_V1.sqlite"), into: otherDir)
        var metadata = try PersistentStoreCoordinator.metadataForPersistentStore(at: other)
        metadata["NSStoreModelVersionHashes"] = (metadata["NSStoreModelVersionHashes"] as? [String: Data])?.mapValues { Data($0.reversed()) }
        try PersistentStoreCoordinator.setMetadata(metadata, forPersistentStoreAt: other)
        XCTAssertThrowsError(try PersistentStoreCoordinator.migrateStore(at: other, toVersionOf: bundle, dryRun: true))
    }

    /// wibosco's chain with the custom code its versions need: v2 keeps v1's `color` as `hexColor`, v3 moves
    /// `hexColor` into a new required `Color` object. From version 1 (and from version 2), every post reaches version 4
    /// with its values, and its colour in a `Color`.
    func testPoliciesCarryWhatInferenceCannot() throws {
        struct KeepColor: EntityMigrationPolicy {
            func createDestinationInstances(forSource source: MigrationSource, in migration: MigrationContext) throws {
                try migration.destination(for: source, entity: "Post")?.setValue(source["color"], forKey: "hexColor")
            }
        }
        struct ColorObjects: EntityMigrationPolicy {
            func createDestinationInstances(forSource source: MigrationSource, in migration: MigrationContext) throws {
                guard let post = try migration.destination(for: source, entity: "Post") else { return }
                let color = try migration.context.insertNewObject(forEntityName: "Color")
                try color.setValue(source["hexColor"], forKey: "hex")
                try color.setValue("color-\(source.key)", forKey: "colorID")
                try post.setValue(color, forKey: "color")
            }
        }
        var policies = MigrationPolicies()
        policies.set(KeepColor(), forEntity: "Post", migratingTo: "CoreDataMigration_Example 2")
        policies.set(ColorObjects(), forEntity: "Post", migratingTo: "CoreDataMigration_Example 3")
        let folder = try storesFolder().appendingPathComponent("wibosco-migration")
        let bundle = folder.appendingPathComponent("CoreDataMigration_Example.xcdatamodeld")
        for (file, colorColumn) in [("CoreDataMigration_Example_1.sqlite", "ZCOLOR"), ("CoreDataMigration_Example_2.sqlite", "ZHEXCOLOR")] {
            let dir = TemporaryDirectory()
            let store = try copyStore(folder.appendingPathComponent(file), into: dir)
            let before = try rows(store.path, "ZPOST")
            let plan = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, policies: policies)
            XCTAssertEqual(plan.to, "CoreDataMigration_Example 4", file)
            let posts = try rows(store.path, "ZPOST"), colors = try rows(store.path, "ZCOLOR")
            XCTAssertEqual(posts.count, before.count, file)
            XCTAssertEqual(colors.count, before.count, file)
            for (key, old) in before {
                let new = try XCTUnwrap(posts[key], "\(file) p\(key)")
                XCTAssertEqual(new["ZPOSTID"], old["ZPOSTID"])
                XCTAssertEqual(new["ZDATE"], old["ZDATE"])
                guard case let colorKey? = new["ZCOLOR"].flatMap({ $0.hasPrefix("integer(") ? Int64($0.dropFirst(8).dropLast()) : nil }) else {
                    return XCTFail("\(file) p\(key) has no colour: \(new)")
                }
                XCTAssertEqual(colors[colorKey]?["ZHEX"], old[colorColumn], "\(file) p\(key)'s colour")
                XCTAssertEqual(colors[colorKey]?["ZPOST"], "integer(\(key))", "the inverse")
            }
        }
    }

    /// Every fixture store older than its bundle's current version reaches it (wibosco's with the colour policies
    /// its version 3 needs), and every column both versions have keeps every row's value, table by table.
    func testEveryOlderFixtureStoreMigratesToItsCurrentVersionKeepingItsValues() throws {
        let folder = try storesFolder()
        struct ColorObjects: EntityMigrationPolicy {
            func createDestinationInstances(forSource source: MigrationSource, in migration: MigrationContext) throws {
                guard let post = try migration.destination(for: source, entity: "Post") else { return }
                let color = try migration.context.insertNewObject(forEntityName: "Color")
                try color.setValue(source["hexColor"], forKey: "hex")
                try post.setValue(color, forKey: "color")
            }
        }
        var policies = MigrationPolicies()
        policies.set(ColorObjects(), forEntity: "Post", migratingTo: "CoreDataMigration_Example 3")
        let cases = [
            ("bnr-coredatastack/TestModel.sqlite", "bnr-coredatastack/Sample.xcdatamodeld", "TestModel 2"),
            ("flickrsearcher/starter_database.sqlite", "flickrsearcher/FlickrSearcher.xcdatamodeld", "FlickrSearcher 2"),
            ("wibosco-migration/CoreDataMigration_Example_1.sqlite", "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", "CoreDataMigration_Example 4"),
            ("wibosco-migration/CoreDataMigration_Example_2.sqlite", "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", "CoreDataMigration_Example 4"),
            ("wibosco-migration/CoreDataMigration_Example_3.sqlite", "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", "CoreDataMigration_Example 4"),
        ]
        for (file, bundleName, current) in cases {
            let dir = TemporaryDirectory()
            let store = try copyStore(folder.appendingPathComponent(file), into: dir)
            let bundle = folder.appendingPathComponent(bundleName)
            // The old rows, read through a scratch copy (the store may hold its rows in its -wal).
            let reader = try ReadOnlyOpening(path: store.path).connect(reportingAs: store.path)
            let oldModel = try PersistentStoreCoordinator.open(store, withVersionOf: bundle, options: .readOnly).coordinator.managedObjectModel
            var before: [String: [Int64: [String: String]]] = [:]
            for table in oldModel.tables { before[table.name] = try rows(reader, table.name) }
            let plan = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, policies: policies)
            XCTAssertEqual(plan.to, current, file)
            XCTAssertEqual(try ManagedObjectModel.versions(ofBundle: bundle).first?.name, current, "\(file): the bundle's current version")
            let after = try SQLiteConnection(path: store.path, create: false)
            let newModel = try ManagedObjectModel(loadingContentsOf: bundle)
            // Columns that hold the same property in both versions (v4's ZCOLOR is a relationship, v1's a string).
            func properties(_ model: ManagedObjectModel, _ table: String) -> [String: String] {
                var result: [String: String] = [:]
                for entity in model.entities where entity.table.name == table {
                    for property in entity.properties { if let column = property.columnName { result[column] = "\(type(of: property)) \(property.name)" } }
                }
                return result
            }
            var compared = 0
            for (table, oldRows) in before {
                guard let newRows = try? rows(after, table) else { continue }
                let (oldProperties, newProperties) = (properties(oldModel, table), properties(newModel, table))
                let same = Set(oldProperties.keys.filter { oldProperties[$0] == newProperties[$0] })
                XCTAssertEqual(newRows.count, oldRows.count, "\(file) \(table)")
                for (key, old) in oldRows {
                    let new = try XCTUnwrap(newRows[key], "\(file) \(table) p\(key)")
                    XCTAssertEqual(new["Z_PK"], old["Z_PK"])
                    for (column, value) in old where same.contains(column) {
                        XCTAssertEqual(new[column], value, "\(file) \(table) p\(key) \(column)")
                        compared += 1
                    }
                }
            }
            XCTAssertGreaterThanOrEqual(compared, before.values.reduce(0) { $0 + $1.count }, "\(file): at least a value per row")
        }
    }

    /// CoreDataPlus's V2 store to V3 through the Xcode-compiled mapping model V2toV3.cdm: `Car.maker` becomes a
    /// `Maker` object (its policy class, V2to3MakerPolicy, written here in Swift), `previousOwners` starts as the
    /// mapping's `$source.owner`, and every other value stays.
    func testACompiledMappingModelWithItsPolicyMigratesAStep() throws {
        struct MakerPolicy: EntityMigrationPolicy {
            func createDestinationInstances(forSource source: MigrationSource, in migration: MigrationContext) throws {
                guard let name = source["maker"] as? String, let car = try migration.destination(for: source, entity: "Car") else { return }
                let request = FetchRequest<ManagedObject>(entityName: "Maker", predicate: try ObjectPredicate(parsing: "name == %@", name))
                let maker = try migration.context.fetch(request).first ?? migration.context.insertNewObject(forEntityName: "Maker")
                try maker.setValue(name, forKey: "name")
                try car.setValue(maker, forKey: "createdBy")
            }
        }
        let folder = try storesFolder().appendingPathComponent("coredataplus-samplemodel")
        let dir = TemporaryDirectory()
        let store = try copyStore(folder.appendingPathComponent("SampleModel_V2.sqlite"), into: dir)
        let before = try rows(store.path, "ZCAR")
        let mapping = try MappingModel(compiledMappingModelAt: folder.appendingPathComponent("V2toV3.cdm"))
        XCTAssertEqual(mapping.entityMappings.map { $0.name ?? "" }, ["CarToCar", "LuxuryCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar", "Maker"])
        XCTAssertEqual(mapping.entityMappings.first?.policyClassName, "V2to3MakerPolicy")
        // Xcode's source form says the same, once both are resolved against the versions.
        let models = Dictionary(uniqueKeysWithValues: try ManagedObjectModel.versions(ofBundle: folder.appendingPathComponent("SampleModel.xcdatamodeld")).map { ($0.name, $0.model) })
        func summary(_ model: MappingModel) throws -> [String] {
            try model.resolved(from: models["SampleModel2"]!, to: models["SampleModel3"]!).entityMappings.map { m in
                "\(m.name ?? "") \(m.source ?? "-")→\(m.destination) \(m.policyClassName ?? "-") "
                    + m.attributes.sorted { $0.destination < $1.destination }.map { "\($0.source ?? "-")→\($0.destination)" }.joined(separator: ",") + " "
                    + m.relationships.sorted { $0.destination < $1.destination }.map { "\($0.source ?? "-")→\($0.destination)" }.joined(separator: ",")
            }.sorted()
        }
        let source = try MappingModel(xcodeMappingModelAt: folder.appendingPathComponent("V2toV3.xcmappingmodel"))
        XCTAssertEqual(try summary(source), try summary(mapping))
        let bundle = folder.appendingPathComponent("SampleModel.xcdatamodeld")
        XCTAssertThrowsError(try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, version: "SampleModel3", mappings: [mapping])) { error in
            XCTAssertTrue("\(error)".contains("names the policy class V2to3MakerPolicy; give it in Swift"), "\(error)")
        }
        var policies = MigrationPolicies()
        policies.set(MakerPolicy(), forClassName: "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        let plan = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, version: "SampleModel3", mappings: [mapping], policies: policies)
        XCTAssertTrue(plan.description.contains("'SampleModel2' → 'SampleModel3' (mapping model)"), plan.description)
        let cars = try rows(store.path, "ZCAR"), makers = try rows(store.path, "ZMAKER")
        XCTAssertEqual(cars.count, before.count)
        XCTAssertEqual(Set(makers.values.compactMap { $0["ZNAME"] }), Set(before.values.compactMap { $0["ZMAKER"] }), "one Maker per maker name")
        let makerNames = Dictionary(uniqueKeysWithValues: makers.map { ("integer(\($0.key))", $0.value["ZNAME"]) })
        let joins = try rows(store.path, "Z_1PREVIOUSOWNERS")
        XCTAssertEqual(joins.count, before.values.filter { $0["ZOWNER"] != "null" }.count, "each car's owner is its first previous owner")
        for (key, old) in before {
            let new = try XCTUnwrap(cars[key])
            for column in ["Z_ENT", "ZNUMBERPLATE", "ZMODEL", "ZOWNER", "ZMARKEDFORDELETIONASOF", "ZISLIMITEDEDITION"] {
                XCTAssertEqual(new[column], old[column], "Car p\(key) \(column)")
            }
            XCTAssertEqual(makerNames[new["ZCREATEDBY"] ?? ""] ?? nil, old["ZMAKER"], "Car p\(key)'s maker")
        }
    }

    /// The mapping model the issue asks for, written for the test as Xcode's editor would write it: version 2 → 3 of
    /// wibosco's model makes a `Color` of every `Post` (its `hexColor` becoming the colour's `hex`) and links them
    /// (`FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PostToColor", $source)`);
    /// no code.
    func testAMappingModelMovesAnAttributeIntoANewEntity() throws {
        typealias M = MappingModel
        let mapping = M(entityMappings: [
            M.EntityMapping(name: "PostToPost", source: "Post", destination: "Post",
                            attributes: [M.AttributeMapping(destination: "date", source: "date"), M.AttributeMapping(destination: "postID", source: "postID")],
                            relationships: [M.RelationshipMapping(destination: "color", source: M.sourceObject)]),
            M.EntityMapping(name: "PostToColor", source: "Post", destination: "Color",
                            attributes: [M.AttributeMapping(destination: "hex", source: "hexColor"), M.AttributeMapping(destination: "colorID", source: "postID")],
                            relationships: [M.RelationshipMapping(destination: "post", source: M.sourceObject)]),
        ])
        let folder = try storesFolder().appendingPathComponent("wibosco-migration")
        let dir = TemporaryDirectory()
        let store = try copyStore(folder.appendingPathComponent("CoreDataMigration_Example_2.sqlite"), into: dir)
        let before = try rows(store.path, "ZPOST")
        let plan = try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: folder.appendingPathComponent("CoreDataMigration_Example.xcdatamodeld"), mappings: [mapping])
        XCTAssertTrue(plan.description.contains("'CoreDataMigration_Example 2' → 'CoreDataMigration_Example 3' (mapping model)"), plan.description)
        XCTAssertTrue(plan.description.contains("'CoreDataMigration_Example 3' → 'CoreDataMigration_Example 4' (inferred)"), plan.description)
        let posts = try rows(store.path, "ZPOST"), colors = try rows(store.path, "ZCOLOR")
        XCTAssertEqual(posts.count, before.count)
        XCTAssertEqual(colors.count, before.count)
        for (key, old) in before {
            XCTAssertEqual(posts[key]?["ZPOSTID"], old["ZPOSTID"])
            XCTAssertEqual(posts[key]?["ZCOLOR"], "integer(\(key))", "Post p\(key) → the Color made of it")
            XCTAssertEqual(colors[key]?["ZHEX"], old["ZHEXCOLOR"], "Color p\(key)")
            XCTAssertEqual(colors[key]?["ZCOLORID"], old["ZPOSTID"])
            XCTAssertEqual(colors[key]?["ZPOST"], "integer(\(key))")
        }
    }

    /// A uniqueness constraint the new version adds, which the old data breaks, stops the migration naming the
    /// object; the store keeps every byte.
    func testANewUniquenessConstraintTheDataBreaksStopsTheMigration() throws {
        let dir = TemporaryDirectory()
        let bundle = dir.file("Tags.xcdatamodeld")
        let tag = #"<entity name="Tag"><attribute name="name" optional="YES" attributeType="String"/>"#
        try writeModelBundle(at: bundle, versions: [
            ("Tags", tag + "</entity>"),
            ("Tags 2", tag + #"<uniquenessConstraints><uniquenessConstraint><constraint value="name"/></uniquenessConstraint></uniquenessConstraints></entity>"#),
        ])
        let store = dir.file("tags.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(loadingContentsOf: bundle.appendingPathComponent("Tags.xcdatamodel")))
            try coordinator.addPersistentStore(at: store)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                for name in ["swift", "sqlite", "swift"] { try context.insertNewObject(forEntityName: "Tag").setValue(name, forKey: "name") }
                try context.save()
            }
        }
        let before = try Data(contentsOf: store)
        XCTAssertThrowsError(try PersistentStoreCoordinator.migrateStore(at: store, toVersionOf: bundle, version: "Tags 2")) { error in
            XCTAssertEqual("\(error)", "migration, entity 'Tag': from 'Tags' to 'Tags 2': p3 has the ZNAME of an object copied before it; the new version's uniqueness constraint does not allow two")
        }
        XCTAssertEqual(try Data(contentsOf: store), before)
    }

    /// A mapping model's XML is checked before it is parsed: an internal DTD subset (entity definitions) is refused,
    /// as are bytes that are not XML.
    func testHostileMappingModelsAreRefused() throws {
        let dir = TemporaryDirectory()
        let cases: [(String, String)] = [
            (#"<?xml version="1.0"?><!DOCTYPE database [<!ENTITY a "b">]><database/>"#, "a document type declaration (<!DOCTYPE) at line 1"),
            ("<database><object", "not well-formed XML"),
            (#"<?xml version="1.0"?><?evil?><database/>"#, "a processing instruction"),
        ]
        for (text, message) in cases {
            let file = dir.file("m-\(UUID().uuidString).xml")
            try Data(text.utf8).write(to: file)
            XCTAssertThrowsError(try MappingModel(xcodeMappingModelAt: file), text) { error in
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
        let junk = dir.file("junk.cdm")
        try Data("not an archive".utf8).write(to: junk)
        XCTAssertThrowsError(try MappingModel(compiledMappingModelAt: junk)) { error in
            XCTAssertTrue("\(error)".contains("is not a compiled mapping model"), "\(error)")
        }
    }

    // MARK: Inference

    func model(_ entities: [EntityDescription]) throws -> ManagedObjectModel { try ManagedObjectModel(entities: entities) }

    func testInferenceRules() throws {
        let old = try model([
            EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "title", type: .string), AttributeDescription(name: "count", type: .integer16),
                AttributeDescription(name: "when", type: .date), AttributeDescription(name: "gone", type: .string),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "item", isToMany: true),
            ]),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "item", destination: "Item", inverse: "tags"),
            ]),
        ])
        let heading = AttributeDescription(name: "heading", type: .string)
        heading.renamingIdentifier = "title"
        let new = try model([
            EntityDescription(name: "Item", properties: [
                heading, AttributeDescription(name: "count", type: .integer64), AttributeDescription(name: "when", type: .date),
                AttributeDescription(name: "rank", type: .integer32, isOptional: false, defaultValue: Int64(3)),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "items", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Tag", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "items", destination: "Item", inverse: "tags", isToMany: true),
            ]),
        ])
        let mapping = try MappingModel.inferred(from: old, to: new)
        XCTAssertEqual(mapping.changes, [
            "entity Item: count (number conversion), title → heading, + rank, - gone",
            "entity Tag: + items (relationship), - item",
        ])
        // A type Core Data cannot convert.
        let stringly = try model([EntityDescription(name: "Item", properties: [AttributeDescription(name: "when", type: .string)])])
        XCTAssertThrowsError(try MappingModel.inferred(from: old, to: stringly)) { error in
            XCTAssertEqual("\(error)", "migration, entity 'Item', property 'when': its type changes from Date to String, which a lightweight migration cannot convert; that needs a migration policy (EntityMigrationPolicy) for the entity")
        }
        // With a policy for the entity, the property is left to it.
        XCTAssertEqual(try MappingModel.inferred(from: old, to: stringly, withPolicies: ["Item"]).changes.first, "entity Item: + when, - count, - gone, - title, - when, - tags",
                       "the old Date is dropped; the new String is the policy's")
    }

    /// Links survive a relationship turned from one-to-many into many-to-many, and the added required attribute gets
    /// its default in every row; the store migrates as it is added with Core Data's two options.
    func testRelationshipsChangingStorageKeepTheirLinks() throws {
        let dir = TemporaryDirectory()
        let bundle = dir.file("Shop.xcdatamodeld")
        try writeModelBundle(at: bundle, versions: [("Shop", """
            <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/>
              <relationship name="tags" optional="YES" toMany="YES" destinationEntity="Tag" inverseName="item" inverseEntity="Tag"/></entity>
            <entity name="Tag"><attribute name="name" optional="YES" attributeType="String"/>
              <relationship name="item" optional="YES" maxCount="1" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/></entity>
            """), ("Shop 2", """
            <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/>
              <attribute name="stock" attributeType="Integer 32" defaultValueString="7"/>
              <relationship name="tags" optional="YES" toMany="YES" destinationEntity="Tag" inverseName="items" inverseEntity="Tag"/></entity>
            <entity name="Tag"><attribute name="name" optional="YES" attributeType="String"/>
              <relationship name="items" optional="YES" toMany="YES" destinationEntity="Item" inverseName="tags" inverseEntity="Item"/></entity>
            """)], current: "Shop 2")
        let store = dir.file("shop.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(loadingContentsOf: bundle.appendingPathComponent("Shop.xcdatamodel")))
            try coordinator.addPersistentStore(at: store)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                for i in 0..<3 {
                    let item = try context.insertNewObject(forEntityName: "Item")
                    try item.setValue("item \(i)", forKey: "title")
                    for j in 0..<2 {
                        let tag = try context.insertNewObject(forEntityName: "Tag")
                        try tag.setValue("tag \(i).\(j)", forKey: "name")
                        try tag.setValue(item, forKey: "item")
                    }
                }
                try context.save()
            }
        }
        // Without the options the changed model is refused; with them (as Core Data's), the store is migrated as it opens.
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(loadingContentsOf: bundle)).addPersistentStore(at: store))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(loadingContentsOf: bundle))
        try coordinator.addPersistentStore(at: store, options: [.migratesAutomatically, .infersMappingAutomatically])
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            request.sortDescriptors = [FetchSortDescriptor(keyPath: "title")]
            let items = try context.fetch(request)
            XCTAssertEqual(items.map { $0.value(forKey: "stock") as? Int32 }, [7, 7, 7])
            XCTAssertEqual(items.map { Set($0.objects(forRelationship: "tags").compactMap { $0.value(forKey: "name") as? String }) },
                           [["tag 0.0", "tag 0.1"], ["tag 1.0", "tag 1.1"], ["tag 2.0", "tag 2.1"]])
        }
    }
}

/// Writes an `.xcdatamodeld` bundle: one `.xcdatamodel` per version with the given entity XML, and the current
/// version's marker when one is named.
private func writeModelBundle(at bundle: URL, versions: [(name: String, entities: String)], current: String? = nil) throws {
    for (name, entities) in versions {
        let folder = bundle.appendingPathComponent(name + ".xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(#"<?xml version="1.0" encoding="UTF-8"?><model type="com.apple.IDECoreDataModeler.DataModel">\#(entities)</model>"#.utf8)
            .write(to: folder.appendingPathComponent("contents"))
    }
    if let current {
        try Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\#(current).xcdatamodel</string></dict></plist>"#.utf8)
            .write(to: bundle.appendingPathComponent(".xccurrentversion"))
    }
}
