import Foundation
import XCTest
@testable import Faultline

/// Core Data's own file formats: binary property lists, keyed archives, raw deflate and compiled models.
final class CoreDataFormatsTests: XCTestCase {
    // MARK: Binary property lists

    /// What Foundation's writer produces, the reader reads back, value for value.
    func testBinaryPropertyListsFoundationWritesAreReadBack() throws {
        let long = String(repeating: "ü", count: 40)
        let plist: [String: Any] = [
            "small": 7, "negative": -3, "big": Int64.max, "min": Int64.min, "real": 2.5, "yes": true, "no": false,
            "ascii": "plain", "unicode": long, "data": Data([0, 1, 2, 255]), "date": Date(timeIntervalSinceReferenceDate: -86_400.5),
            "array": [1, "two", [3.0]], "nested": ["deeper": ["deepest": "x"]],
            "many": Array(0..<300),
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        let value = try BinaryPropertyList.read(data)
        XCTAssertEqual(value["small"], .integer(7))
        XCTAssertEqual(value["negative"], .integer(-3))
        XCTAssertEqual(value["big"], .integer(.max))
        XCTAssertEqual(value["min"], .integer(.min))
        XCTAssertEqual(value["real"], .real(2.5))
        XCTAssertEqual(value["yes"], .boolean(true))
        XCTAssertEqual(value["no"], .boolean(false))
        XCTAssertEqual(value["ascii"], .string("plain"))
        XCTAssertEqual(value["unicode"], .string(long))
        XCTAssertEqual(value["data"], .data(Data([0, 1, 2, 255])))
        XCTAssertEqual(value["date"], .date(-86_400.5))
        XCTAssertEqual(value["array"], .array([.integer(1), .string("two"), .array([.real(3)])]))
        XCTAssertEqual(value["nested"]?["deeper"]?["deepest"], .string("x"))
        XCTAssertEqual(value["many"]?.elements?.count, 300)
    }

    /// Damaged and hostile property lists are errors that say what is wrong, never a trap or a hang.
    func testDamagedPropertyListsAreClearErrors() throws {
        let good = try PropertyListSerialization.data(fromPropertyList: ["a": [1, 2, 3]], format: .binary, options: 0)
        func message(_ bytes: Data) -> String {
            do { _ = try BinaryPropertyList.read(bytes); return "read" } catch { return "\(error)" }
        }
        XCTAssertEqual(message(Data("bplist00".utf8)), "not a binary property list (no 'bplist00' header)")
        XCTAssertEqual(message(Data("<?xml version".utf8) + Data(count: 40)), "not a binary property list (no 'bplist00' header)")
        // Every truncation and every single-byte change of a real list reads or fails cleanly.
        for length in 0..<good.count { _ = message(good.prefix(length)) }
        for offset in 0..<good.count {
            for byte: UInt8 in [0x00, 0x0f, 0x7f, 0xff, 0xaf, 0xdf] {
                var damaged = good
                damaged[offset] = byte
                _ = message(damaged)
            }
        }
        // An array that contains itself, and arrays nested deeper than the limit.
        XCTAssertTrue(message(Self.plist(objects: [[0xa1, 0x00]], top: 0)).contains("contains itself"))
        let depth = Limits.propertyListDepth + 5
        var chain: [[UInt8]] = []
        for i in 0..<depth { chain.append(i == depth - 1 ? [0x10, 0x01] : [0xa1, UInt8(i + 1)]) }
        XCTAssertTrue(message(Self.plist(objects: chain, top: 0)).contains("nested more than \(Limits.propertyListDepth) deep"))
        // A shared object reused many times is read once (no exponential walk).
        var fan: [[UInt8]] = []
        for i in 0..<60 { fan.append(i == 59 ? [0x10, 0x01] : [0xa2, UInt8(i + 1), UInt8(i + 1)]) }
        XCTAssertEqual(message(Self.plist(objects: fan, top: 0)), "read")
        // Lengths and references beyond the data.
        XCTAssertTrue(message(Self.plist(objects: [[0x4f, 0x13, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]], top: 0)).contains("runs past the objects"))
        XCTAssertTrue(message(Self.plist(objects: [[0xa1, 0x09]], top: 0)).contains("does not exist"))
        // 8-byte offsets and references past Int.max (a fuzzer's find: they trapped converting to Int).
        func wide(object: [UInt8], offset: [UInt8]) -> Data {
            var bytes = Array("bplist00".utf8) + object
            let table = bytes.count
            bytes += offset
            var trailer = [UInt8](repeating: 0, count: 32)
            trailer[6] = 8
            trailer[7] = 8
            trailer[15] = 1
            trailer[31] = UInt8(table)
            return Data(bytes + trailer)
        }
        let huge = [UInt8](repeating: 0xff, count: 8), eight: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 8]
        XCTAssertTrue(message(wide(object: [0x10, 0x01], offset: huge)).contains("runs past the objects"), message(wide(object: [0x10, 0x01], offset: huge)))
        XCTAssertTrue(message(wide(object: [0xa1] + huge, offset: eight)).contains("does not exist"), message(wide(object: [0xa1] + huge, offset: eight)))
    }

    /// A binary property list of raw objects (1-byte offsets and references).
    static func plist(objects: [[UInt8]], top: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects { offsets.append(bytes.count); bytes += object }
        let table = bytes.count
        let offsetSize = table > 255 ? 2 : 1
        for offset in offsets { bytes += offsetSize == 2 ? [UInt8(offset >> 8), UInt8(offset & 0xff)] : [UInt8(offset)] }
        var trailer = [UInt8](repeating: 0, count: 32)
        trailer[6] = UInt8(offsetSize)
        trailer[7] = 1
        trailer[15] = UInt8(objects.count)
        trailer[23] = UInt8(top)
        trailer[30] = UInt8(table >> 8)
        trailer[31] = UInt8(table & 0xff)
        return Data(bytes + trailer)
    }

    // MARK: Keyed archives

    /// Archives Foundation's `NSKeyedArchiver` writes decode to the Swift values they hold.
    func testKeyedArchivesOfFoundationValuesDecode() throws {
        let uuid = UUID()
        let date = Date(timeIntervalSinceReferenceDate: 639_503_569.5)
        let url = URL(string: "https://example.com/a?b=c")!
        func roundTrip(_ value: Any) throws -> Any? {
            let data = try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: false)
            XCTAssertTrue(KeyedArchive.isKeyedArchive(data))
            return try KeyedArchive(data).foundationValue(archive: data)
        }
        XCTAssertEqual(try roundTrip("héllo") as? String, "héllo")
        XCTAssertEqual(try roundTrip(42) as? Int, 42)
        XCTAssertEqual(try roundTrip(2.25) as? Double, 2.25)
        XCTAssertEqual(try roundTrip(date) as? Date, date)
        XCTAssertEqual(try roundTrip(Data([9, 8, 7])) as? Data, Data([9, 8, 7]))
        XCTAssertEqual(try roundTrip(url) as? URL, url)
        XCTAssertEqual(try roundTrip(uuid) as? UUID, uuid)
        let array = try XCTUnwrap(try roundTrip(["a", 3, ["x": 2.5]]) as? [Any])
        XCTAssertEqual(array.count, 3)
        XCTAssertEqual((array[2] as? [String: Any])?["x"] as? Double, 2.5)
        XCTAssertEqual(try roundTrip(NSSet(array: ["p", "q"])) as? Set<AnyHashable>, ["p", "q"])
        let nested = try XCTUnwrap(try roundTrip(["k": ["list": [1, 2]]]) as? [String: Any])
        XCTAssertEqual((nested["k"] as? [String: Any])?["list"] as? [Int], [1, 2])
    }

    /// An archive of a class Faultline does not decode is kept whole, with its class names.
    func testAnArchiveOfAnotherClassIsKeptWithItsClassName() throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: ArchivedColor(), requiringSecureCoding: false)
        let value = try KeyedArchive(data).foundationValue(archive: data)
        let object = try XCTUnwrap(value as? ArchivedObject)
        XCTAssertTrue(object.className.hasSuffix("ArchivedColor"), object.className)
        XCTAssertEqual(object.data, data)
        // The default transformer writes it back byte for byte.
        XCTAssertEqual(try KeyedArchiveValueTransformer().encode(object), data)
    }

    /// The default transformer stores keyed archives (as Core Data's does), still reads the tagged JSON earlier
    /// Faultline builds stored, keeps other bytes, and refuses values it cannot archive instead of trapping.
    func testTheDefaultTransformerWritesKeyedArchives() throws {
        let transformer = KeyedArchiveValueTransformer()
        let stored = try transformer.encode(["tags": ["a", "b"], "count": 3] as [String: Any])
        XCTAssertTrue(KeyedArchive.isKeyedArchive(stored))
        let back = try XCTUnwrap(try transformer.decode(stored) as? [String: Any])
        XCTAssertEqual(back["tags"] as? [String], ["a", "b"])
        XCTAssertEqual(back["count"] as? Int, 3)
        XCTAssertEqual(try transformer.decode(Data([1]) + Data(#"[{"old":true}]"#.utf8)) as? [String: Bool], ["old": true])
        XCTAssertEqual(try transformer.decode(Data([0, 5, 6])) as? Data, Data([5, 6]))
        XCTAssertEqual(try transformer.decode(Data([0xfe, 0xed])) as? Data, Data([0xfe, 0xed]))
        struct Point { var x = 1 }
        XCTAssertThrowsError(try transformer.encode(Point())) { error in
            XCTAssertTrue("\(error)".contains("register a transformer"), "\(error)")
        }
    }

    /// An archive whose arrays each hold the next array twice, 60 deep, names 2^60 paths: decoding stops at
    /// `Limits.archivedObjectVisits` with an error instead of walking them; an array holding itself stops at the depth
    /// limit.
    func testSharedAndCyclicArchivedObjectsAreBounded() throws {
        func archive(_ objects: [PropertyListValue]) -> Data {
            BinaryPropertyListWriter.data(.dictionary([
                "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
                "$top": .dictionary(["root": .uid(1)]), "$objects": .array(objects),
            ]))
        }
        let levels = 60
        let arrayClass = PropertyListValue.dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray")])])
        var objects: [PropertyListValue] = [.string("$null")]
        for i in 1...levels { objects.append(.dictionary(["NS.objects": .array([.uid(i + 1), .uid(i + 1)]), "$class": .uid(levels + 2)])) }
        objects.append(.string("leaf"))
        objects.append(arrayClass)
        let wide = archive(objects)
        XCTAssertThrowsError(try KeyedArchive(wide).foundationValue(archive: wide)) { error in
            XCTAssertTrue("\(error)".contains("Limits.archivedObjectVisits"), "\(error)")
        }
        XCTAssertEqual(ValueCoding.value(of: .blob(wide), type: .transformable, transformer: nil) as? Data, wide,
                       "a transformable value that cannot be decoded reads as its bytes")
        let cyclic = archive([.string("$null"), .dictionary(["NS.objects": .array([.uid(1)]), "$class": .uid(2)]), arrayClass])
        XCTAssertThrowsError(try KeyedArchive(cyclic).foundationValue(archive: cyclic)) { error in
            XCTAssertTrue("\(error)".contains("Limits.propertyListDepth"), "\(error)")
        }
        XCTAssertEqual(ValueCoding.value(of: .blob(cyclic), type: .transformable, transformer: nil) as? Data, cyclic)
    }

    // MARK: Raw deflate

    func testRawDeflateInflatesAndRefusesDamageAndBombs() throws {
        // One stored block (BFINAL, BTYPE 00): LEN, NLEN, then the bytes.
        let body = Data((0..<100).map { UInt8($0) })
        let stored = Data([0x01, 100, 0, 0xff - 100, 0xff]) + body
        XCTAssertEqual(try RawDeflate.inflate(stored), body)
        XCTAssertThrowsError(try RawDeflate.inflate(stored, limit: 50)) { error in
            XCTAssertTrue("\(error)".contains("inflates to more than 50 bytes"), "\(error)")
        }
        XCTAssertThrowsError(try RawDeflate.inflate(stored.prefix(40))) { error in
            XCTAssertEqual("\(error)", "deflate data ends early")
        }
        XCTAssertThrowsError(try RawDeflate.inflate(Data([0xff, 0xff, 0xff, 0xff])))
        XCTAssertThrowsError(try RawDeflate.inflate(Data()))
    }

    // MARK: Compiled models

    /// The model each fixture store caches (`Z_MODELCACHE`) has the Xcode model version's DDL, and the store opens
    /// with it; the model compiled by Xcode into a `.momd` matches its source version too.
    func testCompiledModelsMatchTheirXcodeSource() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent: compiled models are not checked") }
        let folder = fixtures.appendingPathComponent("coredata-stores")
        var cached = 0
        for testCase in CoreDataStoreTests.cases {
            let dir = TemporaryDirectory()
            let store = try copyStore(folder.appendingPathComponent(testCase.store), into: dir)
            let source = try ManagedObjectModel(loadingContentsOf: folder.appendingPathComponent(testCase.model))
            guard let model = try ManagedObjectModel.cachedInStore(at: store) else {
                XCTAssertTrue(testCase.store.hasPrefix("flickrsearcher"), "\(testCase.store) has a Z_MODELCACHE")
                continue
            }
            cached += 1
            XCTAssertEqual(SchemaGenerator.statements(for: model), SchemaGenerator.statements(for: source), testCase.store)
            XCTAssertEqual(model.entities.map(\.name), source.entities.map(\.name))
            for entity in source.entities {
                let decoded = try XCTUnwrap(model.entity(named: entity.name))
                XCTAssertEqual(decoded.renamingIdentifier, entity.renamingIdentifier, "\(testCase.store) \(entity.name)")
                for property in entity.properties {
                    let other = try XCTUnwrap(decoded.property(named: property.name), "\(entity.name).\(property.name)")
                    XCTAssertEqual(other.isOptional, property.isOptional, "\(entity.name).\(property.name)")
                    XCTAssertEqual(other.isTransient, property.isTransient, "\(entity.name).\(property.name)")
                    if let a = property as? AttributeDescription, let b = other as? AttributeDescription {
                        XCTAssertEqual(b.type, a.type, "\(entity.name).\(property.name)")
                        XCTAssertEqual(b.valueTransformerName, a.valueTransformerName, "\(entity.name).\(property.name)")
                        XCTAssertTrue(ManagedObjectContext.sameStoredValue(b.defaultSlot, a.defaultSlot), "\(entity.name).\(property.name)")
                    }
                    if let a = property as? RelationshipDescription, let b = other as? RelationshipDescription {
                        XCTAssertEqual(b.destinationName, a.destinationName)
                        XCTAssertEqual(b.inverseName, a.inverseName)
                        XCTAssertEqual(b.isToMany, a.isToMany)
                        XCTAssertEqual(b.isOrdered, a.isOrdered)
                        XCTAssertEqual(b.deleteRule, a.deleteRule)
                    }
                }
            }
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(at: store, options: .readOnly)
        }
        XCTAssertEqual(cached, CoreDataStoreTests.cases.count - 1)

        let momd = folder.appendingPathComponent("coredataplus-samplemodel/SampleModel.momd")
        let sources = folder.appendingPathComponent("coredataplus-samplemodel/SampleModel.xcdatamodeld")
        for version in ["SampleModel", "SampleModel2", "SampleModel3"] {
            let compiled = try ManagedObjectModel(loadingContentsOf: momd.appendingPathComponent(version + ".mom"))
            let source = try ManagedObjectModel(loadingContentsOf: sources.appendingPathComponent(version + ".xcdatamodel"))
            XCTAssertEqual(SchemaGenerator.statements(for: compiled), SchemaGenerator.statements(for: source), version)
        }
        XCTAssertEqual(try ManagedObjectModel.versions(ofBundle: momd).map(\.name), ["SampleModel", "SampleModel2", "SampleModel3"])
    }

    /// With a `.momd`, a store's version is found by Core Data's own hashes in `VersionInfo.plist`.
    func testAMomdFindsTheStoresVersionByCoreDatasHashes() throws {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent") }
        let folder = fixtures.appendingPathComponent("coredata-stores/coredataplus-samplemodel")
        for (store, version) in [("SampleModel_V1.sqlite", "SampleModel"), ("SampleModel_V2.sqlite", "SampleModel2")] {
            let dir = TemporaryDirectory()
            let copy = try copyStore(folder.appendingPathComponent(store), into: dir)
            let (coordinator, found) = try PersistentStoreCoordinator.open(copy, withVersionOf: folder.appendingPathComponent("SampleModel.momd"), options: .readOnly)
            XCTAssertEqual(found, version)
            XCTAssertNotNil(coordinator.managedObjectModel.entity(named: "Car"))
        }
    }

    /// A store whose cached model is damaged is a model error naming the store's Z_MODELCACHE.
    func testADamagedModelCacheIsNamed() throws {
        let dir = TemporaryDirectory()
        let store = dir.file("app.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel())
            try coordinator.addPersistentStore(at: store)
        }
        let connection = try SQLiteConnection(path: store.path, create: false)
        try connection.execute("INSERT INTO Z_MODELCACHE VALUES (x'00010203')")
        XCTAssertThrowsError(try ManagedObjectModel.cachedInStore(at: store)) { error in
            XCTAssertTrue("\(error)".hasPrefix("model '\(store.path) (Z_MODELCACHE)': the cached model cannot be inflated"), "\(error)")
        }
    }
}

/// A copy of a fixture store (with its `-wal` and `-shm`) in `dir`: the originals are never opened.
func copyStore(_ store: URL, into dir: TemporaryDirectory) throws -> URL {
    let target = dir.file(store.lastPathComponent)
    for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
        try FileManager.default.copyItem(atPath: store.path + suffix, toPath: target.path + suffix)
    }
    return target
}

/// A class of the app's own, archived into a transformable attribute.
final class ArchivedColor: NSObject, NSCoding {
    override init() {}
    init?(coder: NSCoder) {}
    func encode(with coder: NSCoder) { coder.encode(0.5, forKey: "red") }
}

/// Writes a binary property list (4-byte offsets and references), UIDs included: test archives built by hand.
enum BinaryPropertyListWriter {
    static func data(_ value: PropertyListValue) -> Data {
        var objects: [[UInt8]] = []
        func add(_ value: PropertyListValue) -> Int {
            let index = objects.count
            objects.append([])
            func length(_ marker: UInt8, _ count: Int) -> [UInt8] {
                count < 15 ? [marker | UInt8(count)] : [marker | 0x0f, 0x12] + be(UInt64(count), 4)
            }
            var bytes: [UInt8]
            switch value {
            case .integer(let n): bytes = [0x13] + be(UInt64(bitPattern: n), 8)
            case .string(let text): bytes = length(0x50, text.utf8.count) + Array(text.utf8)
            case .uid(let n): bytes = [0x83] + be(UInt64(n), 4)
            case .array(let items):
                let refs = items.map(add)
                bytes = length(0xa0, refs.count) + refs.flatMap { be(UInt64($0), 4) }
            case .dictionary(let entries):
                let keys = entries.keys.sorted()
                let keyRefs = keys.map { add(.string($0)) }
                let valueRefs = keys.map { add(entries[$0]!) }
                bytes = length(0xd0, keys.count) + (keyRefs + valueRefs).flatMap { be(UInt64($0), 4) }
            default: bytes = [0x00]
            }
            objects[index] = bytes
            return index
        }
        func be(_ value: UInt64, _ size: Int) -> [UInt8] { (0..<size).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (size - 1 - $0))) } }
        _ = add(value)
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects { offsets.append(out.count); out += object }
        let table = out.count
        for offset in offsets { out += be(UInt64(offset), 4) }
        out += [0, 0, 0, 0, 0, 0, 4, 4] + be(UInt64(objects.count), 8) + be(0, 8) + be(UInt64(table), 8)
        return Data(out)
    }
}
