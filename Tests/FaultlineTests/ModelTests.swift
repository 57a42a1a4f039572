import Foundation
import XCTest
@testable import Faultline

final class ModelTests: XCTestCase {
    func testEveryFixtureModelLoadsAndItsStoreIsCreated() throws {
        guard let fixtures = fixturesDirectory() else {
            throw XCTSkip("../shared/fixtures is absent; fixture models not checked")
        }
        let folder = fixtures.appendingPathComponent("xcdatamodels")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".xml") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 20)
        let dir = TemporaryDirectory()
        for file in files {
            let model: ManagedObjectModel
            do {
                model = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent(file))
            } catch {
                XCTFail("\(file): \(error)")
                continue
            }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            XCTAssertNoThrow(try coordinator.addPersistentStore(at: dir.file(file + ".sqlite")), file)
            // Reopening checks the stored version hashes against the model.
            let again = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent(file)))
            XCTAssertNoThrow(try again.addPersistentStore(at: dir.file(file + ".sqlite")), file)
            // Every table the DDL names exists.
            let tables = try sqliteTables(dir.file(file + ".sqlite"))
            for table in model.tables { XCTAssertTrue(tables.contains(table.name), "\(file): \(table.name)") }
            for join in model.joinTables { XCTAssertTrue(tables.contains(join.name), "\(file): \(join.name)") }
        }
    }

    func testFixtureFeaturesAreRead() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent") }
        let folder = fixtures.appendingPathComponent("xcdatamodels")
        let momc = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent("36_atomicbird__momcom__momcTests_2.xml"))
        let entity = try XCTUnwrap(momc.entity(named: "Entity"))
        XCTAssertEqual(entity.superentity?.name, "AbstractEntity")
        XCTAssertTrue(try XCTUnwrap(momc.entity(named: "AbstractEntity")).isAbstract)
        XCTAssertEqual(entity.versionHashModifier, "myVersionHashModifier")
        XCTAssertEqual(entity.compoundIndexes, [["booleanAttribute", "dateAttribute"], ["decimalAttribute", "doubleAttribute"]])
        let date = try XCTUnwrap(entity.attribute(named: "dateAttribute"))
        XCTAssertEqual(date.minValue, 284000400)
        XCTAssertEqual((date.defaultValue as? Date)?.timeIntervalSinceReferenceDate, 388411200)
        XCTAssertTrue(try XCTUnwrap(entity.attribute(named: "binaryAttribute")).isTransient)
        XCTAssertEqual(try XCTUnwrap(entity.attribute(named: "transformableAttribute")).valueTransformerName, "myValueTransformer")
        let others = try XCTUnwrap(entity.relationship(named: "otherEntities"))
        XCTAssertTrue(others.isToMany)
        XCTAssertEqual(others.minCount, 1)
        XCTAssertEqual(others.maxCount, 9)
        XCTAssertEqual(others.inverse?.name, "mainEntity")
        XCTAssertEqual(momc.fetchRequestTemplates["FetchRequestObjects"]?.predicate, "booleanAttribute == 1 AND floatAttribute > 5")
        XCTAssertEqual(momc.configurations["UnrelatedConfiguration"], ["UnrelatedEntity"])
        XCTAssertTrue(entity.table.indexes.contains { $0.name == "ZABSTRACTENTITY_ZBOOLEANATTRIBUTE_ZDATEATTRIBUTE" })

        let pedido = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent("44_colemancda__Pedido__Model.xml"))
        let images = try XCTUnwrap(pedido.entity(named: "MenuItem")?.relationship(named: "images"))
        XCTAssertTrue(images.isOrdered)
        XCTAssertEqual(images.deleteRule, .cascade)
        XCTAssertEqual(images.inverse?.orderColumnName, "Z_FOK_MENUITEM")
        let establishments = try XCTUnwrap(pedido.entity(named: "MenuItem")?.relationship(named: "establishments"))
        XCTAssertNotNil(establishments.joinTable, "many-to-many uses a join table")
        XCTAssertEqual(try XCTUnwrap(pedido.entity(named: "LocalizedText")?.relationship(named: "menuItemLocalizedDescription")).deleteRule, .noAction)
        XCTAssertTrue(try XCTUnwrap(pedido.entity(named: "Image")?.attribute(named: "data")).allowsExternalBinaryDataStorage)
    }

    func testXcodeBundleUsesCurrentVersion() throws {
        let dir = TemporaryDirectory()
        let bundle = dir.file("Zoo.xcdatamodeld")
        for (version, attribute) in [("Zoo.xcdatamodel", "name"), ("Zoo 2.xcdatamodel", "nickname")] {
            let folder = bundle.appendingPathComponent(version)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Animal" representedClassName="Animal" syncable="YES">
                    <attribute name="\(attribute)" optional="YES" attributeType="String"/>
                </entity>
            </model>
            """
            try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        let plist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Zoo 2.xcdatamodel</string></dict></plist>
        """
        try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let model = try ManagedObjectModel(loadingContentsOf: bundle)
        XCTAssertNotNil(model.entity(named: "Animal")?.attribute(named: "nickname"))
        let folderModel = try ManagedObjectModel(loadingContentsOf: bundle.appendingPathComponent("Zoo.xcdatamodel"))
        XCTAssertNotNil(folderModel.entity(named: "Animal")?.attribute(named: "name"))
    }

    func testJSONModel() throws {
        let json = """
        {"entities": [
          {"name": "Dog", "attributes": [{"name": "name", "type": "string", "optional": false, "default": "Rex"},
                                         {"name": "born", "type": "date", "default": "2020-01-02T03:04:05Z"}],
           "relationships": [{"name": "walks", "destination": "Walk", "inverse": "dog", "toMany": true, "ordered": true, "deleteRule": "cascade"}],
           "uniquenessConstraints": [["name"]]},
          {"name": "Walk", "attributes": [{"name": "date", "type": "Date"}],
           "relationships": [{"name": "dog", "destination": "Dog", "inverse": "walks"}]}
        ]}
        """
        let model = try ManagedObjectModel(jsonData: Data(json.utf8))
        let dog = try XCTUnwrap(model.entity(named: "Dog"))
        XCTAssertEqual(dog.attribute(named: "name")?.defaultValue as? String, "Rex")
        XCTAssertEqual((dog.attribute(named: "born")?.defaultValue as? Date)?.timeIntervalSince1970, 1577934245)
        XCTAssertEqual(dog.relationship(named: "walks")?.deleteRule, .cascade)
        XCTAssertEqual(dog.uniquenessConstraints, [["name"]])
    }

    func testMalformedModelsAreRejectedWithWhereAndWhat() {
        func error(_ json: String) -> String {
            do {
                _ = try ManagedObjectModel(jsonData: Data(json.utf8), source: "m.json")
                return "no error"
            } catch { return "\(error)" }
        }
        XCTAssertEqual(error(#"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "Strng"}]}]}"#).hasPrefix("model 'm.json', entity 'A', property 'x': unknown attribute type 'Strng'"), true)
        XCTAssertEqual(error(#"{"entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B"}]}]}"#),
                       "model 'm.json', entity 'A', property 'b': destination entity 'B' does not exist")
        XCTAssertEqual(error(#"{"entities": [{"name": "A", "relationships": [{"name": "b", "destination": "B", "inverse": "a"}]}, {"name": "B", "relationships": [{"name": "a", "destination": "A", "inverse": "other"}, {"name": "other", "destination": "A"}]}]}"#),
                       "model 'm.json', entity 'A', property 'b': inverse 'B.a' points back to 'other', not to 'b'")
        XCTAssertEqual(error(#"{"entities": [{"name": "A"}, {"name": "A"}]}"#), "model 'm.json', entity 'A': duplicate entity name")
        XCTAssertEqual(error(#"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "string"}, {"name": "x", "type": "string"}]}]}"#),
                       "model 'm.json', entity 'A', property 'x': duplicate property name")
        XCTAssertEqual(error(#"{"entities": [{"name": "A", "parent": "Nope"}]}"#), "model 'm.json', entity 'A': parent entity 'Nope' does not exist")
        XCTAssertEqual(error(#"{"entities": [{"name": "A", "attributes": [{"name": "x", "type": "integer16", "default": 70000}]}]}"#),
                       "model 'm.json', entity 'A', property 'x': default value: 70000 does not fit in Integer 16 (-32768 to 32767)")
        XCTAssertEqual(error(#"{"entities": [{"name": "Dog"}, {"name": "DOG"}]}"#),
                       "model 'm.json', entity 'DOG': its table ZDOG would be the same as entity 'Dog''s (names differ only in case)")
        XCTAssertEqual(error(#"{"entities": [{"name": "_METADATA"}]}"#),
                       "model 'm.json', entity '_METADATA': the name is reserved for the store's table Z_METADATA")
        XCTAssertTrue(error("{not json").hasPrefix("model 'm.json': not valid JSON"))
        XCTAssertEqual(error(#"{"entities": [{"name": "A", "colour": 1}]}"#).contains("unknown key 'colour'"), true)
    }

    func testMalformedXMLIsRejected() {
        XCTAssertThrowsError(try ManagedObjectModel(xcodeContents: Data("<model><entity name=\"A\">".utf8), source: "x")) { error in
            XCTAssertTrue("\(error)".hasPrefix("model 'x': malformed XML"), "\(error)")
        }
        let badType = #"<model><entity name="A"><attribute name="x" attributeType="Array"/></entity></model>"#
        XCTAssertThrowsError(try ManagedObjectModel(xcodeContents: Data(badType.utf8), source: "x")) { error in
            XCTAssertEqual("\(error)", "model 'x', entity 'A', property 'x': unknown attribute type 'Array'")
        }
        XCTAssertThrowsError(try ManagedObjectModel(loadingContentsOf: URL(fileURLWithPath: "/nonexistent/model.json"))) { error in
            XCTAssertEqual("\(error)", "model '/nonexistent/model.json': no such file or folder")
        }
    }

    /// Bytes that are not UTF-8 anywhere in an Xcode model (a comment included) are an error naming the byte,
    /// before Foundation's XMLParser sees them (it traps on some).
    func testModelBytesThatAreNotUTF8AreNamed() {
        let cases: [([UInt8], String)] = [
            (Array("<!--".utf8) + [0xFF] + Array("--><model/>".utf8), "byte 0xFF at offset 4 (line 1, column 5)"),
            (Array("<model>\n<entity name=\"A".utf8) + [0xC3, 0x28] + Array("\"/></model>".utf8), "byte 0xC3 at offset 23 (line 2, column 16)"),
            (Array("<model>".utf8) + [0xED, 0xA0, 0x80] + Array("</model>".utf8), "byte 0xED at offset 7 (line 1, column 8)"),
            (Array("<model>".utf8) + [0xF0, 0x9F, 0x98], "byte 0xF0 at offset 7 (line 1, column 8)"),
        ]
        for (bytes, position) in cases {
            XCTAssertThrowsError(try ManagedObjectModel(xcodeContents: Data(bytes), source: "contents")) { error in
                XCTAssertEqual("\(error)", "model 'contents': not UTF-8: \(position) does not begin a valid UTF-8 sequence")
            }
        }
    }

    /// Found by fuzz-xcode-model: Foundation's XMLParser crashes (strlen of a null pointer) on a processing
    /// instruction without data; a DOCTYPE's entities could expand to one. Xcode writes neither: both are refused.
    func testProcessingInstructionsAndDoctypesAreRefusedBeforeParsing() throws {
        let cases: [(String, String)] = [
            ("<?x.0?>\n<model/>", "a processing instruction (<?…?>) at line 1: an Xcode model has none"),
            ("<?xml version=\"1.0\"?>\n<model>\n<?target?></model>", "a processing instruction (<?…?>) at line 3: an Xcode model has none"),
            ("<model/>\n<?xml version=\"1.0\"?>", "a processing instruction (<?…?>) at line 2: an Xcode model has none"),
            ("<!DOCTYPE m [<!ENTITY e \"&#60;?x?>\">]>\n<model>&e;</model>", "a document type declaration (<!DOCTYPE) at line 1: an Xcode model has none"),
            ("<?xml vut Etytinna<?xml mtifier=\"one\"?>\n<model/>", "a malformed XML declaration (<?xml …?>) at line 1"),
        ]
        for (xml, problem) in cases {
            XCTAssertThrowsError(try ManagedObjectModel(xcodeContents: Data(xml.utf8), source: "m")) { error in
                XCTAssertEqual("\(error)", "model 'm': \(problem)")
            }
        }
        // The declaration, comments and CDATA that mention `<?` are fine.
        let fine = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- <?x?> --><model><entity name=\"A\"><userInfo><entry key=\"k\" value=\"v\"/></userInfo></entity></model>"
        XCTAssertEqual(try ManagedObjectModel(xcodeContents: Data(fine.utf8), source: "m").entities.map(\.name), ["A"])
    }

    /// Models that Xcode compiles load, with a warning naming the attribute: a Boolean default written as a number,
    /// a UUID default that is not a UUID (no default, as in Core Data).
    func testLenientWhereXcodeIsLenient() throws {
        let xml = """
        <model><entity name="Item">
        <attribute name="done" optional="YES" attributeType="Boolean" defaultValueString="0.0" usesScalarValueType="YES"/>
        <attribute name="flagged" optional="YES" attributeType="Boolean" defaultValueString="1.0" usesScalarValueType="YES"/>
        <attribute name="identifier" optional="YES" attributeType="UUID" defaultValueString="empy" usesScalarValueType="NO"/>
        </entity></model>
        """
        let model = try ManagedObjectModel(xcodeContents: Data(xml.utf8), source: "Items")
        let item = try XCTUnwrap(model.entity(named: "Item"))
        XCTAssertEqual(item.attribute(named: "done")?.defaultValue as? Bool, false)
        XCTAssertEqual(item.attribute(named: "flagged")?.defaultValue as? Bool, true)
        XCTAssertNil(item.attribute(named: "identifier")?.defaultValue)
        XCTAssertEqual(model.warnings.map(\.description), [
            "model 'Items', entity 'Item', property 'done': Boolean default value '0.0' read as a number, as Xcode does: NO",
            "model 'Items', entity 'Item', property 'flagged': Boolean default value '1.0' read as a number, as Xcode does: YES",
            "model 'Items', entity 'Item', property 'identifier': default value 'empy' is not a UUID; the attribute has no default, as in Core Data",
        ])
        let notNumber = #"<model><entity name="A"><attribute name="b" attributeType="Boolean" defaultValueString="maybe"/></entity></model>"#
        XCTAssertThrowsError(try ManagedObjectModel(xcodeContents: Data(notNumber.utf8), source: "x")) { error in
            XCTAssertEqual("\(error)", "model 'x', entity 'A', property 'b': default value 'maybe' is not a valid Boolean")
        }
    }

    /// An inheritance chain longer than `Limits.inheritanceDepth` is refused before anything recurses over it.
    func testInheritanceDepthIsLimited() throws {
        func chain(_ levels: Int) -> [EntityDescription] {
            (0...levels).map { i in EntityDescription(name: "E\(i)", parent: i == 0 ? nil : "E\(i - 1)", properties: [AttributeDescription(name: "a\(i)", type: .string)]) }
        }
        XCTAssertNoThrow(try ManagedObjectModel(entities: chain(Limits.inheritanceDepth)))
        XCTAssertThrowsError(try ManagedObjectModel(entities: chain(2_000))) { error in
            XCTAssertEqual("\(error)", "entity 'E101': more than 100 levels of parent entities (Limits.inheritanceDepth)")
        }
    }

    func testLayoutFollowsCoreData() throws {
        let model = try makeTestModel()
        let region = try XCTUnwrap(model.entity(named: "Region"))
        let country = try XCTUnwrap(model.entity(named: "Country"))
        let continent = try XCTUnwrap(model.entity(named: "Continent"))
        XCTAssertTrue(country.table === region.table && continent.table === region.table)
        XCTAssertEqual(region.table.name, "ZREGION")
        XCTAssertEqual(continent.entityNumber, region.entityNumber + 1, "a hierarchy's numbers are contiguous")
        XCTAssertEqual(region.lastDescendantNumber, region.entityNumber + 2)
        XCTAssertEqual(model.entity(named: "Walk")?.relationship(named: "dog")?.columnName, "ZDOG")
        XCTAssertEqual(model.entity(named: "Walk")?.relationship(named: "dog")?.orderColumnName, "Z_FOK_DOG")
        XCTAssertEqual(model.entity(named: "Dog")?.relationship(named: "tags")?.joinTable?.name, "Z_\(model.entity(named: "Dog")!.entityNumber)TAGS")
        let ddl = SchemaGenerator.script(for: model)
        XCTAssertTrue(ddl.contains("CREATE TABLE ZDOG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOLLAR INTEGER, ZOWNER INTEGER, ZNAME VARCHAR )"), ddl)
        XCTAssertTrue(ddl.contains("CREATE INDEX ZDOG_ZNAME_INDEX ON ZDOG (ZNAME)"))
        XCTAssertTrue(ddl.contains("CREATE INDEX ZWALK_ZDOG_INDEX ON ZWALK (ZDOG)"))
        XCTAssertTrue(ddl.contains("CREATE INDEX ZREGION_Z_ENT_INDEX ON ZREGION (Z_ENT)"))
        XCTAssertTrue(ddl.contains("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"))
        XCTAssertTrue(ddl.contains("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"))
        XCTAssertNotEqual(region.versionHash, country.versionHash)
        XCTAssertEqual(region.versionHash.count, 32)
    }

    /// Named fetch indexes and a root entity's uniqueness constraints are Core Data's `Z_<Entity>_…` indexes, each
    /// column `COLLATE BINARY` with its order; a sub-entity's constraint gets no index (the save checks it), nor does
    /// an R-tree fetch index.
    func testFetchIndexesAndUniquenessConstraintsAreCoreDataIndexes() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Post" representedClassName="Post">
                <attribute name="author" optional="YES" attributeType="String"/>
                <attribute name="when" optional="YES" attributeType="Date"/>
                <attribute name="latitude" optional="YES" attributeType="Double"/>
                <fetchIndex name="byAuthorNewestFirst">
                    <fetchIndexElement property="author" type="Binary" order="ascending"/>
                    <fetchIndexElement property="when" type="Binary" order="descending"/>
                </fetchIndex>
                <fetchIndex name="byPlace">
                    <fetchIndexElement property="latitude" type="RTree" order="ascending"/>
                </fetchIndex>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="author"/><constraint value="when"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Story" representedClassName="Story" parentEntity="Post">
                <attribute name="slug" optional="YES" attributeType="String"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="slug"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
        </model>
        """
        let model = try ManagedObjectModel(xcodeContents: Data(xml.utf8), source: "contents")
        let indexes = SchemaGenerator.statements(for: model).filter { $0.contains(" INDEX ") }
        XCTAssertEqual(indexes.sorted(), [
            "CREATE INDEX ZPOST_Z_ENT_INDEX ON ZPOST (Z_ENT)",
            "CREATE INDEX Z_Post_byAuthorNewestFirst ON ZPOST (ZAUTHOR COLLATE BINARY ASC, ZWHEN COLLATE BINARY DESC)",
            "CREATE UNIQUE INDEX Z_Post_UNIQUE_author_when ON ZPOST (ZAUTHOR COLLATE BINARY ASC, ZWHEN COLLATE BINARY ASC)",
            // A sub-entity's constraint is an index on the shared table, as Core Data makes it.
            "CREATE UNIQUE INDEX Z_Story_UNIQUE_slug ON ZPOST (ZSLUG COLLATE BINARY ASC)",
        ])
        XCTAssertEqual(model.entity(named: "Post")?.fetchIndexes.map(\.name), ["byAuthorNewestFirst", "byPlace"])
    }

    /// Core Data's column order as a real store shows it: integers and booleans, then to-one keys, then their
    /// `Z_FOK_` columns, then doubles, floats and dates together by name, then strings, then data and UUIDs.
    func testColumnOrderInterleavesRealsAndDatesByName() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Goal", properties: [
                AttributeDescription(name: "updatedAt", type: .date), AttributeDescription(name: "targetWeight", type: .float),
                AttributeDescription(name: "createdAt", type: .date), AttributeDescription(name: "armsVolume", type: .double),
                AttributeDescription(name: "restDay", type: .boolean), AttributeDescription(name: "weekly", type: .integer32),
                AttributeDescription(name: "id", type: .uuid), AttributeDescription(name: "note", type: .string),
                RelationshipDescription(name: "plan", destination: "Plan", inverse: "goals"),
            ]),
            EntityDescription(name: "Plan", properties: [
                RelationshipDescription(name: "goals", destination: "Goal", inverse: "plan", isToMany: true, isOrdered: true),
            ]),
        ])
        XCTAssertTrue(SchemaGenerator.script(for: model).contains(
            "CREATE TABLE ZGOAL ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZRESTDAY INTEGER, ZWEEKLY INTEGER, ZPLAN INTEGER, Z_FOK_PLAN INTEGER, "
            + "ZARMSVOLUME FLOAT, ZCREATEDAT TIMESTAMP, ZTARGETWEIGHT FLOAT, ZUPDATEDAT TIMESTAMP, ZNOTE VARCHAR, ZID BLOB )"), SchemaGenerator.script(for: model))
    }

    private func sqliteTables(_ url: URL) throws -> Set<String> {
        let connection = try SQLiteConnection(path: url.path, create: false)
        let statement = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.text(at: 0)) }
        return names
    }

    /// A composite attribute in a JSON model: its elements are columns in the composite's place, a nested composite
    /// flattened too; the value round-trips through a real store as a dictionary. Bad composites are refused,
    /// naming the property: no elements, a name that is not an identifier (it would reach SQL), nesting past the limit.
    func testCompositeAttributesFromJSONAndTheirLimits() throws {
        let json = #"{"entities": [{"name": "Place", "attributes": [{"name": "title", "type": "string"},"#
            + #"{"name": "address", "type": "composite", "elements": [{"name": "street", "type": "string"}, {"name": "zip", "type": "integer32"},"#
            + #"{"name": "geo", "type": "composite", "elements": [{"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}]}]}]}]}"#
        let model = try ManagedObjectModel(jsonData: Data(json.utf8))
        XCTAssertEqual(SchemaGenerator.statements(for: model).first,
                       "CREATE TABLE ZPLACE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZZIP INTEGER, ZLAT FLOAT, ZLON FLOAT, ZSTREET VARCHAR, ZTITLE VARCHAR )")
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let place = try context.insertNewObject(forEntityName: "Place")
            try place.setValue(["street": "Main", "zip": 12345, "geo": ["lat": 1.5, "lon": -2.0]], forKey: "address")
            try context.save()
            context.reset()
            let read = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(entityName: "Place")).first)
            let address = try XCTUnwrap(read.value(forKey: "address") as? [String: Any])
            XCTAssertEqual(address["street"] as? String, "Main")
            XCTAssertEqual(address["zip"] as? Int32, 12345)
            XCTAssertEqual((address["geo"] as? [String: Any])?["lon"] as? Double, -2.0)
            XCTAssertEqual(read.value(forKey: "address.geo.lat") as? Double, 1.5)
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Place", predicate: try ObjectPredicate(parsing: "address.geo.lat > 1"))), 1)
            XCTAssertThrowsError(try read.setValue(["zip": "not a number"], forKey: "address"))
            XCTAssertEqual((read.value(forKey: "address") as? [String: Any])?["street"] as? String, "Main", "a refused value sets nothing")
        }
        func refused(_ elements: String) -> String {
            let text = #"{"entities": [{"name": "Place", "attributes": [{"name": "address", "type": "composite""# + elements + "}]}]}"
            do { _ = try ManagedObjectModel(jsonData: Data(text.utf8)); return "" } catch { return "\(error)" }
        }
        XCTAssertTrue(refused("").contains("needs 'elements'"), refused(""))
        XCTAssertTrue(refused(#", "elements": [{"name": "a b", "type": "string"}]"#).contains("letters, digits and underscores"))
        XCTAssertTrue(refused(#", "elements": [{"name": "x", "type": "string"}, {"name": "x", "type": "string"}]"#).contains("repeated"))
        var nested = #"{"name": "leaf", "type": "string"}"#
        for i in 0...Limits.compositeDepth { nested = #"{"name": "c\#(i)", "type": "composite", "elements": ["# + nested + "]}" }
        XCTAssertTrue(refused(#", "elements": ["# + nested + "]").contains("Limits.compositeDepth"))
        // Xcode's XML composites are not read: said so, not guessed.
        let xml = #"<?xml version="1.0"?><model><entity name="Place"><attribute name="address" attributeType="Composite"/></entity></model>"#
        XCTAssertThrowsError(try ManagedObjectModel(xcodeContents: Data(xml.utf8), source: "contents")) { error in
            XCTAssertTrue("\(error)".contains("composite attributes in Xcode's XML are not read yet"), "\(error)")
        }
    }
}

/// The common ISO 8601 forms read directly give exactly the formatter's dates; the rest are left to it.
final class ISO8601FastPathTests: XCTestCase {
    func testTheDirectReadingAgreesWithTheFormatter() {
        let plain = ISO8601DateFormatter()
        let dateOnly = ISO8601DateFormatter()
        dateOnly.formatOptions = [.withFullDate]
        var generator = SystemRandomNumberGenerator()
        var texts = ["1583-01-01", "1600-02-29", "1900-03-01", "1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2017-03-01T08:00:00Z",
                     "2038-01-19T03:14:08Z", "9999-12-31T23:59:59Z", "2024-12-31", "2100-02-28T12:00:00Z"]
        for _ in 0..<2_000 {
            let year = Int.random(in: 1583...9999, using: &generator), month = Int.random(in: 1...12, using: &generator)
            let day = Int.random(in: 1...28, using: &generator)
            let time = String(format: "T%02d:%02d:%02dZ", Int.random(in: 0...23, using: &generator), Int.random(in: 0...59, using: &generator), Int.random(in: 0...59, using: &generator))
            texts.append(String(format: "%04d-%02d-%02d", year, month, day) + (Bool.random(using: &generator) ? time : ""))
        }
        for text in texts {
            let expected = text.count == 10 ? dateOnly.date(from: text) : plain.date(from: text)
            XCTAssertNotNil(expected, text)
            XCTAssertEqual(ISO8601.parseCommonForm(text), expected, text)
        }
        // Left to the formatter: other forms, impossible fields, years before the Gregorian reform.
        for text in ["2017-02-30", "2017-13-01", "2017-03-01T24:00:00Z", "2017-03-01T08:00:60Z", "1582-10-15", "2017-03-01T08:00:00+01:00",
                     "2017-03-01T08:00:00.5Z", "20170301", "2017-3-01", "２０17-03-01"] {
            XCTAssertNil(ISO8601.parseCommonForm(text), text)
        }
    }
}
