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
    /// One entity of the store's model, with its rows.
    public struct Entity: Sendable {
        /// The entity's name.
        public let name: String
        /// `Z_ENT`.
        public let number: Int
        /// Its parent entity, if any.
        public let parent: String?
        /// Its sub-entities.
        public let subentities: [String]
        /// Whether it is abstract (no rows of its own).
        public let isAbstract: Bool
        /// Rows of exactly this entity.
        public let rows: Int
        /// Rows of this entity and its sub-entities.
        public let rowsWithSubentities: Int
    }

    /// The store file's path.
    public let path: String
    /// The store file's size in bytes.
    public let fileBytes: Int64
    /// `wal` or `rollback` (the file header's read version).
    public let journalMode: String
    /// The `-wal` file's size, when there is one.
    public let walBytes: Int64?
    /// The model version's name, when the model has one.
    public let version: String?
    /// Nil when no model could be used.
    public let identifiedBy: VersionIdentification?
    /// Where the model came from, in words.
    public let modelSource: String
    /// Why no model was used, when none was.
    public let modelProblem: String?
    /// Whether Core Data's version hashes, computed from the model, are the store's `NSStoreModelVersionHashes`
    /// (nil without a model or without hashes in the store).
    public let hashesAgree: Bool?
    /// The entities whose computed hash is not the store's, by name (empty when they agree).
    public let entitiesWithOtherHashes: [String]
    /// Of those entities, the properties hashed by a rule not verified on a real store, with why
    /// (`EntityDescription.coreDataHashCaveats`): the likely cause of the difference.
    public let hashCaveats: [String]
    /// The model's entities with their rows (the store's own entity numbers).
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
        let connection = try ReadOnlyOpening(path: store.path).connect(reportingAs: store.path)
        let tables = Set(try Self.strings(connection, "SELECT name FROM sqlite_master WHERE type = 'table'"))
        var own: [Int: Int] = [:]
        var unknown: [(String, Int64, Int)] = []
        for root in model.entities where root.superentity == nil {
            guard let table = root.table?.name, tables.contains(table) else { continue }
            try Self.countRows(connection, table: table, range: Int64(root.entityNumber)...Int64(root.lastDescendantNumber), into: &own, unknown: &unknown)
        }
        let entities = model.entities.map { entity in
            Entity(name: entity.name, number: entity.entityNumber, parent: entity.superentity?.name, subentities: entity.subentities.map(\.name),
                   isAbstract: entity.isAbstract, rows: own[entity.entityNumber] ?? 0,
                   rowsWithSubentities: entity.selfAndDescendants.reduce(0) { $0 + (own[$1.entityNumber] ?? 0) })
        }
        let stored = (try? PersistentStoreCoordinator.metadataForPersistentStore(at: store))?["NSStoreModelVersionHashes"] as? [String: Data]
        try self.init(store: store, connection: connection, tables: tables, entities: entities, unknownRows: unknown, version: version,
                      identifiedBy: identifiedBy, modelSource: modelSource, modelProblem: nil,
                      hashesAgree: stored.map { $0 == model.coreDataVersionHashes },
                      entitiesWithOtherHashes: Self.otherHashes(stored, model), model: model)
    }

    static func otherHashes(_ stored: [String: Data]?, _ model: ManagedObjectModel) -> [String] {
        guard let stored else { return [] }
        let computed = model.coreDataVersionHashes
        return Set(stored.keys).union(computed.keys).filter { stored[$0] != computed[$0] }.sorted()
    }

    /// Reads what `store` holds without a model (none given or cached, or the model does not fit: `problem` says
    /// which): the entities are `Z_PRIMARYKEY`'s, and no version is identified.
    public init(store: URL, modelProblem problem: String) throws {
        let connection = try ReadOnlyOpening(path: store.path).connect(reportingAs: store.path)
        let tables = Set(try Self.strings(connection, "SELECT name FROM sqlite_master WHERE type = 'table'"))
        guard tables.contains("Z_PRIMARYKEY") else { throw StoreError.notAStore(path: store.path, detail: "it has no Z_PRIMARYKEY table") }
        // Z_ENT, Z_NAME, Z_SUPER of the user's entities (persistent history's are numbered from 16001).
        var rows: [(number: Int64, name: String, parent: Int64)] = []
        let statement = try connection.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT < 16000 ORDER BY Z_ENT LIMIT ?")
        statement.bind(Int64(Limits.storeEntities + 1), at: 1)
        while try statement.step() { rows.append((statement.int64(at: 0), statement.text(at: 1), statement.int64(at: 2))) }
        guard rows.count <= Limits.storeEntities else {
            throw StoreError.notAStore(path: store.path, detail: "its Z_PRIMARYKEY lists more than \(Limits.storeEntities) entities (Limits.storeEntities)")
        }
        // A damaged Z_PRIMARYKEY may repeat numbers or names, or make parents a cycle: every walk below is by
        // dictionary, bounded by Limits.inheritanceDepth and by the entities already seen.
        let names = Dictionary(rows.map { ($0.number, $0.name) }, uniquingKeysWith: { first, _ in first })
        let parents = Dictionary(rows.map { ($0.number, $0.parent) }, uniquingKeysWith: { first, _ in first })
        var children: [Int64: [Int64]] = [:]
        for row in rows where row.parent != 0 && row.parent != row.number { children[row.parent, default: []].append(row.number) }
        func root(of number: Int64) -> Int64 {
            var current = number, steps = 0
            while let parent = parents[current], parent != 0, parent != current, steps < Limits.inheritanceDepth { current = parent; steps += 1 }
            return current
        }
        func descendants(_ number: Int64) -> [Int64] {
            var seen: Set<Int64> = [number], result = [number], next = [number], depth = 0
            while !next.isEmpty && depth < Limits.inheritanceDepth {
                next = next.flatMap { children[$0] ?? [] }.filter { seen.insert($0).inserted }
                result += next
                depth += 1
            }
            return result
        }
        let members = Dictionary(grouping: rows.map(\.number), by: root(of:))
        var own: [Int: Int] = [:]
        var unknown: [(String, Int64, Int)] = []
        var counted: Set<String> = []
        for row in rows where row.parent == 0 {
            let table = "Z" + row.name.uppercased()
            guard tables.contains(table), counted.insert(table).inserted else { continue }
            let numbers = members[row.number] ?? [row.number]
            try Self.countRows(connection, table: table, range: numbers.min()!...numbers.max()!, into: &own, unknown: &unknown)
        }
        let entities = rows.map { row in
            Entity(name: row.name, number: Int(row.number), parent: row.parent == 0 ? nil : names[row.parent],
                   subentities: (children[row.number] ?? []).compactMap { names[$0] }, isAbstract: false, rows: own[Int(row.number)] ?? 0,
                   rowsWithSubentities: descendants(row.number).reduce(0) { $0 + (own[Int($1)] ?? 0) })
        }
        try self.init(store: store, connection: connection, tables: tables, entities: entities, unknownRows: unknown, version: nil,
                      identifiedBy: nil, modelSource: "none: \(problem)", modelProblem: problem, hashesAgree: nil)
    }

    private init(store: URL, connection: SQLiteConnection, tables: Set<String>, entities: [Entity], unknownRows: [(String, Int64, Int)],
                 version: String?, identifiedBy: VersionIdentification?, modelSource: String, modelProblem: String?,
                 hashesAgree: Bool?, entitiesWithOtherHashes: [String] = [], model: ManagedObjectModel? = nil) throws {
        self.hashesAgree = hashesAgree
        self.entitiesWithOtherHashes = entitiesWithOtherHashes
        self.hashCaveats = entitiesWithOtherHashes.flatMap { model?.entity(named: $0)?.coreDataHashCaveats ?? [] }
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
        self.modelProblem = modelProblem
        self.entities = entities
        self.unknownRows = unknownRows.map { (table: $0.0, number: $0.1, rows: $0.2) }
        history = try Self.historyTables.filter(tables.contains).map { table in
            (table, Int(try Self.strings(connection, "SELECT count(*) FROM \(table)").first.flatMap { Int($0) } ?? 0))
        }
        let folder = ExternalBinaryStorage.folder(ofStoreAt: store.path)
        if let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path) {
            externalStorage = (folder.path, files.count)
        } else {
            externalStorage = nil
        }
        let stored = (try? PersistentStoreCoordinator.metadataForPersistentStore(at: store)) ?? [:]
        metadata = stored.keys.sorted().map { key in (key, Self.text(stored[key] as Any)) }
    }

    /// Adds `table`'s rows per `Z_ENT` to `own` (numbers in `range`) or `unknown` (any other value).
    private static func countRows(_ connection: SQLiteConnection, table: String, range: ClosedRange<Int64>, into own: inout [Int: Int],
                                  unknown: inout [(String, Int64, Int)]) throws {
        // The name may come from the store's own Z_PRIMARYKEY: quoted as an identifier.
        let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let statement = try connection.prepare("SELECT Z_ENT, count(*) FROM \(quoted) GROUP BY Z_ENT ORDER BY Z_ENT")
        while try statement.step() {
            let number = statement.int64(at: 0), rows = Int(statement.int64(at: 1))
            if statement.columnType(at: 0) == SQLITE_INTEGER && range.contains(number) { own[Int(number), default: 0] += rows } else { unknown.append((table, number, rows)) }
        }
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
