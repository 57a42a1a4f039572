import Foundation

/// The files an SQLite store is made of, as Core Data lays them out: the database, its `-wal`, `-shm` and
/// `-journal` siblings, and `.<StoreName>_SUPPORT/_EXTERNAL_DATA` with the values kept outside it. Copying or
/// removing the database alone is how stores get damaged: a write-ahead log holds committed transactions.
struct StoreFileSet {
    let url: URL

    init(_ url: URL) { self.url = url.standardizedFileURL }

    var path: String { url.path }
    var wal: URL { URL(fileURLWithPath: path + "-wal") }
    var sharedMemory: URL { URL(fileURLWithPath: path + "-shm") }
    var journal: URL { URL(fileURLWithPath: path + "-journal") }
    /// `.<StoreName>_SUPPORT/_EXTERNAL_DATA`.
    var externalData: URL { ExternalBinaryStorage.folder(ofStoreAt: path) }
    /// `.<StoreName>_SUPPORT`.
    var support: URL { externalData.deletingLastPathComponent() }
    /// The database's siblings, in the order they are removed (the log before the index it is read with).
    var siblings: [URL] { [wal, sharedMemory, journal] }

    /// What the database file is.
    enum Kind: Equatable {
        case absent
        /// A file of no bytes (SQLite's new, empty database).
        case empty
        case sqlite
        /// Not an SQLite database: `detail` says what it is.
        case other(String)
    }

    /// SQLite's header string, the first 16 bytes of every database file.
    private static let header = Data("SQLite format 3\0".utf8)

    /// The database file's kind, by its type and first bytes (reads 16 bytes).
    func kind() -> Kind {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return .absent }
        if let type = attributes[.type] as? FileAttributeType, type != .typeRegular {
            return .other(type == .typeDirectory ? "it is a folder" : "it is not a regular file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { return .other("it cannot be read") }
        defer { try? handle.close() }
        let first = (try? handle.read(upToCount: Self.header.count)) ?? Data()
        if first.isEmpty { return .empty }
        return first == Self.header ? .sqlite : .other("its first bytes are not SQLite's header")
    }

    /// The names of the external values kept beside the store (none when it has no folder).
    func externalValueNames() throws -> [String] {
        guard FileManager.default.fileExists(atPath: externalData.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: externalData.path).sorted()
    }

    /// True when `other` is this store's database file.
    func isSameStore(as other: StoreFileSet) -> Bool {
        url.resolvingSymlinksInPath().path == other.url.resolvingSymlinksInPath().path
    }
}
