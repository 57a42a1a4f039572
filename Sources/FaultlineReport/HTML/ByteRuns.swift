import Foundation

/// Text split at the bytes that need escaping, found by the C library's `strcspn` (the runs between them are
/// copied whole): escaping a 10 MB string costs one pass at memory speed, in any build.
enum ByteRuns {
    /// Calls `body` with each run of `text`'s UTF-8 bytes that holds none of `stops` and no NUL, and the byte that
    /// ended it (nil for the last run, which ends the text).
    static func forEach(in text: String, stoppingAt stops: [UInt8], _ body: (UnsafeRawBufferPointer, UInt8?) -> Void) {
        let count = text.utf8.count
        let reject = stops.map { CChar(bitPattern: $0) } + [0]
        text.withCString { start in
            reject.withUnsafeBufferPointer { reject in
                var offset = 0
                while offset <= count {
                    let run = strcspn(start + offset, reject.baseAddress!)
                    let end = offset + run
                    body(UnsafeRawBufferPointer(start: start + offset, count: run), end < count ? UInt8(bitPattern: start[end]) : nil)
                    offset = end + 1
                }
            }
        }
    }
}
