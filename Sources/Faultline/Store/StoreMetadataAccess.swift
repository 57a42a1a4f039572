import CSQLite
import Foundation

extension PersistentStoreCoordinator {
    /// A store's metadata without opening it as a store (Core Data's `metadataForPersistentStore(ofType:at:)`):
    /// every key of `Z_METADATA.Z_PLIST`, custom keys included, with `NSStoreUUID` from `Z_UUID`. Reads only.
    public static func metadataForPersistentStore(at url: URL) throws -> [String: Any] {
        let connection = try ReadOnlyOpening(path: url.path).connect(reportingAs: url.path)
        let (uuid, plist) = try readMetadataRow(connection, path: url.path)
        guard let metadata = StoreMetadata(data: plist) else {
            throw StoreError.notAStore(path: url.path, detail: "its Z_METADATA row is missing or unreadable")
        }
        var values = metadata.values
        values["NSStoreUUID"] = uuid
        values["NSStoreType"] = values["NSStoreType"] ?? "SQLite"
        return values
    }

    /// Replaces a store's metadata (Core Data's `setMetadata(_:forPersistentStoreOfType:at:)`) without opening it
    /// as a store. The store's own keys (`NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes` and the other
    /// `NSStore…` keys, `FaultlineStoreFormat`) are kept when `metadata` leaves them out; every value must be a
    /// property-list value.
    public static func setMetadata(_ metadata: [String: Any], forPersistentStoreAt url: URL) throws {
        guard PropertyListSerialization.propertyList(metadata, isValidFor: .binary) else {
            throw StoreError.notAStore(path: url.path, detail: "the metadata holds a value that is not a property-list value")
        }
        guard FileManager.default.fileExists(atPath: url.path) else { throw StoreError.noSuchStore(path: url.path) }
        let connection: SQLiteConnection
        do { connection = try SQLiteConnection(path: url.path, create: false) } catch let error as SQLiteError {
            throw StoreError.sqlite(path: url.path, error: error)
        }
        let (_, plist) = try readMetadataRow(connection, path: url.path)
        guard var stored = StoreMetadata(data: plist) else {
            throw StoreError.notAStore(path: url.path, detail: "its Z_METADATA row is missing or unreadable")
        }
        let kept = stored.values.filter { $0.key.hasPrefix("NSStore") || $0.key == "FaultlineStoreFormat" || $0.key.hasPrefix("NSPersistence") }
        stored.values = metadata.merging(kept) { given, _ in given }
        do {
            let update = try connection.prepare("UPDATE Z_METADATA SET Z_PLIST = ? WHERE Z_VERSION = (SELECT min(Z_VERSION) FROM Z_METADATA)")
            update.bind(try stored.encoded(), at: 1)
            try update.execute()
        } catch let error as SQLiteError {
            throw StoreError.sqlite(path: url.path, error: error)
        }
    }

    private static func readMetadataRow(_ connection: SQLiteConnection, path: String) throws -> (String, Data) {
        do {
            guard let row = try StoreMetadata.row(of: connection) else {
                throw StoreError.notAStore(path: path, detail: "its Z_METADATA row is missing or unreadable")
            }
            return row
        } catch let error as SQLiteError where error.primaryCode == SQLITE_NOTADB {
            throw StoreError.notADatabase(path: path, detail: error.message)
        } catch let error as SQLiteError {
            throw StoreError.notAStore(path: path, detail: "it has no readable Z_METADATA table (\(error.message))")
        }
    }
}
