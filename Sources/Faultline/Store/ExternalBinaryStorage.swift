import Foundation

/// Binary attributes that allow external storage (`allowsExternalBinaryDataStorage`), in Core Data's format: the
/// column holds a marker byte, then either the bytes themselves (`0x01`) or the name of a file holding them (`0x02`,
/// a UUID string ending in a NUL byte) in `.<StoreName>_SUPPORT/_EXTERNAL_DATA/` beside the store.
struct ExternalBinaryStorage {
    /// Values larger than this many bytes go to a file (Core Data's engineers give "about 100 KB").
    static let threshold = 100 * 1024
    static let inlineMarker: UInt8 = 0x01
    static let fileMarker: UInt8 = 0x02

    /// `_EXTERNAL_DATA` of the store, or nil for an in-memory store, which keeps every value inline.
    let folder: URL?

    /// The storage of the store at `storePath`; nil for an in-memory store.
    init(storePath: String?) {
        folder = storePath.map(Self.folder(ofStoreAt:))
    }

    /// `.<StoreName>_SUPPORT/_EXTERNAL_DATA` beside the store at `storePath`.
    static func folder(ofStoreAt storePath: String) -> URL {
        let store = URL(fileURLWithPath: storePath)
        let name = store.deletingPathExtension().lastPathComponent
        return store.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT/_EXTERNAL_DATA")
    }

    /// The value a stored column holds: the inline bytes, or the file's. A column without a marker (written by
    /// Faultline before it kept Core Data's format), or naming a file that is missing, stays as stored.
    ///
    /// A file is mapped, not read: as in Core Data, its bytes are loaded when first used, so fetching objects whose
    /// external values are never read costs neither the reads nor the memory. (Files are never rewritten in place:
    /// a save writes a new file and the old one is removed, which a mapping survives.)
    func read(_ slot: Slot) -> Slot {
        guard case .blob(let stored) = slot, let marker = stored.first else { return slot }
        switch marker {
        case Self.inlineMarker:
            return .blob(Data(stored.dropFirst()))
        case Self.fileMarker:
            guard let folder, let file = Self.fileName(stored) else { return slot }
            let path = folder.appendingPathComponent(file).path
            guard (try? InputFile.checkReadable(path)) != nil,
                  let bytes = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return slot }
            return .blob(bytes)
        default:
            return slot
        }
    }

    /// The column value for `slot`: bytes up to the threshold inline, larger ones written to a new file first.
    /// Returns the file written, if any, so that a failed save can remove it.
    func write(_ slot: Slot) throws -> (stored: Slot, file: URL?) {
        guard case .blob(let bytes) = slot else { return (slot, nil) }
        guard bytes.count > Self.threshold, let folder else { return (.blob(Data([Self.inlineMarker]) + bytes), nil) }
        let name = UUID().uuidString
        let file = folder.appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try bytes.write(to: file, options: .atomic)
        } catch {
            throw StoreError.notAStore(path: folder.path, detail: "an external binary value could not be written: \(error.localizedDescription)")
        }
        return (.blob(Data([Self.fileMarker]) + Data(name.utf8) + Data([0])), file)
    }

    /// The file a stored column names, if it names one.
    func file(of stored: Slot) -> URL? {
        guard let folder, case .blob(let data) = stored, data.first == Self.fileMarker, let name = Self.fileName(data) else { return nil }
        return folder.appendingPathComponent(name)
    }

    /// The UUID string after the marker (up to a NUL), when it is one: never a path of another shape.
    private static func fileName(_ stored: Data) -> String? {
        let name = stored.dropFirst().prefix { $0 != 0 }
        guard let text = String(bytes: name, encoding: .ascii), UUID(uuidString: text) != nil else { return nil }
        return text
    }
}
