import Foundation
import XCTest
import Faultline
@testable import FaultlineData

final class DataImportExportTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-data-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Dog", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "age", type: .integer16),
                AttributeDescription(name: "chip", type: .integer64),
                AttributeDescription(name: "weight", type: .float),
                AttributeDescription(name: "photo", type: .binary),
                RelationshipDescription(name: "walks", destination: "Walk", inverse: "dog", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Walk", properties: [
                AttributeDescription(name: "date", type: .date),
                RelationshipDescription(name: "dog", destination: "Dog", inverse: "walks"),
            ]),
        ])
    }

    func context() throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(at: dir.appendingPathComponent("store.sqlite"))
        return ManagedObjectContext(.privateQueue, coordinator: coordinator)
    }

    func load(_ json: String, into context: ManagedObjectContext) throws -> DataImporter.Summary {
        try DataImporter(context: context).load(Data(json.utf8), file: "data.json")
    }

    func testLoadAndExportRoundTrip() throws {
        let context = try context()
        let summary = try load("""
        {"Dog": [{"@id": "fido", "name": "Fido", "age": 3, "photo": "AAEC", "walks": ["w2", "w1"]}],
         "Walk": [{"@id": "w1", "date": "2017-03-01T08:00:00Z"}, {"@id": "w2", "date": "2017-03-02T08:00:00.250Z", "dog": "fido"}]}
        """, into: context)
        XCTAssertEqual(summary.inserted, ["Dog": 1, "Walk": 2])
        let exporter = DataExporter(context: ManagedObjectContext(.privateQueue, coordinator: context.coordinator))
        let json = try exporter.export(entityName: "Dog", format: .json)
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        XCTAssertEqual(parsed.count, 1)
        XCTAssertEqual(parsed[0]["name"] as? String, "Fido")
        XCTAssertEqual(parsed[0]["age"] as? Int, 3)
        XCTAssertEqual(parsed[0]["photo"] as? String, "AAEC")
        let walks = try XCTUnwrap(parsed[0]["walks"] as? [String])
        XCTAssertEqual(walks.map { $0.components(separatedBy: "/").last }, ["p2", "p1"], "ordered walks keep the file's order")
        let walkTable = try exporter.export(entityName: "Walk", format: .table)
        XCTAssertTrue(walkTable.contains("2017-03-02T08:00:00.250Z"), walkTable)
        XCTAssertTrue(walkTable.hasSuffix("(2 objects)\n"))
        XCTAssertEqual(try exporter.export(entityName: "Walk", format: .json, limit: 1).components(separatedBy: "\"@id\"").count - 1, 1)
    }

    /// Transformable values print as JSON: Foundation values inside collections as the data format writes them,
    /// an archive of another class as its class name and bytes.
    /// A gzip-compressed data file loads as the plain one does (inputs are told by their first bytes, not their name).
    func testACompressedDataFileLoads() throws {
        let json = #"{"Dog": [{"@id": "fido", "name": "Fido", "age": 3}], "Walk": [{"@id": "w1", "date": "2017-03-01T08:00:00Z", "dog": "fido"}]}"#
        var compressed = Data()
        let deflater = try GzipDeflater()
        Data(json.utf8).withUnsafeBytes { deflater.write($0, flush: .finish) { compressed.append(contentsOf: $0) } }
        XCTAssertEqual(Array(compressed.prefix(2)), [0x1f, 0x8b])
        let url = dir.appendingPathComponent("data.json.gz")
        try compressed.write(to: url)
        let summary = try DataImporter(context: try context()).load(contentsOf: url)
        XCTAssertEqual(summary.inserted, ["Dog": 1, "Walk": 1])
        // Cut short: an error naming the file, nothing written.
        try compressed.prefix(compressed.count / 2).write(to: url)
        let context = try context()
        func dogs() throws -> Int { try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")) } }
        let before = try dogs()
        XCTAssertThrowsError(try DataImporter(context: context).load(contentsOf: url)) { XCTAssertTrue("\($0)".contains("data.json.gz"), "\($0)") }
        XCTAssertEqual(try dogs(), before)
    }

    func testTransformableValuesExportAsJSON() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [AttributeDescription(name: "payload", type: .transformable)]),
        ])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: dir.appendingPathComponent("notes.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let uuid = UUID()
        let foreign = ArchivedObject(classNames: ["UIColor", "NSObject"],
                                     data: try NSKeyedArchiver.archivedData(withRootObject: Swatch(), requiringSecureCoding: false))
        try context.performAndWait {
            let note = try context.insertNewObject(forEntityName: "Note")
            try note.setValue(["when": Date(timeIntervalSinceReferenceDate: 0), "ids": [uuid], "tags": Set(["b", "a"])] as [String: Any], forKey: "payload")
            let other = try context.insertNewObject(forEntityName: "Note")
            try other.setValue(foreign, forKey: "payload")
            try context.save()
        }
        let json = try DataExporter(context: ManagedObjectContext(.privateQueue, coordinator: coordinator)).export(entityName: "Note", format: .json)
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        let payload = try XCTUnwrap(parsed[0]["payload"] as? [String: Any], json)
        XCTAssertEqual(payload["when"] as? String, "2001-01-01T00:00:00.000Z")
        XCTAssertEqual(payload["ids"] as? [String], [uuid.uuidString])
        XCTAssertEqual(payload["tags"] as? [String], ["a", "b"])
        let archived = try XCTUnwrap(parsed[1]["payload"] as? [String: String], json)
        XCTAssertTrue(archived["@class"]?.hasSuffix("Swatch") == true, json)
        XCTAssertEqual(archived["@archive"], foreign.data.base64EncodedString(), "the archive is written back unchanged")
    }

    func testReferencesToStoredObjectsByURI() throws {
        let context = try context()
        _ = try load(#"{"Dog": [{"name": "Rex"}]}"#, into: context)
        let uri = try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))[0].objectID.uriString }
        _ = try load(#"{"Walk": [{"dog": "\#(uri)"}]}"#, into: context)
        try context.performAndWait {
            let dog = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))[0]
            XCTAssertEqual(dog.count(forRelationship: "walks"), 1)
        }
    }

    func testBadDataIsRejectedBeforeAnythingIsWritten() throws {
        let context = try context()
        let cases: [(String, String)] = [
            (#"{"Cat": []}"#, "data 'data.json', entity 'Cat': the model has no such entity (entities: Dog, Walk)"),
            (#"{"Dog": [{"name": "A"}, {"@id": "b", "name": "B", "colour": "red"}]}"#, "data 'data.json', entity 'Dog', record #2 (@id \"b\"), key 'colour': no such attribute or relationship on Dog"),
            (#"{"Dog": [{"name": "A", "age": "three"}]}"#, "data 'data.json', entity 'Dog', record #1, key 'age': expected an integer for a Integer 16 attribute, got the string \"three\""),
            (#"{"Dog": [{"name": "A", "age": 100000}]}"#, "data 'data.json', entity 'Dog', record #1, key 'age': 100000 does not fit in Integer 16 (-32768 to 32767)"),
            (#"{"Walk": [{"date": "yesterday"}]}"#, "data 'data.json', entity 'Walk', record #1, key 'date': 'yesterday' is not an ISO 8601 date"),
            (#"{"Walk": [{"dog": "nobody"}]}"#, "data 'data.json', entity 'Walk', record #1, key 'dog': dangling reference \"nobody\": no record has that @id"),
            (#"{"Walk": [{"@id": "w"}], "Dog": [{"name": "A", "walks": "w"}]}"#, "data 'data.json', entity 'Dog', record #1, key 'walks': a to-many relationship takes an array of references"),
            (#"{"Walk": [{"@id": "w"}, {"dog": "w"}]}"#, "data 'data.json', entity 'Walk', record #2, key 'dog': reference to a Walk, but dog holds Dog objects"),
            (#"{"Dog": [{"@id": "x", "name": "A"}, {"@id": "x", "name": "B"}]}"#, "data 'data.json', entity 'Dog', record #2 (@id \"x\"): '@id' \"x\" is used twice"),
            (#"{"Dog": [{"name": "A", "photo": "%%%"}]}"#, "data 'data.json', entity 'Dog', record #1, key 'photo': '%%%' is not valid base64"),
            ("[1, 2]", "data 'data.json': the top level must be an object of entity names to arrays of records"),
            (#"{"Dog": [{"name": "A"}], "Dog": []}"#, "data 'data.json', entity 'Dog': the entity appears twice at the top level"),
            (#"{"Dog": [{"name": "A"}, {"name": }]}"#, "data 'data.json', entity 'Dog', record #2: not valid JSON (counting from the record's first character): Invalid value around character 9."),
        ]
        for (json, expected) in cases {
            XCTAssertThrowsError(try load(json, into: context), json) { error in
                XCTAssertEqual("\(error)", expected)
            }
        }
        // Invalid UTF-8 inside a record: named by its record, nothing written.
        XCTAssertThrowsError(try DataImporter(context: context).load(Data(#"{"Dog": [{"name": ""#.utf8) + Data([0xFF]) + Data(#""}]}"#.utf8), file: "data.json")) { error in
            XCTAssertTrue("\(error)".hasPrefix("data 'data.json', entity 'Dog', record #1: not valid JSON"), "\(error)")
        }
        XCTAssertThrowsError(try load("{\"Dog\": [", into: context)) { error in
            XCTAssertTrue("\(error)".hasPrefix("data 'data.json': not valid JSON"), "\(error)")
        }
        // A record that passes every check but fails at save (a required name is missing): nothing lands.
        XCTAssertThrowsError(try load(#"{"Dog": [{"name": "Ok"}, {"age": 2}]}"#, into: context)) { error in
            XCTAssertTrue("\(error)".contains("Dog.name"), "\(error)")
        }
        try context.performAndWait {
            XCTAssertEqual(try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).count, 0)
            XCTAssertFalse(context.hasChanges)
        }
    }

    /// Integer 64 values load exactly, to the last digit and at both ends of the range; anything outside the range,
    /// or a number too large to tell which integer it is, is refused with the range named; so are dates Core Data
    /// cannot hold and floats beyond Float's range.
    func testInteger64ValuesLoadExactlyAndOutOfRangeValuesAreRefused() throws {
        let context = try context()
        let exact: [Int64] = [9_007_199_254_740_993, -9_007_199_254_740_993, .max, .min, .max - 1, 0]
        // Foundation reads a fraction of zero exactly too: 9007199254740993.0 is that integer.
        _ = try load(#"{"Dog": [{"name": "fraction", "chip": 9007199254740993.0}]}"#, into: context)
        let records = exact.map { #"{"name": "\#($0)", "chip": \#($0)}"# }.joined(separator: ", ")
        _ = try load(#"{"Dog": [\#(records)]}"#, into: context)
        try context.performAndWait {
            let dogs = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
            XCTAssertEqual(dogs.map { $0.value(forKey: "chip") as? Int64 }, [9_007_199_254_740_993] + exact.map { $0 })
            XCTAssertEqual(dogs.dropFirst().map { "\($0.value(forKey: "name")!)" }, exact.map(String.init))
        }
        let refused: [(String, String)] = [
            ("9223372036854775808", "9223372036854775808 does not fit in Integer 64 (-9223372036854775808 to 9223372036854775807)"),
            ("-9223372036854775809", "-9223372036854775809 does not fit in Integer 64 (-9223372036854775808 to 9223372036854775807)"),
            ("18446744073709551616", "18446744073709551616 does not fit in Integer 64 (-9223372036854775808 to 9223372036854775807)"),
            ("1e19", "1e+19 does not fit in Integer 64 (-9223372036854775808 to 9223372036854775807)"),
            ("9007199254740993e0", "a number with an exponent at or above 2^53 is not read exactly (it read as 9007199254740992.0); write it as a plain integer"),
            ("2.5", "expected an integer for a Integer 64 attribute, got the number 2.5"),
        ]
        for (number, problem) in refused {
            XCTAssertThrowsError(try load(#"{"Dog": [{"name": "x", "chip": \#(number)}]}"#, into: context), number) { error in
                XCTAssertEqual("\(error)", "data 'data.json', entity 'Dog', record #1, key 'chip': \(problem)")
            }
        }
        XCTAssertThrowsError(try load(#"{"Dog": [{"name": "x", "age": 32768}]}"#, into: context)) { error in
            XCTAssertEqual("\(error)", "data 'data.json', entity 'Dog', record #1, key 'age': 32768 does not fit in Integer 16 (-32768 to 32767)")
        }
        XCTAssertThrowsError(try load(#"{"Dog": [{"name": "x", "weight": 1e39}]}"#, into: context)) { error in
            XCTAssertTrue("\(error)".hasSuffix("key 'weight': 1e+39 does not fit in Float (its largest magnitude is 3.4028235e+38)"), "\(error)")
        }
        for date in ["1e300", "-1e300", #""9999-01-01T00:00:00Z""#] {
            XCTAssertThrowsError(try load(#"{"Walk": [{"date": \#(date)}]}"#, into: context), date) { error in
                XCTAssertTrue("\(error)".contains("is outside the dates a Date attribute holds (years 1 to 4001)"), "\(error)")
            }
        }
        try context.performAndWait {
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), exact.count + 1, "refused files wrote nothing")
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Walk")), 0)
        }
    }
}

/// An app's own class in a transformable attribute.
final class Swatch: NSObject, NSCoding {
    override init() {}
    init?(coder: NSCoder) {}
    func encode(with coder: NSCoder) { coder.encode("teal", forKey: "name") }
}
