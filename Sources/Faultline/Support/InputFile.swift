import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads an input file (a model, data file, trace, results file or log) whole, after checking that it is a regular
/// file: a folder, a device such as /dev/null, a pipe or a missing file gets an error saying which, where Foundation
/// would say "You don't have permission".
public enum InputFile {
    /// Why a file could not be read: one phrase, for the caller to put after the file's name.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The file's bytes.
    public static func read(_ path: String) throws -> Data {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK)
        guard descriptor >= 0 else { throw Failure(description: reason(errno)) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Failure(description: reason(errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw Failure(description: "is a folder, not a file")
        case S_IFCHR, S_IFBLK: throw Failure(description: "is a device, not a file")
        case S_IFIFO, S_IFSOCK: throw Failure(description: "is a pipe or socket, not a file")
        default: throw Failure(description: "is not a regular file")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw Failure(description: "cannot read: \(String(cString: strerror(errno)))")
        }
    }

    private static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES, EPERM: return "cannot read: permission denied"
        case ENOTDIR: return "no such file (a folder on its path is a file)"
        case EISDIR: return "is a folder, not a file"
        default: return "cannot read: \(String(cString: strerror(code)))"
        }
    }
}
