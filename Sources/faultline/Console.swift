import Foundation

/// Standard output and standard error for the commands: never a trap, and a failed write is an error.
///
/// Output is buffered here and written with `write(2)`; a write that fails (`No space left on device` for
/// `>/dev/full`, a closed pipe), whether while the command runs or when it ends, is an error: the command exits with
/// status 1 and says so on standard error — after what it has already done ("loaded …; could not print the
/// summary: …"). Standard error is written unbuffered; when it too fails there is nothing more to tell, and the
/// status says it. The commands run on one thread.
enum Console {
    struct WriteError: Error, CustomStringConvertible {
        let reason: String
        var description: String { "write error: standard output: \(reason)" }
    }

    /// What the running command has done that stays done when its output is lost (a store loaded, a migration
    /// committed): said before the write error.
    nonisolated(unsafe) static var committed: String?

    nonisolated(unsafe) private static var buffer: [UInt8] = []
    /// Bytes held before they are written.
    static let bufferSize = 1 << 16

    /// A terminal sees each line as it is printed; a file or a pipe gets the output in large writes.
    private static let isTerminal = isatty(1) == 1

    /// Writes `text` and `terminator` to standard output.
    static func out(_ text: String, terminator: String = "\n") throws {
        buffer.append(contentsOf: text.utf8)
        buffer.append(contentsOf: terminator.utf8)
        if buffer.count >= bufferSize || isTerminal { try flush() }
    }

    /// Writes everything still buffered for standard output.
    static func flush() throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        if let code = write(buffer[...], to: 1) { throw WriteError(reason: String(cString: strerror(code))) }
    }

    /// Writes `text` and a newline to standard error; false when it could not be written.
    @discardableResult
    static func error(_ text: String) -> Bool {
        write(Array((text + "\n").utf8)[...], to: 2) == nil
    }

    /// Writes all of `bytes` to `descriptor`; the error number when it could not.
    private static func write(_ bytes: ArraySlice<UInt8>, to descriptor: Int32) -> Int32? {
        var bytes = bytes
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written < 0 { return errno }
            if written == 0 { return EIO }
            bytes = bytes.dropFirst(written)
        }
        return nil
    }
}
