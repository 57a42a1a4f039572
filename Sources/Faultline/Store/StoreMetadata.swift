import Foundation

/// A store's metadata, as kept in `Z_METADATA.Z_PLIST`: a binary property list, as Core Data writes it
/// (`NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes` of entity name to hash bytes,
/// `NSStoreModelVersionHashesVersion`, `NSStoreModelVersionIdentifiers`, …). Stores written by earlier Faultline
/// builds hold JSON with the same keys and base64 hashes; both read.
///
/// Faultline writes `FaultlineStoreFormat`: 3 for a store whose hashes are Core Data's, as Faultline now writes them;
/// 1 and 2 for stores of earlier builds, whose hashes are Faultline's own (docs/store-format.md). Opening compares
/// the hashes with the model's. A store without the key was written by Core Data, and is checked against a model by
/// its schema (`StoreSchemaCheck`), where its hashes pick the version.
struct StoreMetadata {
    /// Every key as read, custom keys included.
    var values: [String: Any]

    /// `NSStoreUUID` (Core Data keeps the UUID in `Z_METADATA.Z_UUID`; Faultline writes it in both).
    var identifier: String? { values["NSStoreUUID"] as? String }

    /// The format `FaultlineStoreFormat` names: nil for a store Core Data wrote.
    var faultlineFormat: Int? { values["FaultlineStoreFormat"].map { ($0 as? NSNumber)?.intValue ?? 0 } }

    /// The format of the stores Faultline writes: version hashes as Core Data computes them.
    static let currentFormat = 3

    /// Whether the store's hashes are Faultline's own (written before format 3), else Core Data's.
    var hasFaultlineOwnHashes: Bool { (faultlineFormat ?? Self.currentFormat) < Self.currentFormat }

    /// `NSStoreModelVersionHashes`, each hash base64-encoded (as `ManagedObjectModel.versionHashes`).
    var versionHashes: [String: String] {
        guard let hashes = values["NSStoreModelVersionHashes"] as? [String: Any] else { return [:] }
        var result: [String: String] = [:]
        for (name, hash) in hashes {
            if let data = hash as? Data { result[name] = data.base64EncodedString() }
            else if let text = hash as? String { result[name] = text }
        }
        return result
    }

    /// The metadata of a new store Faultline creates for `model`.
    init(identifier: String, model: ManagedObjectModel) {
        let hashes = model.coreDataVersionHashes
        values = [
            "NSStoreType": "SQLite",
            "NSStoreUUID": identifier,
            "NSStoreModelVersionHashes": hashes,
            "NSStoreModelVersionHashesDigest": Self.digest(of: hashes),
            "NSStoreModelVersionChecksumKey": Self.checksum(of: hashes),
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": model.versionIdentifiers,
            "_NSAutoVacuumLevel": "2",
            "FaultlineStoreFormat": Self.currentFormat,
        ]
    }

    /// `NSStoreModelVersionChecksumKey` as Core Data computes it: base64 of the SHA-256 of the entities' hashes in
    /// name order.
    static func checksum(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted(by: { $0.utf16.lexicographicallyPrecedes($1.utf16) }) { bytes += Array(hashes[name]!) }
        return Data(SHA256.hash(bytes)).base64EncodedString()
    }

    /// `NSStoreModelVersionHashesDigest` as Core Data computes it: base64 of the SHA-512 of each entity's name (UTF-8)
    /// followed by its hash, entities in name order.
    static func digest(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted(by: { $0.utf16.lexicographicallyPrecedes($1.utf16) }) {
            bytes += Array(name.utf8) + Array(hashes[name]!)
        }
        return Data(SHA512.hash(bytes)).base64EncodedString()
    }

    /// Reads a binary (or XML) property list, or the JSON of stores written by earlier Faultline builds.
    init?(data: Data) {
        if let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) as? [String: Any] {
            values = plist
        } else if let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            values = json
        } else {
            return nil
        }
    }

    /// The store's `Z_METADATA` row (its UUID and `Z_PLIST`), or nil when the table has no row.
    static func row(of connection: SQLiteConnection) throws -> (uuid: String, plist: Data)? {
        let statement = try connection.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1")
        guard try statement.step() else { return nil }
        return (statement.text(at: 0), statement.data(at: 1))
    }

    /// The binary property list.
    func encoded() throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: values, format: .binary, options: 0)
    }

    /// What differs between the hashes the store was made with and `current` (Faultline's hashes of a model).
    func differences(from current: [String: String]) -> [String] {
        let stored = versionHashes
        var result: [String] = []
        for (name, hash) in current.sorted(by: { $0.key < $1.key }) {
            guard let storedHash = stored[name] else { result.append("entity '\(name)' is not in the store"); continue }
            if storedHash != hash { result.append("entity '\(name)' changed") }
        }
        for name in stored.keys.sorted() where current[name] == nil {
            result.append("entity '\(name)' is in the store but not in the model")
        }
        return result
    }
}
