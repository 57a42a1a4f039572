import Foundation

/// Lines the engine writes to standard error (SQL debug lines, its own warnings): written with `write(2)`, never a
/// trap — `FileHandle.write(_:)` stops the program when the stream is full or closed. A line that cannot be written
/// is dropped; the program goes on.
enum StandardError {
    static func write(_ line: String) {
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(2, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
