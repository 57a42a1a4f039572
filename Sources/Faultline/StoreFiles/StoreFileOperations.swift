import CSQLite
import Foundation

/// The file work behind the coordinator's store operations, each step counted (`StoreFileSteps`) and undone on
/// failure where it can be.
enum StoreFileOperations {
    /// Empties the database (a transaction: other connections see no tables, never a half) and removes it, its
    /// siblings and its external values.
    static func destroy(_ files: StoreFileSet, kind: StoreFileSet.Kind, force: Bool) throws {
        guard kind != .absent else { return }
        if kind == .sqlite {
            do {
                let connection = try SQLiteConnection(path: files.path, create: false, busyTimeout: force ? 0 : 5_000)
                if let other = try foreignDatabase(connection) {
                    throw StoreError.storeFiles(operation: "destroy", path: files.path,
                                                detail: "it is an SQLite database but not a store (\(other)); nothing was removed")
                }
                guard faultline_sqlite3_reset_database(connection.handle, 1) == SQLITE_OK else {
                    throw SQLiteError(connection: connection.handle, code: sqlite3_errcode(connection.handle))
                }
                defer { _ = faultline_sqlite3_reset_database(connection.handle, 0) }
                try connection.execute("VACUUM")
            } catch let error as SQLiteError where !force || error.primaryCode != SQLITE_BUSY {
                let busy = error.primaryCode == SQLITE_BUSY
                throw StoreError.storeFiles(operation: "destroy", path: files.path,
                                            detail: busy ? "another connection is writing to it (PersistentStoreForceDestroyOption destroys it anyway); nothing was removed"
                                                : "it could not be emptied (\(error)); nothing was removed, though its rows may already be gone")
            }
        }
        var steps = StoreFileSteps()
        let manager = FileManager.default
        for file in files.siblings + [files.url, files.support] where manager.fileExists(atPath: file.path) {
            do {
                try steps.run("remove \(file.lastPathComponent)") { try manager.removeItem(at: file) }
            } catch {
                let left = (files.siblings + [files.url, files.support]).filter { manager.fileExists(atPath: $0.path) }.map(\.lastPathComponent)
                throw StoreError.storeFiles(operation: "destroy", path: files.path,
                                            detail: "\(file.lastPathComponent) could not be removed (\(error.localizedDescription)); the store is emptied and these remain: \(left.joined(separator: ", "))")
            }
        }
    }

    /// Copies the store `source` into `destination`, replacing what is there.
    static func replace(_ destination: StoreFileSet, with source: StoreFileSet) throws {
        if destination.isSameStore(as: source) { return }
        switch source.kind() {
        case .sqlite: break
        case .absent: throw StoreError.storeFiles(operation: "replace", path: destination.path, detail: "there is no store at the source '\(source.path)' (nothing was changed)")
        case .empty: throw StoreError.storeFiles(operation: "replace", path: destination.path, detail: "the source '\(source.path)' is an empty file, not a store (nothing was changed)")
        case .other(let why): throw StoreError.storeFiles(operation: "replace", path: destination.path, detail: "the source '\(source.path)' is not a store: \(why) (nothing was changed)")
        }
        if case .other(let why) = destination.kind() {
            throw StoreError.storeFiles(operation: "replace", path: destination.path, detail: "\(why), so it is not a store to replace (nothing was changed)")
        }
        let reader: SQLiteConnection
        do {
            reader = try SQLiteConnection(path: source.path, create: false)
            try reader.execute("PRAGMA query_only = 1")
        } catch {
            throw StoreError.storeFiles(operation: "replace", path: destination.path, detail: "the source '\(source.path)' cannot be read: \(error) (nothing was changed)")
        }
        let previous = Set((try? destination.externalValueNames()) ?? [])
        try copy(reader, externalValuesOf: source, to: destination, operation: "replace", replacing: true) { () }
        // Values only the replaced store named: left over, they would cost space and nothing else.
        let kept = Set((try? source.externalValueNames()) ?? [])
        for name in previous.subtracting(kept) {
            try? FileManager.default.removeItem(at: destination.externalData.appendingPathComponent(name))
        }
    }

    /// Copies the database `connection` reads into `destination` with the external values of `source` (nil: an
    /// in-memory store, which has none), then calls `finish` (which opens the copy, say). On any failure the
    /// destination is put back as it was: values copied are removed, and a database that was not there is removed.
    static func copy<T>(_ connection: SQLiteConnection, externalValuesOf source: StoreFileSet?, to destination: StoreFileSet,
                        operation: String, replacing: Bool, finish: () throws -> T) throws -> T {
        let manager = FileManager.default
        let existed = destination.kind() != .absent
        if !replacing && existed {
            throw StoreError.storeFiles(operation: operation, path: destination.path, detail: "a file is there already: destroy it first (nothing was changed)")
        }
        let supportExisted = manager.fileExists(atPath: destination.support.path)
        var steps = StoreFileSteps()
        var added: [URL] = []
        do {
            // The values first, under names the destination does not have: until the database names them they are
            // unused files.
            let present = Set(try destination.externalValueNames())
            for name in try source?.externalValueNames() ?? [] where !present.contains(name) {
                let target = destination.externalData.appendingPathComponent(name)
                try steps.run("copy external value \(name)") {
                    try manager.createDirectory(at: destination.externalData, withIntermediateDirectories: true)
                    try manager.copyItem(at: source!.externalData.appendingPathComponent(name), to: target)
                }
                added.append(target)
            }
            try steps.run("copy the database") {
                let writer = try SQLiteConnection(path: destination.path, create: true)
                if existed, let other = try Self.foreignDatabase(writer) {
                    throw StoreError.storeFiles(operation: operation, path: destination.path, detail: "it is an SQLite database but not a store (\(other)), so it is not replaced")
                }
                try StoreBackup.copy(from: connection, to: writer)
            }
            return try finish()
        } catch {
            for file in added { try? manager.removeItem(at: file) }
            if !existed {
                for file in [destination.url] + destination.siblings { try? manager.removeItem(at: file) }
            }
            if !supportExisted { try? manager.removeItem(at: destination.support) }
            let detail = (error as? StoreError).map(String.init(describing:)) ?? (error as? SQLiteError).map(String.init(describing:)) ?? error.localizedDescription
            throw StoreError.storeFiles(operation: operation, path: destination.path,
                                        detail: "\(detail); the destination is as it was\(existed ? "" : " (absent)")")
        }
    }

    /// Why the database `connection` opened is not a store — it has tables but no `Z_METADATA` — or nil when it is
    /// one or is empty. Store operations never remove or overwrite another program's database on a guess.
    static func foreignDatabase(_ connection: SQLiteConnection) throws -> String? {
        let tables = try connection.prepare("SELECT count(*), sum(name = 'Z_METADATA') FROM sqlite_master WHERE type = 'table'")
        guard try tables.step(), tables.int64(at: 0) > 0, tables.int64(at: 1) == 0 else { return nil }
        return "\(tables.int64(at: 0)) tables, none of them Z_METADATA"
    }
}
