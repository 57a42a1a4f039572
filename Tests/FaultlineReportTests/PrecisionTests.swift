import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// Precision measured, not assumed: small workloads, each with one known problem and its fixed twin, run on the
/// engine with a trace; the analyzers must find exactly the planted problem on the broken one and nothing on the
/// fixed one (and nothing on either where the "problem" is none: an unselective predicate, a small table).
final class PrecisionTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-precision-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    /// What the fixed twins change in the model.
    struct Indexes {
        var price = false
        var categoryPrice = false
        var normalizedName = false
    }

    /// Shops with an owner and 20 products each; products with a category (10), a price (0–999) and a name.
    func model(_ indexes: Indexes) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Shop", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "productCount", type: .integer32),
                RelationshipDescription(name: "owner", destination: "Owner", inverse: "shop"),
                RelationshipDescription(name: "products", destination: "Product", inverse: "shop", isToMany: true),
            ]),
            EntityDescription(name: "Owner", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "shop", destination: "Shop", inverse: "owner"),
            ]),
            EntityDescription(name: "Product", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "nameNormalized", type: .string, isIndexed: indexes.normalizedName),
                AttributeDescription(name: "category", type: .integer32, isIndexed: true),
                AttributeDescription(name: "price", type: .integer32, isIndexed: indexes.price),
                RelationshipDescription(name: "shop", destination: "Shop", inverse: "products"),
            ], compoundIndexes: indexes.categoryPrice ? [["category", "price"]] : []),
        ])
    }

    static let shops = 100, productsPerShop = 20

    /// Writes the store (probes off), then runs `body` with a trace on and returns the kinds of the findings.
    func findings(_ indexes: Indexes = Indexes(), thresholds: AnalyzerThresholds = AnalyzerThresholds(), _ body: (ManagedObjectContext) throws -> Void) throws -> [Finding] {
        let model = try model(indexes)
        let store = dir.appendingPathComponent("store-\(UUID().uuidString).sqlite")
        let setup = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try setup.addPersistentStore(at: store)
        let writer = ManagedObjectContext(.privateQueue, coordinator: setup)
        try writer.performAndWait {
            for s in 0..<Self.shops {
                let shop = try writer.insertNewObject(forEntityName: "Shop")
                try shop.setValue("Shop \(s)", forKey: "name")
                try shop.setValue(Int32(Self.productsPerShop), forKey: "productCount")
                let owner = try writer.insertNewObject(forEntityName: "Owner")
                try owner.setValue("Owner \(s)", forKey: "name")
                try shop.setValue(owner, forKey: "owner")
                for p in 0..<Self.productsPerShop {
                    let i = s * Self.productsPerShop + p
                    let product = try writer.insertNewObject(forEntityName: "Product")
                    try product.setValue("Prodüct \(i)", forKey: "name")
                    try product.setValue("product \(i)", forKey: "nameNormalized")
                    try product.setValue(Int32(i % 10), forKey: "category")
                    try product.setValue(Int32(i * 7919 % 1000), forKey: "price")
                    try product.setValue(shop, forKey: "shop")
                }
            }
            try writer.save()
        }
        let path = dir.appendingPathComponent("trace-\(UUID().uuidString).jsonl").path
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(tracePath: path)))
        try coordinator.addPersistentStore(at: store)
        do {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait { try body(context) }
        }
        coordinator.probes.flush()
        return Analyzers(thresholds: thresholds).findings(in: try TraceFile(path: path))
    }

    func request(_ entity: String, _ predicate: String? = nil, _ arguments: [Any] = [], sort: String? = nil) throws -> FetchRequest<ManagedObject> {
        FetchRequest<ManagedObject>(entityName: entity, predicate: try predicate.map { try ObjectPredicate(parsing: $0, argumentArray: arguments) },
                                    sortDescriptors: sort.map { [FetchSortDescriptor(keyPath: $0)] } ?? [])
    }

    /// The broken workload gives exactly `expected`; the fixed one gives nothing.
    func check(_ expected: [Finding.Kind], thresholds: AnalyzerThresholds = AnalyzerThresholds(),
               broken: (Indexes, (ManagedObjectContext) throws -> Void), fixed: (Indexes, (ManagedObjectContext) throws -> Void),
               file: StaticString = #filePath, line: UInt = #line) throws {
        let found = try findings(broken.0, thresholds: thresholds, broken.1)
        XCTAssertEqual(found.map(\.kind), expected, found.map { "\($0.kind.rawValue): \($0.evidence)" }.joined(separator: "\n"), file: file, line: line)
        let twin = try findings(fixed.0, thresholds: thresholds, fixed.1)
        XCTAssertEqual(twin.map(\.kind), [], twin.map { "\($0.kind.rawValue): \($0.evidence)" }.joined(separator: "\n"), file: file, line: line)
    }

    func testNPlusOneOnAToOne() throws {
        try check([.nPlusOne], broken: (Indexes(), { context in
            for shop in try context.fetch(try self.request("Shop")) { _ = (shop.value(forKey: "owner") as? ManagedObject)?.value(forKey: "name") }
        }), fixed: (Indexes(), { context in
            let request = try self.request("Shop")
            request.relationshipKeyPathsForPrefetching = ["owner"]
            for shop in try context.fetch(request) { _ = (shop.value(forKey: "owner") as? ManagedObject)?.value(forKey: "name") }
        }))
    }

    func testNPlusOneOnAToMany() throws {
        try check([.relationshipFaultStorm], broken: (Indexes(), { context in
            for shop in try context.fetch(try self.request("Shop")) { _ = shop.objects(forRelationship: "products").map { $0.value(forKey: "name") } }
        }), fixed: (Indexes(), { context in
            let request = try self.request("Shop")
            request.relationshipKeyPathsForPrefetching = ["products"]
            for shop in try context.fetch(request) { _ = shop.objects(forRelationship: "products").map { $0.value(forKey: "name") } }
        }))
    }

    func testPrefetchUnused() throws {
        try check([.unusedPrefetch], broken: (Indexes(), { context in
            let request = try self.request("Shop")
            request.relationshipKeyPathsForPrefetching = ["products"]
            for shop in try context.fetch(request) { _ = shop.value(forKey: "name") }
            context.reset()
        }), fixed: (Indexes(), { context in
            for shop in try context.fetch(try self.request("Shop")) { _ = shop.value(forKey: "name") }
            context.reset()
        }))
    }

    func testRepeatedFetch() throws {
        try check([.repeatedFetch], broken: (Indexes(), { context in
            for _ in 0..<6 { _ = try context.fetch(try self.request("Shop", "name == 'Shop 7'")) }
        }), fixed: (Indexes(), { context in
            let shop = try context.fetch(try self.request("Shop", "name == 'Shop 7'"))
            for _ in 0..<6 { _ = shop.first?.value(forKey: "name") }
        }))
    }

    /// Fetching objects the context has registered already: a lookup would do.
    func testAvoidableFetch() throws {
        try check([.avoidableFetch], broken: (Indexes(), { context in
            // The program holds the shops (registered while it does), then fetches them again one by one.
            let shops = try context.fetch(try self.request("Shop"))
            for name in ["Shop 1", "Shop 2", "Shop 3"] { _ = try context.fetch(try self.request("Shop", "name == %@", [name])) }
            withExtendedLifetime(shops) {}
        }), fixed: (Indexes(), { context in
            let shops = try context.fetch(try self.request("Shop"))
            for name in ["Shop 1", "Shop 2", "Shop 3"] { _ = shops.first { $0.value(forKey: "name") as? String == name } }
        }))
    }

    func testFetchInALoopThatCouldBeOneIN() throws {
        let names = (0..<40).map { "Shop \($0 * 2)" }
        try check([.fetchInLoop], broken: (Indexes(), { context in
            for name in names { _ = try context.fetch(try self.request("Shop", "name == %@", [name])) }
        }), fixed: (Indexes(), { context in
            _ = try context.fetch(try self.request("Shop", "name IN %@", [names]))
        }))
    }

    func testUnindexedSelectivePredicate() throws {
        try check([.fullScan], broken: (Indexes(), { context in
            _ = try context.fetch(try self.request("Product", "price < 20"))
        }), fixed: (Indexes(price: true), { context in
            _ = try context.fetch(try self.request("Product", "price < 20"))
        }))
    }

    /// Half the products: a scan is the right plan, with or without an index.
    func testUnselectivePredicateGivesNoFinding() throws {
        try check([], broken: (Indexes(), { context in
            _ = try context.count(for: try self.request("Product", "price >= 500"))
        }), fixed: (Indexes(price: true), { context in
            _ = try context.count(for: try self.request("Product", "price >= 500"))
        }))
    }

    func testSortNeedingACompoundIndex() throws {
        try check([.tempBTree], broken: (Indexes(), { context in
            _ = try context.fetch(try self.request("Product", "category == 3", sort: "price"))
        }), fixed: (Indexes(categoryPrice: true), { context in
            _ = try context.fetch(try self.request("Product", "category == 3", sort: "price"))
        }))
    }

    /// 100 owners: scanning them costs microseconds, whatever the predicate.
    func testSmallTableGivesNoFinding() throws {
        try check([], broken: (Indexes(), { context in
            for _ in 0..<3 { context.reset(); _ = try context.fetch(try self.request("Owner", "name == 'Owner 5'")) }
        }), fixed: (Indexes(), { context in
            _ = try context.fetch(try self.request("Owner", "name == 'Owner 5'"))
        }))
    }

    func testManySmallSaves() throws {
        try check([.manySmallSaves], broken: (Indexes(), { context in
            for i in 0..<25 {
                try context.insertNewObject(forEntityName: "Owner").setValue("New \(i)", forKey: "name")
                try context.save()
            }
        }), fixed: (Indexes(), { context in
            for i in 0..<25 { try context.insertNewObject(forEntityName: "Owner").setValue("New \(i)", forKey: "name") }
            try context.save()
        }))
    }

    /// An import in batches whose objects the program keeps (a list of everything imported): the context's registered
    /// objects grow save after save. The twin lets go of each batch and resets.
    func testAContextGrowingAcrossSaves() throws {
        try check([.growingContext], broken: (Indexes(), { context in
            var imported: [ManagedObject] = []
            for batch in 0..<12 {
                for i in 0..<100 { imported.append(try self.owner(context, "Imported \(batch)-\(i)")) }
                try context.save()
            }
            withExtendedLifetime(imported) {}
        }), fixed: (Indexes(), { context in
            for batch in 0..<12 {
                var imported: [ManagedObject] = []
                for i in 0..<100 { imported.append(try self.owner(context, "Imported \(batch)-\(i)")) }
                try context.save()
                imported.removeAll()
                context.reset()
            }
        }))
    }

    private func owner(_ context: ManagedObjectContext, _ name: String) throws -> ManagedObject {
        let owner = try context.insertNewObject(forEntityName: "Owner")
        try owner.setValue(name, forKey: "name")
        return owner
    }

    func testLargeFetchWithoutABatchSize() throws {
        try check([.largeFetchWithoutBatchSize], broken: (Indexes(), { context in
            for product in try context.fetch(try self.request("Product")).prefix(20) { _ = product.value(forKey: "name") }
        }), fixed: (Indexes(), { context in
            let request = try self.request("Product")
            request.fetchBatchSize = 40
            for product in try context.fetch(request).prefix(20) { _ = product.value(forKey: "name") }
        }))
    }

    /// objc.io (P-29): a list's controller over 2,000 rows with no batch size reads every object before the first
    /// screen; with a batch size it reads the keys and the batch shown.
    func testAControllerWithoutABatchSize() throws {
        func list(_ context: ManagedObjectContext, batch: Int) throws {
            let request = try self.request("Product", sort: "category")
            request.fetchBatchSize = batch
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            for row in 0..<20 { _ = controller.object(at: IndexPath(row: row, section: 0)).value(forKey: "name") }
        }
        try check([.controllerWithoutBatchSize], broken: (Indexes(), { try list($0, batch: 0) }), fixed: (Indexes(), { try list($0, batch: 20) }))
    }

    /// A background import of 150 matching objects merged in one save makes one round of 150 changes; merged in saves
    /// of 50, rounds of 50.
    func testAChangeStormAfterAMergedImport() throws {
        func importing(_ context: ManagedObjectContext, saveEvery: Int) throws {
            let request = try self.request("Product", sort: "category")
            request.fetchBatchSize = 20
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: nil, cacheName: nil)
            try controller.performFetch()
            let background = ManagedObjectContext(.privateQueue, coordinator: try XCTUnwrap(context.persistentStoreCoordinator))
            var notes: [SaveNotification] = []
            _ = background.addDidSaveObserver { notes.append($0) }
            try background.performAndWait {
                for i in 0..<150 {
                    let product = try background.insertNewObject(forEntityName: "Product")
                    try product.setValue("Imported \(i)", forKey: "name")
                    try product.setValue(Int32(3), forKey: "category")
                    if (i + 1) % saveEvery == 0 { try background.save() }
                }
            }
            for note in notes { context.mergeChanges(fromContextDidSave: note) }
            XCTAssertEqual(controller.sections?.first?.numberOfObjects, Self.shops * Self.productsPerShop + 150)
        }
        try check([.changeStorm], broken: (Indexes(), { try importing($0, saveEvery: 150) }), fixed: (Indexes(), { try importing($0, saveEvery: 50) }))
    }

    /// A cached controller whose request changes at each launch (a predicate with a new constant) rebuilds its cache
    /// every time; the same request finds it.
    func testASectionCacheRebuiltAtEveryLaunch() throws {
        let saved = FetchedResultsController<ManagedObject>.cacheDirectory
        FetchedResultsController<ManagedObject>.cacheDirectory = dir.appendingPathComponent("caches")
        defer { FetchedResultsController<ManagedObject>.cacheDirectory = saved }
        func launches(_ context: ManagedObjectContext, prices: [Int]) throws {
            FetchedResultsController<ManagedObject>.deleteCache(withName: "products")
            for price in prices {
                let request = try self.request("Product", "price >= %@", [price], sort: "nameNormalized")
                request.fetchBatchSize = 20
                try FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "nameNormalized", cacheName: "products").performFetch()
            }
        }
        // Sectioned by an indexed string it sorts by first: the store counts the sections, so only the cache is at issue.
        try check([.sectionCacheRebuilt], broken: (Indexes(normalizedName: true), { try launches($0, prices: [0, 1, 2]) }),
                  fixed: (Indexes(normalizedName: true), { try launches($0, prices: [0, 0, 0]) }))
    }

    /// A batched controller sectioned by a key the store cannot count (an integer) reads every object for its
    /// sections; sectioned by a string it sorts by first, the store counts them in one GROUP BY.
    func testSectionsReadFromEveryObject() throws {
        func list(_ context: ManagedObjectContext, key: String) throws {
            let request = try self.request("Product", sort: key)
            request.fetchBatchSize = 20
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: key, cacheName: nil)
            try controller.performFetch()
            _ = controller.object(at: IndexPath(row: 0, section: 0)).value(forKey: "name")
        }
        try check([.sectionsFromObjects], broken: (Indexes(), { try list($0, key: "category") }),
                  fixed: (Indexes(normalizedName: true), { try list($0, key: "nameNormalized") }))
    }

    func testBatchSizeTooSmall() throws {
        try check([.batchSizeTooSmall], broken: (Indexes(), { context in
            let request = try self.request("Product", "category == 3")
            request.fetchBatchSize = 2
            for product in try context.fetch(request).prefix(60) { _ = product.value(forKey: "name") }
        }), fixed: (Indexes(), { context in
            let request = try self.request("Product", "category == 3")
            request.fetchBatchSize = 40
            for product in try context.fetch(request).prefix(60) { _ = product.value(forKey: "name") }
        }))
    }

    func testCountingAToManyThroughItsFault() throws {
        try check([.countThroughFaults], broken: (Indexes(), { context in
            for shop in try context.fetch(try self.request("Shop")) { _ = shop.count(forRelationship: "products") }
        }), fixed: (Indexes(), { context in
            for shop in try context.fetch(try self.request("Shop")) { _ = shop.value(forKey: "productCount") }
        }))
    }

    func testCaseAndDiacriticInsensitiveSearchWithoutANormalizedColumn() throws {
        try check([.foldingSearch], broken: (Indexes(), { context in
            _ = try context.fetch(try self.request("Product", "name BEGINSWITH[cd] 'prodUct 12'"))
        }), fixed: (Indexes(normalizedName: true), { context in
            _ = try context.fetch(try self.request("Product", "nameNormalized BEGINSWITH[n] 'product 12'"))
        }))
    }

    func testTextSearchesThatCanUseNoIndex() throws {
        for predicate in ["name CONTAINS 'duct 12'", "name ENDSWITH '12'", "name LIKE '*duct 1?'", "name MATCHES '.*duct 12.*'"] {
            try check([.textScan], broken: (Indexes(), { context in
                _ = try context.fetch(try self.request("Product", predicate))
            }), fixed: (Indexes(normalizedName: true), { context in
                _ = try context.fetch(try self.request("Product", "nameNormalized BEGINSWITH[n] 'product 12'"))
            }))
        }
        let found = try findings { context in _ = try context.fetch(try self.request("Product", "name CONTAINS 'duct 12'")) }
        XCTAssertTrue(found.first?.evidence.contains("searched text with CONTAINS on every row") == true, found.first?.evidence ?? "")
    }

    func testNotEqualOnAnOptionalAttributeWithNilUnsaid() throws {
        try check([.optionalNotEqual], broken: (Indexes(), { context in
            _ = try context.fetch(try self.request("Product", "category == 3 AND price != 5"))
        }), fixed: (Indexes(), { context in
            _ = try context.fetch(try self.request("Product", "category == 3 AND price != 5 AND price != nil"))
        }))
        let found = try findings { context in _ = try context.fetch(try self.request("Product", "category == 3 AND price != 5")) }
        XCTAssertTrue(found.first?.fix.contains("price != %@ OR price == nil") == true, found.first?.fix ?? "")
    }

    func testFaultsWhoseRowsAnotherContextDeleted() throws {
        func deleteFirstFive(_ context: ManagedObjectContext) throws -> [ManagedObjectID] {
            let request = try self.request("Product", sort: "name")
            request.fetchLimit = 5
            let ids = try context.fetchObjectIDs(request)
            let other = ManagedObjectContext(.privateQueue, coordinator: context.coordinator)
            try other.performAndWait {
                for id in ids { other.delete(try other.existingObject(with: id)) }
                try other.save()
            }
            return ids
        }
        try check([.missingRow], broken: (Indexes(), { context in
            for id in try deleteFirstFive(context) { _ = context.object(with: id).value(forKey: "name") }
        }), fixed: (Indexes(), { context in
            for id in try deleteFirstFive(context) { _ = (try? context.existingObject(with: id))?.value(forKey: "name") }
        }))
    }

    func testASaveOverTheLimit() throws {
        var thresholds = AnalyzerThresholds()
        thresholds.largeSaveBytes = 1_000_000
        let text = String(repeating: "x", count: 600_000)
        try check([.largeSave], thresholds: thresholds, broken: (Indexes(), { context in
            for shop in try context.fetch(try self.request("Shop")).prefix(2) { try shop.setValue(text, forKey: "name") }
            try context.save()
        }), fixed: (Indexes(), { context in
            for shop in try context.fetch(try self.request("Shop")).prefix(2) {
                try shop.setValue(text, forKey: "name")
                try context.save()
            }
        }))
    }

    /// A single-attribute index that a compound one begins with, seen as the store is created in the trace.
    func testARedundantIndexSeenWhenTheStoreIsCreated() throws {
        func found(singleIndex: Bool, unique: Bool = false) throws -> [Finding] {
            let model = try ManagedObjectModel(entities: [EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "category", type: .integer32, isIndexed: singleIndex),
                AttributeDescription(name: "price", type: .integer32),
            ], compoundIndexes: [["category", "price"]], uniquenessConstraints: unique ? [["category"]] : [])])
            let name = "index-\(singleIndex)-\(unique)"
            let path = dir.appendingPathComponent(name + ".jsonl").path
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(tracePath: path)))
            try coordinator.addPersistentStore(at: dir.appendingPathComponent(name + ".sqlite"))
            coordinator.probes.flush()
            return Analyzers().findings(in: try TraceFile(path: path))
        }
        let broken = try found(singleIndex: true)
        XCTAssertEqual(broken.map(\.kind), [.redundantIndex], broken.map(\.evidence).joined(separator: "\n"))
        XCTAssertTrue(broken.first?.evidence.hasPrefix("ZITEM: the index ") == true, broken.first?.evidence ?? "")
        XCTAssertEqual(try found(singleIndex: false).map(\.kind), [])
        XCTAssertEqual(try found(singleIndex: false, unique: true).map(\.kind), [], "a uniqueness constraint's index enforces it: not redundant")
        XCTAssertNil(IndexDefinition(sql: "CREATE INDEX broken ON"), "a statement it cannot read names no index")
        XCTAssertEqual(IndexDefinition(sql: "CREATE INDEX IF NOT EXISTS \"Z_Item_c\" ON ZITEM (ZCATEGORY COLLATE BINARY ASC, ZPRICE) WHERE ZPRICE > 0")?.enforcesOrFilters, true)
    }

    /// The most common model shape, inheritance: SQLite walks the sub-entity through the Z_ENT index (SEARCH in the
    /// plan) and still reads every employee. The trace's VM steps tell, and the store proves the index.
    func testASubEntityWalkedThroughItsZENTIndexIsAScan() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Person", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "age", type: .integer32),
                AttributeDescription(name: "salary", type: .integer64),
            ]),
            EntityDescription(name: "Employee", parent: "Person", properties: [AttributeDescription(name: "badge", type: .integer32)]),
        ])
        let store = dir.appendingPathComponent("people.sqlite")
        let path = dir.appendingPathComponent("people.jsonl").path
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(tracePath: path)))
        try coordinator.addPersistentStore(at: store)
        do {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                var people: [[String: any Sendable]] = [], employees: [[String: any Sendable]] = []
                for i in 0..<6_000 {
                    people.append(["name": "p\(i)", "age": 18 + i % 50, "salary": 20_000 + i])
                    employees.append(["name": "e\(i)", "age": i % 100 == 0 ? 25 : 40 + i % 20, "salary": i % 100 == 0 ? 70_000 : 30_000 + i, "badge": i])
                }
                _ = try context.execute(BatchInsertRequest(entityName: "Person", objects: people))
                _ = try context.execute(BatchInsertRequest(entityName: "Employee", objects: employees))
                _ = try context.fetch(try self.request("Employee", "salary > 50000 AND age < 30"))
                // Most employees: walking them all is right.
                _ = try context.count(for: try self.request("Employee", "badge < 5000"))
            }
        }
        coordinator.probes.flush()
        let found = Analyzers().findings(in: try TraceFile(path: path))
        XCTAssertEqual(found.map(\.kind), [.fullScan], found.map(\.evidence).joined(separator: "\n"))
        let walk = try XCTUnwrap(found.first)
        XCTAssertEqual(walk.fetch?.predicate, "salary > 50000 AND age < 30")
        XCTAssertTrue(walk.evidence.contains("walked every row of the entity through its Z_ENT index"), walk.evidence)
        XCTAssertTrue(walk.evidence.contains("examined about 60"), walk.evidence)
        XCTAssertTrue(walk.fix.contains("(ZSALARY, Z_ENT)"), walk.fix)
        let proven = try XCTUnwrap(IndexProver(model: model, store: store).prove(found).first)
        XCTAssertTrue(proven.fix.hasPrefix("CREATE INDEX ZPERSON_Z_ENT_ZSALARY ON ZPERSON (Z_ENT, ZSALARY) — proven on a scratch copy"), proven.fix)
        XCTAssertTrue(proven.fix.contains("examines 60 rows instead of 6000"), proven.fix)
    }
}
