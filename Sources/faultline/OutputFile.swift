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
