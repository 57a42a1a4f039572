import CSQLite
import Foundation

/// A persistent store in Core Data's SQLite layout: one file, one connection, statements prepared once.
///
/// Not thread-safe by itself: the coordinator serializes every call.
final class SQLiteStore {
    let model: ManagedObjectModel
    let path: String
    let connection: SQLiteConnection
    /// `Z_UUID` of the store; part of every permanent object ID's URI.
    private(set) var identifier: String = ""
    private(set) var plans: [EntityPlan] = []
    private(set) var tablePlans: [TablePlan] = []
    /// External binary files a save in progress has written (removed if it fails) and ones its rows no longer name
    /// (removed once it commits).
    var externalFilesWritten: [URL] = []
    /// Saves record persistent history (`PersistentStoreOptions.persistentHistoryTracking`).
    var tracksHistory = false
    var externalFilesReleased: [URL] = []

    /// The store is an SQLite database in memory (`PersistentStoreType.inMemory`): no file, gone with the store.
    let isInMemory: Bool
    /// The store was opened read-only.
    let isReadOnly: Bool

    /// The store's file, or nil for an in-memory store.
    var filePath: String? { isInMemory ? nil : path }

    /// The path SQLite opens for an in-memory store, and the one its errors name.
    static let inMemoryPath = ":memory:"

    /// Opens the store at `path`, creating it (schema and metadata) when the file is absent or empty; with
    /// `inMemory`, creates it in memory (`path` is then `inMemoryPath`). `pragmas` are run after Faultline's own
    /// (`journal_mode`, `synchronous`), so that they win.
    init(path: String, model: ManagedObjectModel, readOnly: Bool = false, inMemory: Bool = false, pragmas: [StorePragma] = [],
         probes: Probes = .disabled) throws {
        self.model = model
        self.path = inMemory ? Self.inMemoryPath : path
        self.isInMemory = inMemory
        self.isReadOnly = readOnly
        if inMemory && readOnly {
            throw StoreError.invalidConfiguration("an in-memory store starts empty, so it cannot be opened read only")
        }
        let attributes = inMemory ? nil : try? FileManager.default.attributesOfItem(atPath: path)
        let isNew = attributes == nil || (attributes?[.size] as? NSNumber)?.intValue == 0
        if let type = attributes?[.type] as? FileAttributeType, type != .typeRegular {
            throw StoreError.notAStore(path: path, detail: type == .typeDirectory ? "it is a folder" : "it is not a regular file")
        }
        if readOnly && isNew {
            throw attributes == nil ? StoreError.noSuchStore(path: path) : StoreError.notAStore(path: path, detail: "the file is empty")
        }
        let opening = readOnly ? try ReadOnlyOpening(path: path) : nil
        do {
            connection = try SQLiteConnection(path: opening?.connectionPath ?? path, create: isNew, readOnly: readOnly,
                                              scratchFolder: opening?.scratchFolder)
        } catch let error as SQLiteError {
            if let folder = opening?.scratchFolder { try? FileManager.default.removeItem(at: folder) }
            throw StoreError.sqlite(path: path, error: error)
        }
        if probes.isEnabled {
            probes.record(.connect(ConnectEvent(path: path)))
            connection.probe = ConnectionProbe(probes: probes)
            connection.probe?.purpose = .schema
        }
        do {
            // A read-only store keeps its journal mode; reading the schema tells a foreign file here too.
            // A new store gets Core Data's incremental auto-vacuum (`_NSAutoVacuumLevel` 2) before anything is written.
            if isNew {
                // The mode is fixed once set on a new file: the caller's instead of Core Data's, if given (an existing
                // store's changes only with a full vacuum).
                let modes = pragmas.filter { $0.name.lowercased() == "auto_vacuum" }
                for pragma in modes.isEmpty ? [try StorePragma("auto_vacuum", "2")] : modes { try connection.execute(pragma.sql) }
            }
            try connection.execute(readOnly ? "SELECT count(*) FROM sqlite_master" : "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
            for pragma in pragmas { try connection.execute(pragma.sql) }
        } catch let error as SQLiteError where error.primaryCode == SQLITE_NOTADB || error.primaryCode == SQLITE_CORRUPT {
            throw StoreError.notADatabase(path: path, detail: error.message)
        } catch let error as SQLiteError {
            throw StoreError.sqlite(path: path, error: error)
        }
        // An existing store's entity numbers and many-to-many tables are its own (Core Data keeps them per store).
        let previous: StoreLayout?
        do {
            previous = try model.adoptLayout(isNew ? nil : try? StoreLayout.read(connection, for: model))
        } catch let error as ModelError {
            throw StoreError.modelMismatch(path: path, differences: [error.description])
        }
        do {
            tablePlans = model.tables.map(TablePlan.init)
            plans = model.entities.map { EntityPlan(entity: $0, storePath: inMemory ? nil : path) }
            if isNew {
                try createSchema()
            } else {
                try validate()
            }
        } catch {
            model.releaseLayout(restoring: previous)
            throw error
        }
        if !readOnly && !inMemory {
            let mode = try wrap { try connection.prepare("PRAGMA journal_mode") }
            isWriteAheadLogged = try wrap { try mode.step() } && mode.text(at: 0).lowercased() == "wal"
        }
        connection.probe?.purpose = .other
    }

    /// The store file is in WAL mode (Faultline's default; a `journal_mode` pragma may change it): readers on
    /// other connections never wait for its writer.
    private(set) var isWriteAheadLogged = false

    /// Labels the statements that follow (for probes; free when they are off).
    @inline(__always) func purpose(_ purpose: StatementPurpose) {
        connection.probe?.purpose = purpose
    }

    func wrap<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SQLiteError {
            if error.primaryCode == SQLITE_NOTADB || error.primaryCode == SQLITE_CORRUPT {
                throw StoreError.notADatabase(path: path, detail: error.message)
            }
            throw StoreError.sqlite(path: path, error: error)
        }
    }

    private func createSchema() throws {
        try wrap {
            try connection.execute("BEGIN EXCLUSIVE")
            do {
                for statement in SchemaGenerator.statements(for: model) { try connection.execute(statement) }
                let insertKey = try connection.prepare("INSERT INTO Z_PRIMARYKEY(Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES(?, ?, ?, 0)")
                for entity in model.entities {
                    insertKey.reset()
                    insertKey.bind(Int64(entity.entityNumber), at: 1)
                    insertKey.bind(entity.name, at: 2)
                    insertKey.bind(Int64(entity.superentity?.entityNumber ?? 0), at: 3)
                    try insertKey.execute()
                }
                identifier = UUID().uuidString
                let metadata = try connection.prepare("INSERT INTO Z_METADATA(Z_VERSION, Z_UUID, Z_PLIST) VALUES(1, ?, ?)")
                metadata.bind(identifier, at: 1)
                metadata.bind(try StoreMetadata(identifier: identifier, model: model).encoded(), at: 2)
                try metadata.execute()
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    private func validate() throws {
        let hasMetadata = try wrap { () -> Bool in
            let statement = try connection.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('Z_METADATA', 'Z_PRIMARYKEY')")
            _ = try statement.step()
            return statement.int64(at: 0) == 2
        }
        guard hasMetadata else {
            throw StoreError.notAStore(path: path, detail: "it has no Z_METADATA and Z_PRIMARYKEY tables")
        }
        let row = try wrap { try StoreMetadata.row(of: connection) }
        guard let (uuid, plist) = row, !uuid.isEmpty, let metadata = StoreMetadata(data: plist) else {
            throw StoreError.notAStore(path: path, detail: "its Z_METADATA row is missing or unreadable")
        }
        identifier = uuid
        // Faultline's stores are checked by their version hashes (Core Data's since format 3); Core Data's by
        // comparing the schema the model needs with the store's.
        let differences: [String]
        if metadata.faultlineFormat == nil {
            differences = try wrap { try StoreSchemaCheck.differences(between: model, and: connection) }
        } else if metadata.hasFaultlineOwnHashes {
            differences = metadata.differences(from: model.versionHashes)
        } else {
            differences = metadata.differences(from: model.coreDataVersionHashes.mapValues { $0.base64EncodedString() })
        }
        if !differences.isEmpty { throw StoreError.modelMismatch(path: path, differences: differences) }
    }

    // MARK: Statements

    func statement(_ sql: String) throws -> Statement {
        try wrap { try connection.cachedStatement(sql) }
    }

    func plan(for entity: EntityDescription) -> EntityPlan { plans[entity.entityNumber - 1] }

    func tablePlan(for entity: EntityDescription) -> TablePlan { tablePlans.first { $0.table === entity.table }! }

    /// Called in a write transaction once its statements have run, before it commits (tests hold a real save open
    /// here to read beside it).
    var willCommit: (() -> Void)?

    /// Runs `body` in a `BEGIN EXCLUSIVE … COMMIT` transaction, rolling back on error.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try wrap { try connection.execute("BEGIN EXCLUSIVE") }
        do {
            let result = try body()
            willCommit?()
            try wrap { try connection.execute("COMMIT") }
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Primary keys

    /// Reserves `count` new primary keys for `root`'s table, in a transaction of its own (as Core Data).
    func allocatePrimaryKeys(root: EntityDescription, count: Int) throws -> ClosedRange<Int64> {
        purpose(.keyAllocation)
        defer { purpose(.save) }
        return try inTransaction {
            let select = try statement("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
            select.bind(Int64(root.entityNumber), at: 1)
            guard try select.step() else {
                select.reset()
                throw StoreError.notAStore(path: path, detail: "Z_PRIMARYKEY has no row for entity \(root.name)")
            }
            let current = select.int64(at: 0)
            // New keys run from Z_MAX + 1: Z_MAX must be a whole number with room for them below the largest key.
            guard select.columnType(at: 0) == SQLITE_INTEGER, current >= 0, current <= Limits.primaryKeys.upperBound - Int64(count) else {
                let value = StoredKeyRule.describe(select.slot(at: 0))
                select.reset()
                throw StoreError.invalidStoredValue(table: "Z_PRIMARYKEY", column: "Z_MAX", row: "the row with Z_ENT \(root.entityNumber) (\(root.name))", value: value,
                                                    expected: "the last key given must be a whole number from 0, with room for \(count) more up to \(Limits.primaryKeys.upperBound) (Limits.primaryKeys)")
            }
            select.reset()
            let update = try statement("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?")
            update.bind(current + Int64(count), at: 1)
            update.bind(Int64(root.entityNumber), at: 2)
            update.bind(current, at: 3)
            try wrap { try update.execute() }
            return (current + 1)...(current + Int64(count))
        }
    }
}
