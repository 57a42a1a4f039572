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
        /// The phrase: "no such file", "is a folder, not a file"…
        public let description: String
    }

    /// The file's bytes, read into one buffer of the file's size (a file that grows meanwhile is read to its end). A
    /// gzip file is decompressed, to at most `Limits.decompressedInputBytes`.
    public static func read(_ path: String) throws -> Data {
        let descriptor = try openRegularFile(path)
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw Failure(description: reason(errno)) }
        var data = Data(count: max(0, Int(info.st_size)) + 1)
        var filled = 0
        while true {
            if filled == data.count { data.count += max(1 << 16, data.count / 2) }
            let count = data.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            filled += count
        }
        data.count = filled
        guard data.withUnsafeBytes(Gzip.isCompressed) else { return data }
        var plain = Data()
        let inflater = try GzipInflater()
        do {
            try data.withUnsafeBytes { compressed in
                try inflater.inflate(compressed) { piece in
                    guard plain.count + piece.count <= Limits.decompressedInputBytes else {
                        throw Failure(description: "decompresses to more than \(Limits.decompressedInputBytes) bytes (Limits.decompressedInputBytes): decompress it first")
                    }
                    plain.append(contentsOf: piece)
                }
            }
        } catch let failure as GzipInflater.Failure {
            throw Failure(description: "gzip: \(failure)")
        }
        if inflater.isInsideMember { throw Failure(description: "gzip: the compressed data ends before its end (the file was cut short)") }
        return plain
    }

    /// What `readChunks` found.
    public struct ChunksRead: Sendable {
        /// The file was gzip, and its pieces were the decompressed bytes.
        public var wasCompressed = false
        /// A gzip file that ends inside a member: the bytes read are those of its complete blocks (a writer that
        /// was stopped before it finished; a file cut short).
        public var endsInsideMember = false
    }

    private static func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.read(descriptor, buffer, count)
        #else
        return Darwin.read(descriptor, buffer, count)
        #endif
    }

    /// The file's bytes in pieces of at most `size`, in order, for reading a file larger than memory should hold. A
    /// gzip file's pieces are its decompressed bytes (of any size), so memory stays bounded either way.
    @discardableResult
    public static func readChunks(_ path: String, size: Int = 1 << 22, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> ChunksRead {
        let descriptor = try openRegularFile(path)
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
        defer { buffer.deallocate() }
        var result = ChunksRead()
        var inflater: GzipInflater?
        var first = true
        while true {
            let count = systemRead(descriptor, buffer.baseAddress!, size)
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if first {
                first = false
                if Gzip.isCompressed(chunk) {
                    inflater = try GzipInflater()
                    result.wasCompressed = true
                }
            }
            if let inflater {
                do {
                    try inflater.inflate(chunk, body)
                } catch let failure as GzipInflater.Failure {
                    throw Failure(description: "gzip: \(failure)")
                }
            } else {
                try body(chunk)
            }
        }
        result.endsInsideMember = inflater?.isInsideMember ?? false
        return result
    }

    /// Checks that `path` is a regular file that can be opened for reading, without reading it.
    public static func checkReadable(_ path: String) throws {
        close(try openRegularFile(path))
    }

    /// Opens `path` for reading after checking that it is a regular file.
    private static func openRegularFile(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK)
        guard descriptor >= 0 else { throw Failure(description: reason(errno)) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = Failure(description: reason(errno))
            close(descriptor)
            throw failure
        }
        let problem: String?
        switch info.st_mode & S_IFMT {
        case S_IFREG: problem = nil
        case S_IFDIR: problem = "is a folder, not a file"
        case S_IFCHR, S_IFBLK: problem = "is a device, not a file"
        case S_IFIFO, S_IFSOCK: problem = "is a pipe or socket, not a file"
        default: problem = "is not a regular file"
        }
        if let problem {
            close(descriptor)
            throw Failure(description: problem)
        }
        return descriptor
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
