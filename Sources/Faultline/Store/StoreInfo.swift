import CSQLite
import Foundation

/// How a store's model version was found, from most to least certain.
public enum VersionIdentification: String, Sendable {
    /// The store's `NSStoreModelVersionHashes` are a compiled version's (`VersionInfo.plist` of a `.momd`).
    case hashes
    /// The model is the one the store caches (`Z_MODELCACHE`): the model that wrote it.
    case cache
    /// The store's tables and columns fit the version: a guess where several versions share a layout.
    case layout
}

/// What a store holds, read without writing: its entities and their rows, the model version and how it was found,
/// metadata, journal mode, persistent history and external binary storage (`faultline info`).
public struct StoreInfo: Sendable {
    public struct Entity: Sendable {
        public let name: String
        /// `Z_ENT`.
        public let number: Int
        public let parent: String?
        public let subentities: [String]
        public let isAbstract: Bool
        /// Rows of exactly this entity, and with its sub-entities'.
        public let rows: Int
        public let rowsWithSubentities: Int
    }

    public let path: String
    public let fileBytes: Int64
    /// `wal` or `rollback` (the file header's read version).
    public let journalMode: String
    /// The `-wal` file's size, when there is one.
    public let walBytes: Int64?
    /// The model version's name, when the model has one.
    public let version: String?
    public let identifiedBy: VersionIdentification
    /// Where the model came from, in words.
    public let modelSource: String
    public let entities: [Entity]
    /// Rows whose `Z_ENT` names no entity of the model: (table, entity number, rows).
    public let unknownRows: [(table: String, number: Int64, rows: Int)]
    /// Core Data's persistent-history tables present, with their rows.
    public let history: [(table: String, rows: Int)]
    /// The external binary storage folder and its files, when it exists.
    public let externalStorage: (path: String, files: Int)?
    /// `NSStoreUUID`, `NSStoreType`, `NSStoreModelVersionIdentifiers`, … as text; version hashes as base64.
    public let metadata: [(key: String, value: String)]

    /// The persistent-history tables Core Data keeps beside the data (entity numbers from 16001).
    public static let historyTables = ["ATRANSACTION", "ACHANGE", "ATRANSACTIONSTRING"]

    /// Reads what `store` holds with `model`, found as `identifiedBy` says.
    public init(store: URL, model: ManagedObjectModel, version: String?, identifiedBy: VersionIdentification, modelSource: String) throws {
        path = store.path
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        fileBytes = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let header = FileHandle(forReadingAtPath: store.path).flatMap { handle -> Data? in
            defer { try? handle.close() }
            return try? handle.read(upToCount: 20)
        } ?? Data()
        journalMode = header.count >= 20 && header[18] == 2 ? "wal" : "rollback"
        walBytes = (try? FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.size] as? NSNumber)?.int64Value
        self.version = version
        self.identifiedBy = identifiedBy
        self.modelSource = modelSource

        let connection = try ReadOnlyOpening(path: store.path).connect(reportingAs: store.path)
        let tables = Set(try Self.strings(connection, "SELECT name FROM sqlite_master WHERE type = 'table'"))
        var own: [Int: Int] = [:]
        var unknown: [(String, Int64, Int)] = []
        for root in model.entities where root.superentity == nil {
            guard let table = root.table?.name, tables.contains(table) else { continue }
            let statement = try connection.prepare("SELECT Z_ENT, count(*) FROM \(table) GROUP BY Z_ENT ORDER BY Z_ENT")
            while try statement.step() {
                let number = statement.int64(at: 0), rows = Int(statement.int64(at: 1))
                let known = statement.columnType(at: 0) == SQLITE_INTEGER && number >= Int64(root.entityNumber) && number <= Int64(root.lastDescendantNumber)
                if known { own[Int(number), default: 0] += rows } else { unknown.append((table, number, rows)) }
            }
        }
        entities = model.entities.map { entity in
            Entity(name: entity.name, number: entity.entityNumber, parent: entity.superentity?.name, subentities: entity.subentities.map(\.name),
                   isAbstract: entity.isAbstract, rows: own[entity.entityNumber] ?? 0,
                   rowsWithSubentities: entity.selfAndDescendants.reduce(0) { $0 + (own[$1.entityNumber] ?? 0) })
        }
        unknownRows = unknown
        history = try Self.historyTables.filter(tables.contains).map { table in
            (table, Int(try Self.strings(connection, "SELECT count(*) FROM \(table)").first.flatMap { Int($0) } ?? 0))
        }
        let folder = ExternalBinaryStorage(storePath: store.path).folder
        if let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path) {
            externalStorage = (folder.path, files.count)
        } else {
            externalStorage = nil
        }
        let stored = (try? PersistentStoreCoordinator.metadataForPersistentStore(at: store)) ?? [:]
        metadata = stored.keys.sorted().map { key in (key, Self.text(stored[key] as Any)) }
    }

    private static func strings(_ connection: SQLiteConnection, _ sql: String) throws -> [String] {
        let statement = try connection.prepare(sql)
        var result: [String] = []
        while try statement.step() { result.append(statement.text(at: 0)) }
        return result
    }

    /// A metadata value as one line of text: strings as they are, data as base64, collections item by item.
    static func text(_ value: Any) -> String {
        switch value {
        case let string as String: return string
        case let data as Data: return data.base64EncodedString()
        case let number as NSNumber: return number.stringValue
        case let array as [Any]: return "[" + array.map(text).joined(separator: ", ") + "]"
        case let dictionary as [String: Any]: return "{" + dictionary.keys.sorted().map { "\($0): \(text(dictionary[$0]!))" }.joined(separator: ", ") + "}"
        default: return "\(value)"
        }
    }
}
