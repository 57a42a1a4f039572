import Foundation

/// How a store opened read only is read without changing any of its files. SQLite's read-only mode still writes the
/// `-shm` index of a WAL store (and creates `-wal` and `-shm` when they are absent), so:
/// - a store with WAL content (a non-empty `-wal`: data Core Data has not checkpointed yet) is read from a scratch
///   copy of the database and its `-wal`, in a temporary folder removed when the store closes;
/// - any other store is opened `immutable`: SQLite reads the file alone, takes no locks and writes nothing beside it.
/// Either way the analysis sees the store as it was when opened; a write by another process meanwhile is not seen.
struct ReadOnlyOpening {
    /// The file SQLite opens (a URI for `immutable`, or the scratch copy's path).
    let connectionPath: String
    /// The scratch folder to remove when the store closes, if a copy was made.
    let scratchFolder: URL?

    init(path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError.notAStore(path: path, detail: "it is a folder (a model, such as an .xcdatamodel, goes with --model)")
        }
        let wal = path + "-wal"
        let walSize = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? NSNumber)?.intValue ?? 0
        if walSize > 0 {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-readonly-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let copy = folder.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
            do {
                try FileManager.default.copyItem(atPath: path, toPath: copy)
                try FileManager.default.copyItem(atPath: wal, toPath: copy + "-wal")
            } catch {
                try? FileManager.default.removeItem(at: folder)
                throw StoreError.notAStore(path: path, detail: "it could not be copied to read it without changing it: \(error.localizedDescription)")
            }
            connectionPath = copy
            scratchFolder = folder
        } else {
            var components = URLComponents()
            components.scheme = "file"
            components.path = URL(fileURLWithPath: path).standardizedFileURL.path
            components.queryItems = [URLQueryItem(name: "immutable", value: "1")]
            connectionPath = components.string ?? "file:\(path)?immutable=1"
            scratchFolder = nil
        }
    }

    /// A read-only connection to the store (it removes the scratch copy when it closes).
    func connect(reportingAs path: String) throws -> SQLiteConnection {
        do {
            return try SQLiteConnection(path: connectionPath, create: false, readOnly: true, scratchFolder: scratchFolder)
        } catch let error as SQLiteError {
            if let scratchFolder { try? FileManager.default.removeItem(at: scratchFolder) }
            throw StoreError.sqlite(path: path, error: error)
        }
    }
}
