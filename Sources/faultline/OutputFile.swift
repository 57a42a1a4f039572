import Faultline
import Foundation

/// Files a command writes: checked before any work, so that a bad path fails fast and writes nothing, and written
/// whole (atomically) with an error that says what is wrong rather than Foundation's NSError text.
enum OutputFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Fails unless `path` can be written: its folder exists and is a folder, and `path` is not a folder itself.
    static func check(_ path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else {
            throw Failure(description: "cannot write '\(path)': the folder '\(folder)' does not exist")
        }
        guard isDirectory.boolValue else { throw Failure(description: "cannot write '\(path)': '\(folder)' is not a folder") }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw Failure(description: "cannot write '\(path)': it is a folder")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw Failure(description: "cannot write '\(path)': the folder '\(folder)' is not writable")
        }
    }

    /// Fails unless the folder `path` exists as a folder or can be made: the nearest part of it that exists must be
    /// a writable folder.
    static func checkFolder(_ path: String) throws {
        var url = URL(fileURLWithPath: path).standardizedFileURL
        var isDirectory: ObjCBool = false
        while !FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && url.path != "/" {
            url.deleteLastPathComponent()
        }
        guard isDirectory.boolValue else { throw Failure(description: "cannot make the folder '\(path)': '\(url.path)' is a file") }
        guard FileManager.default.isWritableFile(atPath: url.path) else {
            throw Failure(description: "cannot make the folder '\(path)': '\(url.path)' is not writable")
        }
    }

    /// Writes `data` to `path` in one step (a reader never sees half a file).
    static func write(_ data: Data, to path: String) throws {
        try check(path)
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            let reason = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError).map { String(cString: strerror(Int32($0.code))) }
            throw Failure(description: "cannot write '\(path)'\(reason.map { ": \($0)" } ?? "")")
        }
    }
}

/// A file written in pieces (an output too large to build in memory): to a hidden name beside it, renamed into
/// place by `commit`, so that a reader never sees half of it and a failure leaves nothing behind.
final class StreamingOutputFile {
    let path: String
    private let partial: String
    private let handle: FileHandle
    private var committed = false
    /// A path ending in `.gz` is written compressed (gzip, zlib's fastest level).
    private let deflater: GzipDeflater?

    init(_ path: String) throws {
        try OutputFile.check(path)
        self.path = path
        let url = URL(fileURLWithPath: path)
        partial = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).partial").path
        guard FileManager.default.createFile(atPath: partial, contents: nil), let handle = FileHandle(forWritingAtPath: partial) else {
            throw OutputFile.Failure(description: "cannot write '\(path)'")
        }
        self.handle = handle
        deflater = Gzip.isCompressedName(path) ? try GzipDeflater(level: 1) : nil
    }

    func write(_ bytes: [UInt8]) throws {
        guard let deflater else { return try writeToFile(bytes) }
        var failure: Error?
        bytes.withUnsafeBytes { raw in
            deflater.write(raw, flush: .none) { piece in
                if failure == nil { do { try writeToFile(Array(piece)) } catch { failure = error } }
            }
        }
        if let failure { throw failure }
    }

    private func writeToFile(_ bytes: [UInt8]) throws {
        do { try handle.write(contentsOf: bytes) } catch {
            throw OutputFile.Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno)))")
        }
    }

    func commit() throws {
        if let deflater {
            var failure: Error?
            deflater.write(UnsafeRawBufferPointer(start: nil, count: 0), flush: .finish) { piece in
                if failure == nil { do { try writeToFile(Array(piece)) } catch { failure = error } }
            }
            if let failure { throw failure }
        }
        try handle.close()
        guard rename(partial, path) == 0 else { throw OutputFile.Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno)))") }
        committed = true
    }

    deinit {
        if !committed {
            try? handle.close()
            try? FileManager.default.removeItem(atPath: partial)
        }
    }
}
