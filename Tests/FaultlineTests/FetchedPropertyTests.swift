import Foundation
import XCTest
@testable import Faultline

/// Core Data's fetched properties (the Apple guide's FP-01…FP-09): weak, one-way, an array evaluated lazily by a
/// fetch with `$FETCH_SOURCE` and `$FETCHED_PROPERTY`, cached until the object is refreshed, no column — read from
/// Swift, Xcode XML and JSON models.
final class FetchedPropertyTests: XCTestCase {
    private func model(fetched: Bool = true) throws -> ManagedObjectModel {
        let recentHires = FetchedPropertyDescription(
            name: "recentHires", destinationEntityName: "Employee",
            predicate: try ObjectPredicate(parsing: "department == $FETCH_SOURCE AND hired >= 2020 AND status == $FETCHED_PROPERTY.userInfo.status"),
            sortDescriptors: [FetchSortDescriptor(key: "name", ascending: true)], userInfo: ["status": "active"])
        return try ManagedObjectModel(entities: [
            EntityDescription(name: "Department", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "employees", destination: "Employee", inverse: "department", isToMany: true),
            ], fetchedProperties: fetched ? [recentHires] : []),
            EntityDescription(name: "Employee", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "hired", type: .integer32, isOptional: false, defaultValue: Int32(0)),
                AttributeDescription(name: "status", type: .string, isOptional: false, defaultValue: "active"),
                RelationshipDescription(name: "department", destination: "Department", inverse: "employees"),
            ]),
        ])
    }

    /// The Apple guide's "Recent Hires" (FP-01, FP-04, FP-05): an array of the matching employees in the fetch's
    /// order, fetched when first read and not again until the department is refreshed — not dynamic: a new hire
    /// appears only after the refresh.
    func testAFetchedPropertyIsEvaluatedLazilyAndCachedUntilRefresh() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model(), probes: Probes(configuration: ProbeConfiguration(), recorders: [recorder]))
        try coordinator.addPersistentStore(at: dir.file("Staff.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let research = try context.insertNewObject(forEntityName: "Department")
            let sales = try context.insertNewObject(forEntityName: "Department")
            for (name, year, department) in [("Zoe", 2021, research), ("Adam", 2022, research), ("Old", 2001, research), ("Sam", 2023, sales), ("Gone", 2023, research)] {
                let employee = try context.insertNewObject(forEntityName: "Employee")
                if name == "Gone" { try employee.setValue("left", forKey: "status") }
                try employee.setValue(name, forKey: "name")
                try employee.setValue(Int32(year), forKey: "hired")
                try employee.setValue(department, forKey: "department")
            }
            try context.save()
            func fetches() -> Int { recorder.events.filter { if case .fetch = $0 { return true }; return false }.count }
            recorder.removeAll()
            let hires = try XCTUnwrap(research.value(forKey: "recentHires") as? [ManagedObject])
            XCTAssertNil(context.lastFetchedPropertyError)
            XCTAssertEqual(hires.map { $0.value(forKey: "name") as? String }, ["Adam", "Zoe"], "matching, in the request's order")
            XCTAssertEqual(fetches(), 1)
            _ = research.value(forKey: "recentHires")
            XCTAssertEqual(try research.checkedValue(forKey: "recentHires") as? [ManagedObject], hires)
            XCTAssertEqual(fetches(), 1, "cached")

            let newcomer = try context.insertNewObject(forEntityName: "Employee")
            try newcomer.setValue("Bea", forKey: "name")
            try newcomer.setValue(Int32(2024), forKey: "hired")
            try newcomer.setValue(research, forKey: "department")
            try context.save()
            XCTAssertEqual((research.value(forKey: "recentHires") as? [ManagedObject])?.count, 2, "not dynamic (FP-05)")
            context.refresh(research, mergeChanges: false)
            XCTAssertEqual((research.value(forKey: "recentHires") as? [ManagedObject])?.map { $0.value(forKey: "name") as? String }, ["Adam", "Bea", "Zoe"],
                           "evaluated again after a refresh")
            XCTAssertEqual(fetches(), 2)
            XCTAssertEqual(research.value(forKeyPath: "recentHires.name") as? [String], ["Adam", "Bea", "Zoe"])
        }
    }

    /// A fetched property has no column and takes no part in the version hashes (Core Data hashes attributes and
    /// relationships only): a store made without it opens with it.
    func testAFetchedPropertyHasNoColumnAndNoHash() throws {
        let with = try model(), without = try model(fetched: false)
        XCTAssertEqual(with.entity(named: "Department")?.versionHash, without.entity(named: "Department")?.versionHash)
        XCTAssertEqual(with.entity(named: "Department")?.properties.map(\.name), ["name", "employees"])
        XCTAssertEqual(with.entity(named: "Department")?.fetchedProperties.map(\.name), ["recentHires"])
        XCTAssertEqual(with.entity(named: "Department")?.fetchedProperty(named: "recentHires")?.destination?.name, "Employee")
    }

    /// Xcode's XML (`<fetchedProperty><fetchRequest entity= predicateString=/></fetchedProperty>`) and Faultline's JSON
    /// both give fetched properties; a missing destination entity is an error naming it (FP-08).
    func testFetchedPropertiesFromXcodeAndJSONModels() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Manga" representedClassName="Manga" syncable="YES">
                <attribute name="sourceId" optional="YES" attributeType="String"/>
                <fetchedProperty name="unreadChapters" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Chapter" predicateString="$FETCH_SOURCE.sourceId == sourceId AND read == NO"/>
                    <userInfo><entry key="note" value="kept"/></userInfo>
                </fetchedProperty>
            </entity>
            <entity name="Chapter" representedClassName="Chapter" syncable="YES">
                <attribute name="sourceId" optional="YES" attributeType="String"/>
                <attribute name="read" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
            </entity>
        </model>
        """
        let model = try ManagedObjectModel(xcodeContents: Data(xml.utf8))
        let fetched = try XCTUnwrap(model.entity(named: "Manga")?.fetchedProperty(named: "unreadChapters"))
        XCTAssertEqual(fetched.destination?.name, "Chapter")
        XCTAssertEqual(fetched.predicate?.predicateFormat, "$FETCH_SOURCE.sourceId == sourceId AND read == NO")
        XCTAssertEqual(fetched.userInfo, ["note": "kept"])

        let dir = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: dir.file("Manga.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let manga = try context.insertNewObject(forEntityName: "Manga")
            try manga.setValue("s1", forKey: "sourceId")
            for (source, read) in [("s1", false), ("s1", true), ("s2", false)] {
                let chapter = try context.insertNewObject(forEntityName: "Chapter")
                try chapter.setValue(source, forKey: "sourceId")
                try chapter.setValue(read, forKey: "read")
            }
            try context.save()
            XCTAssertEqual((manga.value(forKey: "unreadChapters") as? [ManagedObject])?.count, 1)
        }

        let json = """
        {"entities": [
          {"name": "Folder", "attributes": [{"name": "title", "type": "string"}],
           "fetchedProperties": [{"name": "recent", "entity": "Note", "predicate": "folderTitle == $FETCH_SOURCE.title", "sort": ["-created"]}]},
          {"name": "Note", "attributes": [{"name": "folderTitle", "type": "string"}, {"name": "created", "type": "date"}]}
        ]}
        """
        let fromJSON = try ManagedObjectModel(jsonData: Data(json.utf8))
        let recent = try XCTUnwrap(fromJSON.entity(named: "Folder")?.fetchedProperty(named: "recent"))
        XCTAssertEqual(recent.sortDescriptors.map(\.ascending), [false])
        XCTAssertThrowsError(try ManagedObjectModel(jsonData: Data(json.replacingOccurrences(of: "\"entity\": \"Note\"", with: "\"entity\": \"Nope\"").utf8))) {
            XCTAssertTrue("\($0)".contains("the fetched property's entity 'Nope' does not exist"), "\($0)")
        }
        XCTAssertThrowsError(try ManagedObjectModel(xcodeContents: Data(xml.replacingOccurrences(of: " entity=\"Chapter\" predicateString", with: " predicateString").utf8))) {
            XCTAssertTrue("\($0)".contains("needs a destination entity"), "\($0)")
        }
    }

    /// The fixtures' Xcode models with fetched properties (Aidoku's `unreadChapters`, momcom's `yesBooleans`) load
    /// them.
    func testTheFixturesFetchedPropertiesLoad() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent") }
        for (file, entity, name, destination) in [("21_Aidoku__Aidoku__0.9.xml", "Manga", "unreadChapters", "Chapter"),
                                                  ("36_atomicbird__momcom__momcTests_2.xml", "Entity", "yesBooleans", "Entity")] {
            let url = fixtures.appendingPathComponent("xcdatamodels/\(file)")
            guard FileManager.default.fileExists(atPath: url.path) else { throw XCTSkip("\(file) is absent") }
            let model = try ManagedObjectModel(xcodeContents: Data(contentsOf: url), source: file)
            let fetched = try XCTUnwrap(model.entity(named: entity)?.fetchedProperty(named: name), file)
            XCTAssertEqual(fetched.destination?.name, destination, file)
            XCTAssertNotNil(fetched.predicate, file)
        }
    }

    /// A compiled model's fetched properties (the fixture store's cached model: `Author.feedbacks`, sorted by rating,
    /// and `favFeedbacks`, whose predicate reads `$FETCHED_PROPERTY.userInfo.search`) are read from the archive —
    /// request entity, predicate, sort — and evaluate against the store as Core Data would: the objects matching the
    /// predicate for the source, in the request's order.
    func testACompiledModelsFetchedPropertiesAreReadFromTheArchive() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: no compiled model with fetched properties") }
        let dir = TemporaryDirectory()
        let store = try copyStore(fixtures.appendingPathComponent("coredata-stores/coredataplus-samplemodel2/SampleModel2_V2.sqlite"), into: dir)
        let model = try XCTUnwrap(try ManagedObjectModel.cachedInStore(at: store))
        XCTAssertTrue(model.warnings.isEmpty, "\(model.warnings)")
        let author = try XCTUnwrap(model.entity(named: "Author"))
        let feedbacks = try XCTUnwrap(author.fetchedProperty(named: "feedbacks"))
        XCTAssertEqual(feedbacks.destination?.name, "Feedback")
        XCTAssertEqual(feedbacks.predicate?.predicateFormat, "authorAlias == $FETCH_SOURCE.alias")
        XCTAssertEqual(feedbacks.sortDescriptors, [FetchSortDescriptor(key: "rating", ascending: true)])
        let favourites = try XCTUnwrap(author.fetchedProperty(named: "favFeedbacks"))
        XCTAssertEqual(favourites.userInfo, ["search": "great"])
        XCTAssertEqual(favourites.predicate?.predicateFormat, "authorAlias == $FETCH_SOURCE.alias AND comment CONTAINS[c] $FETCHED_PROPERTY.userInfo.search")
        XCTAssertNil(author.attribute(named: "feedbacks"), "no column")

        // What the store holds, by SQL, against what the fetched properties answer.
        let connection = try SQLiteConnection(path: store.path, create: false)
        func column(_ sql: String) throws -> [Double] {
            let rows = try connection.prepare(sql)
            var values: [Double] = []
            while try rows.step() { values.append(rows.double(at: 0)) }
            return values
        }
        let ratings = try column("SELECT ZRATING FROM ZFEEDBACK WHERE ZAUTHORALIAS = (SELECT ZALIAS FROM ZWRITER WHERE Z_ENT = 6) ORDER BY ZRATING")
        let great = try column("SELECT ZRATING FROM ZFEEDBACK WHERE ZAUTHORALIAS = (SELECT ZALIAS FROM ZWRITER WHERE Z_ENT = 6) AND lower(ZCOMMENT) LIKE '%great%' ORDER BY ZRATING")
        XCTAssertFalse(ratings.isEmpty)
        XCTAssertFalse(great.isEmpty)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: store)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let authors = try context.fetch(FetchRequest<ManagedObject>(entityName: "Author"))
            XCTAssertEqual(authors.count, 1)
            let answered = try XCTUnwrap(authors[0].value(forKey: "feedbacks") as? [ManagedObject])
            XCTAssertNil(context.lastFetchedPropertyError)
            // A Float attribute: compared in Float.
            func rating(_ object: ManagedObject) -> Float { (object.value(forKey: "rating") as? Float) ?? (object.value(forKey: "rating") as? Double).map(Float.init) ?? .nan }
            XCTAssertEqual(answered.map(rating), ratings.map(Float.init))
            let favoured = try XCTUnwrap(authors[0].value(forKey: "favFeedbacks") as? [ManagedObject])
            XCTAssertNil(context.lastFetchedPropertyError)
            XCTAssertEqual(favoured.map(rating).sorted(), great.map(Float.init))
        }
    }

    /// A fetched property Faultline cannot read exactly (a sort by a selector it does not have, a custom operator) is
    /// left out with a warning naming the entity, the property and why — never guessed — and the model still loads.
    func testACompiledFetchedPropertyFaultlineCannotReadIsLeftOutInWords() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: no compiled model with fetched properties") }
        let dir = TemporaryDirectory()
        let store = try copyStore(fixtures.appendingPathComponent("coredata-stores/coredataplus-samplemodel2/SampleModel2_V2.sqlite"), into: dir)
        let connection = try SQLiteConnection(path: store.path, create: false)
        let row = try connection.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE")
        XCTAssertTrue(try row.step())
        var archive = try RawDeflate.inflate(row.data(at: 0))
        func patch(_ old: [UInt8], _ new: [UInt8]) throws {
            let range = try XCTUnwrap(archive.range(of: Data(old)), "\(old)")
            XCTAssertNil(archive[range.upperBound...].range(of: Data(old)), "one occurrence")
            archive.replaceSubrange(range, with: new)
        }
        try patch(Array("compare:".utf8), Array("reverse:".utf8))   // feedbacks' sort selector
        try patch([0x10, 99], [0x10, 11])                           // favFeedbacks' CONTAINS becomes a custom selector
        let model = try ManagedObjectModel(compiledModel: archive, source: "patched")
        let author = try XCTUnwrap(model.entity(named: "Author"))
        XCTAssertTrue(author.fetchedProperties.isEmpty)
        XCTAssertNotNil(author.attribute(named: "alias"))
        let warnings = model.warnings.map { "\($0)" }
        XCTAssertEqual(warnings.count, 2, "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.contains("Author") && $0.contains("feedbacks") && $0.contains("reverse:") }, "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.contains("favFeedbacks") && $0.contains("operator") }, "\(warnings)")
    }

    /// An archived predicate whose parts are shared — 40 compounds, each listing the next twice, so that each level
    /// doubles the work (2^40 visits) while none nests too deep — is refused with `Limits.archivedObjectVisits`,
    /// not printed for ever.
    func testAnArchivedPredicateSharingItsPartsIsRefusedInBoundedWork() {
        let levels = 40
        // Objects: 0 "$null", 1 the compound class, 2 the array class, 3 the true predicate's class, 4 the true
        // predicate, then each level's compound and its array.
        var objects: [PropertyListValue] = [
            .string("$null"),
            .dictionary(["$classname": .string("NSCompoundPredicate")]),
            .dictionary(["$classname": .string("NSArray")]),
            .dictionary(["$classname": .string("NSTruePredicate")]),
            .dictionary(["$class": .uid(3)]),
        ]
        for level in 0..<levels {
            let compound = 5 + 2 * level
            let next = level == levels - 1 ? 4 : compound + 2
            objects.append(.dictionary(["$class": .uid(1), "NSCompoundPredicateType": .integer(1), "NSSubpredicates": .uid(compound + 1)]))
            objects.append(.dictionary(["$class": .uid(2), "NS.objects": .array([.uid(next), .uid(next)])]))
        }
        let archive = KeyedArchive(objects: objects, top: ["root": .uid(5)])
        XCTAssertThrowsError(try ArchivedPredicate(archive: archive).format(archive.objects[5])) { error in
            XCTAssertTrue("\(error)".contains("Limits.archivedObjectVisits"), "\(error)")
        }
        // Three levels are printed whole.
        let small = KeyedArchive(objects: Array(objects.prefix(5)) + [
            .dictionary(["$class": .uid(1), "NSCompoundPredicateType": .integer(1), "NSSubpredicates": .uid(6)]),
            .dictionary(["$class": .uid(2), "NS.objects": .array([.uid(4), .uid(4)])]),
        ], top: ["root": .uid(5)])
        XCTAssertEqual(try ArchivedPredicate(archive: small).format(small.objects[5]), "(TRUEPREDICATE) AND (TRUEPREDICATE)")
    }
}
