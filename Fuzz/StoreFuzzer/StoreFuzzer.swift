import CSQLite
import CZlib
import Faultline
import FaultlineData
import FaultlineReport
import Foundation
import FuzzSupport

/// The read commands' code paths (`info`, `query`, `explain`, `diagram --store`, opening with and without a model) on a
/// small valid store whose rows the input changes: any value of any storage class in any column (the `Z_` key columns,
/// foreign keys, join tables), rows inserted and deleted, and bytes of the metadata and of the cached model flipped.
/// Errors are fine; a trap, a hang or a read that writes the store is a finding.
///
/// Input: byte 0 holds flags (bit 0: start from a Core Data store of ../shared/fixtures with its cached model, where
/// present, opened without a model, bits 3 and up choosing which; bit 1: open Faultline's own store without a model
/// too; bit 2: explain a fetch);
/// then operations, each an operation byte and its operands (see `Mutator`).
enum StoreFuzzer {
    /// The party model: an entity hierarchy in one table, a to-one into it (an entity column), a many-to-many (a join
    /// table) and an ordered to-many (an order column), with attributes of the common types.
    static let modelJSON = """
    {"entities": [
     {"name": "Party", "attributes": [{"name": "name", "type": "string"}, {"name": "since", "type": "date"}, {"name": "score", "type": "double"}],
      "relationships": [{"name": "owner", "destination": "Party", "inverse": "owned"},
                        {"name": "owned", "destination": "Party", "inverse": "owner", "toMany": true},
                        {"name": "tags", "destination": "Tag", "inverse": "parties", "toMany": true},
                        {"name": "notes", "destination": "Note", "inverse": "party", "toMany": true, "ordered": true}]},
     {"name": "Person", "parent": "Party", "attributes": [{"name": "age", "type": "integer64"}, {"name": "active", "type": "boolean"}]},
     {"name": "Company", "parent": "Party", "attributes": [{"name": "size", "type": "integer32"}, {"name": "logo", "type": "binary"}]},
     {"name": "Tag", "attributes": [{"name": "label", "type": "string"}, {"name": "id", "type": "uuid"}],
      "relationships": [{"name": "parties", "destination": "Party", "inverse": "tags", "toMany": true}]},
     {"name": "Note", "attributes": [{"name": "text", "type": "string"}, {"name": "amount", "type": "decimal"}],
      "relationships": [{"name": "party", "destination": "Party", "inverse": "notes"}]}
    ]}
    """

    static let dataJSON = """
    {"Company": [{"@id": "c1", "name": "Acme", "size": 10, "tags": ["t1"], "since": "2020-01-02T03:04:05Z", "score": 1.5}],
     "Person": [{"@id": "p1", "name": "Ann", "age": 30, "active": true, "owner": "c1", "tags": ["t1", "t2"]},
                {"@id": "p2", "name": "Bob", "age": 40, "owner": "p1"}, {"@id": "p3", "name": "Cy", "owner": "c1"}],
     "Tag": [{"@id": "t1", "label": "x", "id": "6F9619FF-8B86-D011-B42D-00CF4FC964FF"}, {"@id": "t2", "label": "y"}],
     "Note": [{"@id": "n1", "text": "a", "party": "p1", "amount": "12.50"}, {"@id": "n2", "text": "b", "party": "p1"},
              {"@id": "n3", "text": "c", "party": "c1"}]}
    """

    static let model = try! ManagedObjectModel(jsonData: Data(modelJSON.utf8))
    static let folder = FuzzTarget.scratchFolder("store")
    static let storeURL = folder.appendingPathComponent("store.sqlite")

    /// The starting stores, as bytes in rollback-journal mode: Faultline's own, and a Core Data store from the fixtures
    /// (it carries a cached model) when they are there.
    static let ownStore: Data = {
        let url = folder.appendingPathComponent("base.sqlite")
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
            try coordinator.addPersistentStore(at: url)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            _ = try DataImporter(context: context).load(Data(dataJSON.utf8), file: "fuzz-store.json")
        }  catch { fatalError("the fuzz target's store cannot be made: \(error)") }
        return rollbackJournalBytes(url)
    }()

    /// Core Data stores of the fixtures, each with its cached model: SampleModel's (inheritance, a rename) and the
    /// SwiftData store (composite attributes, a to-many kept in its destination's column, a many-to-many).
    static let coreDataFixtures = ["coredataplus-samplemodel/SampleModel_V2.sqlite", "swiftdata-metacocktails/PreloadedCocktails.store"]

    static let coreDataStores: [Data] = coreDataFixtures.enumerated().compactMap { index, name in
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../shared/fixtures/coredata-stores/\(name)").standardized
        guard FileManager.default.fileExists(atPath: fixture.path) else { return nil }
        let copy = folder.appendingPathComponent("coredata-\(index).sqlite")
        try? FileManager.default.removeItem(at: copy)
        try! FileManager.default.copyItem(at: fixture, to: copy)
        let bytes = rollbackJournalBytes(copy)
        try! bytes.write(to: modelSource(index))
        return bytes
    }

    /// An untouched copy of Core Data store `index`, whose cached model each input reads afresh (a model takes the
    /// layout of the first store it opens, so every input needs its own).
    static func modelSource(_ index: Int) -> URL { folder.appendingPathComponent("model-source-\(index).sqlite") }

    /// The file's bytes once its WAL is folded in and it is in rollback-journal mode (one file to copy).
    static func rollbackJournalBytes(_ url: URL) -> Data {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK,
              sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;", nil, nil, nil) == SQLITE_OK else {
            fatalError("cannot fold \(url.path)'s WAL in")
        }
        sqlite3_close(db)
        return try! Data(contentsOf: url)
    }

    static func run(_ input: Data) {
        let bytes = [UInt8](input)
        let flags = bytes.first ?? 0
        let coreData = coreDataStores.isEmpty ? nil : Int(flags >> 3) % coreDataStores.count
        let base = (flags & 1 != 0 ? coreData.map { coreDataStores[$0] } : nil) ?? ownStore
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: storeURL.path + suffix) }
        try! base.write(to: storeURL)
        var mutator = Mutator(path: storeURL.path, operations: bytes.dropFirst())
        mutator.apply()
        let before = try! Data(contentsOf: storeURL)
        let model: ManagedObjectModel?
        if base == ownStore {
            // A model of its own for each input: opening a store makes a model take that store's entity numbers and
            // tables, which the input may have changed.
            model = flags & 2 != 0 ? nil : try! ManagedObjectModel(jsonData: Data(modelJSON.utf8))
        } else {
            // The cached model is read from the store when the input changed it; else from the untouched copy (the
            // compiled-model target fuzzes that reader).
            model = mutator.changedModelCache ? nil : coreData.flatMap { try? ManagedObjectModel.cachedInStore(at: modelSource($0)) }
        }
        read(model: model, explains: flags & 4 != 0)
        // Every path here is a read: the store must be left byte for byte as it was.
        if try! Data(contentsOf: storeURL) != before { fatalError("a read-only open changed the store") }
        for suffix in ["-wal", "-journal"] where FileManager.default.fileExists(atPath: storeURL.path + suffix) {
            if let size = try? FileManager.default.attributesOfItem(atPath: storeURL.path + suffix)[.size] as? Int, size > 0 {
                fatalError("a read-only open wrote \(suffix)")
            }
        }
    }

    /// What `query`, `explain` and `diagram --store` do, with errors ignored.
    static func read(model given: ManagedObjectModel?, explains: Bool) {
        // `faultline info`, without a model (Z_PRIMARYKEY's entities) and with one.
        _ = try? StoreInfo(store: storeURL, modelProblem: "fuzzing")
        guard let model = given ?? (try? ManagedObjectModel.cachedInStore(at: storeURL)) ?? nil else { return }
        _ = try? StoreInfo(store: storeURL, model: model, version: nil, identifiedBy: .layout, modelSource: "fuzzing")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        guard (try? coordinator.addPersistentStore(at: storeURL, options: .readOnly)) != nil else { return }
        let entities = model.entities.prefix(12)
        for entity in entities {
            // A context per entity's queries, as each `faultline query` has its own.
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            let exporter = DataExporter(context: context)
            _ = try? exporter.export(entityName: entity.name, format: .json, limit: 20)
            var prefetching = FetchRequest<ManagedObject>(entityName: entity.name)
            prefetching.relationshipKeyPathsForPrefetching = entity.relationships.prefix(4).map(\.name)
            _ = try? exporter.export(prefetching, result: .objects, format: .table, limit: 20)
            var batched = FetchRequest<ManagedObject>(entityName: entity.name)
            batched.fetchBatchSize = 2
            _ = try? exporter.export(batched, result: .objects, format: .json, limit: 20)
            _ = try? exporter.export(FetchRequest<ManagedObject>(entityName: entity.name), result: .ids, format: .json)
            var dictionary = FetchRequest<ManagedObject>(entityName: entity.name)
            dictionary.propertiesToFetch = entity.properties.prefix(6).compactMap { property in
                (property as? RelationshipDescription)?.isToMany == true ? nil : try? PropertyToFetch(parsing: property.name)
            }
            if dictionary.propertiesToFetch?.isEmpty == false { _ = try? exporter.export(dictionary, result: .dictionary, format: .json) }
            _ = try? exporter.export(FetchRequest<ManagedObject>(entityName: entity.name), result: .count, format: .json)
            if explains, entity === entities.first {
                var request = FetchRequest<ManagedObject>(entityName: entity.name)
                if let attribute = entity.attributes.first(where: { !$0.isTransient }) {
                    request.predicate = try? ObjectPredicate(parsing: "%K != nil", attribute.name)
                }
                _ = try? context.performAndWait { try context.explain(request) }
            }
        }
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        context.performAndWait {
            context.retainsRegisteredObjects = true
            _ = try? ObjectGraphLoader(context: context, limit: 40).load(root: nil, depth: 2)
            if let first = context.registeredObjects.first {
                let root = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                root.performAndWait {
                    root.retainsRegisteredObjects = true
                    _ = try? ObjectGraphLoader(context: root, limit: 40).load(root: first.objectID.uriString, depth: 3)
                    _ = ObjectGraphDiagram(snapshot: root.objectGraphSnapshot(limit: 40)).dot
                }
            }
            _ = ObjectGraphDiagram(snapshot: context.objectGraphSnapshot(limit: 40)).dot
        }
    }
}

/// Applies the input's operations to the store with SQLite, every value bound (table and column names are the store's
/// own, found in `sqlite_master` and `PRAGMA table_info`).
struct Mutator {
    let path: String
    var operations: ArraySlice<UInt8>
    /// True once an operation changed Z_MODELCACHE.
    var changedModelCache = false
    /// The most operations one input applies.
    static let maximumOperations = 32

    init(path: String, operations: ArraySlice<UInt8>) {
        self.path = path
        self.operations = operations
    }

    /// Whole numbers that sit on the engine's and SQLite's edges.
    static let integers: [Int64] = [0, 1, 2, 3, 4, 5, -1, -2, .min, .max, .min + 1, .max - 1, 1 << 48, (1 << 48) - 1, 1 << 32, -(1 << 48),
                                    1_000_000_000_000, 127, 128, 255, 256, 65_535, 65_536, Int64(Int32.max), Int64(Int32.min)]

    mutating func byte() -> UInt8? { operations.popFirst() }
    mutating func int64() -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte() ?? 0) }
        return Int64(bitPattern: value)
    }
    mutating func bytes() -> [UInt8] {
        let count = Int(byte() ?? 0) % 24
        var result: [UInt8] = []
        for _ in 0..<count { result.append(byte() ?? 0) }
        return result
    }

    mutating func apply() {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { fatalError("cannot open the scratch store") }
        defer { sqlite3_close(db) }
        let tables = rows(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0.first }
        var columns: [String: [String]] = [:]
        for table in tables { columns[table] = rows(db, "PRAGMA table_info(\(quoted(table)))").compactMap { $0.count > 1 ? $0[1] : nil } }
        var applied = 0
        while let operation = byte(), applied < Self.maximumOperations, !tables.isEmpty {
            applied += 1
            let table = tables[Int(byte() ?? 0) % tables.count]
            let names = columns[table] ?? []
            let rowIDs = rows(db, "SELECT rowid FROM \(quoted(table))").compactMap { $0.first.flatMap { Int64($0) } }
            let rowID = rowIDs.isEmpty ? 0 : rowIDs[Int(byte() ?? 0) % rowIDs.count]
            switch operation % 6 {
            case 0 where !names.isEmpty:
                let column = names[Int(byte() ?? 0) % names.count]
                execute(db, "UPDATE \(quoted(table)) SET \(quoted(column)) = ? WHERE rowid = ?", [value(), .integer(rowID)])
            case 1 where !names.isEmpty:
                // A row with one column given, the others NULL (Z_PK is then chosen by SQLite).
                let column = names[Int(byte() ?? 0) % names.count]
                execute(db, "INSERT INTO \(quoted(table)) (\(quoted(column))) VALUES (?)", [value()])
            case 2:
                execute(db, "DELETE FROM \(quoted(table)) WHERE rowid = ?", [.integer(rowID)])
            case 3:
                flip(db, table: "Z_MODELCACHE", column: "Z_CONTENT", inflated: false)
                changedModelCache = true
            case 4:
                flip(db, table: "Z_MODELCACHE", column: "Z_CONTENT", inflated: true)
                changedModelCache = true
            case 5:
                flip(db, table: "Z_METADATA", column: "Z_PLIST", inflated: false)
            default:
                break
            }
        }
    }

    enum Value { case integer(Int64), real(Double), text([UInt8]), blob([UInt8]), null }

    mutating func value() -> Value {
        switch (byte() ?? 0) % 7 {
        case 0: return .integer(Self.integers[Int(byte() ?? 0) % Self.integers.count])
        case 1: return .integer(int64())
        case 2: return .null
        case 3: return .text(bytes())
        case 4: return .real(Double(bitPattern: UInt64(bitPattern: int64())))
        case 5: return .blob(bytes())
        default: return .integer(Int64(byte() ?? 0) - 128)
        }
    }

    /// XORs bytes of a blob (inflated and deflated again when `inflated`: a cached model that still inflates).
    mutating func flip(_ db: OpaquePointer?, table: String, column: String, inflated: Bool) {
        guard let stored = blob(db, "SELECT \(column) FROM \(table) LIMIT 1"), !stored.isEmpty else { return }
        var content = inflated ? (Self.inflate(stored) ?? stored) : stored
        let flips = Int(byte() ?? 0) % 8 + 1
        for _ in 0..<flips where !content.isEmpty {
            let position = (Int(byte() ?? 0) << 8 | Int(byte() ?? 0)) % content.count
            content[position] ^= byte() ?? 0xFF
        }
        if inflated { content = Self.deflate(content) }
        execute(db, "UPDATE \(table) SET \(column) = ?", [.blob(content)])
    }

    static func inflate(_ data: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var input = data, output: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65_536)
        return input.withUnsafeMutableBufferPointer { source -> [UInt8]? in
            stream.next_in = source.baseAddress
            stream.avail_in = UInt32(source.count)
            while output.count < 4 << 20 {
                let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                output += chunk[0..<(chunk.count - Int(stream.avail_out))]
                if status == Z_STREAM_END { return output }
                if status != Z_OK { return nil }
            }
            return nil
        }
    }

    static func deflate(_ data: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return data }
        defer { deflateEnd(&stream) }
        var input = data
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(data.count))) + 16)
        let written = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target -> Int in
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return CZlib.deflate(&stream, Z_FINISH) == Z_STREAM_END ? target.count - Int(stream.avail_out) : 0
            }
        }
        return Array(output.prefix(written))
    }

    func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    func rows(_ db: OpaquePointer?, _ sql: String) -> [[String]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(statement) }
        var result: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append((0..<sqlite3_column_count(statement)).map { sqlite3_column_text(statement, $0).map { String(cString: $0) } ?? "" })
        }
        return result
    }

    func blob(_ db: OpaquePointer?, _ sql: String) -> [UInt8]? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let pointer = sqlite3_column_blob(statement, 0) else { return nil }
        return Array(UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, 0))))
    }

    func execute(_ db: OpaquePointer?, _ sql: String, _ values: [Value]) {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            switch value {
            case .integer(let n): sqlite3_bind_int64(statement, index, n)
            case .real(let x): sqlite3_bind_double(statement, index, x)
            case .text(let bytes): sqlite3_bind_text(statement, index, bytes.map { CChar(bitPattern: $0) }, Int32(bytes.count), transient)
            case .blob(let bytes): sqlite3_bind_blob(statement, index, bytes, Int32(bytes.count), transient)
            case .null: sqlite3_bind_null(statement, index)
            }
        }
        _ = sqlite3_step(statement)
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStore(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    StoreFuzzer.run(Data(bytes: bytes, count: count))
    return 0
}
#else
@main struct StoreReplay {
    static func main() { FuzzTarget.replay(Array(CommandLine.arguments.dropFirst()), StoreFuzzer.run) }
}
#endif
