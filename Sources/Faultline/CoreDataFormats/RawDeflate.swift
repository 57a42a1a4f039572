import CZlib
import Foundation

/// Raw deflate (RFC 1951, no zlib header), the form of `Z_MODELCACHE.Z_CONTENT`.
enum RawDeflate {
    /// The inflated bytes of `data`; at most `limit` bytes, else an error.
    static func inflate(_ data: Data, limit: Int = Limits.inflatedBytes) throws -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CoreDataFormatError("zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let input = [UInt8](data)
        return try input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = uInt(source.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                guard output.count + produced <= limit else {
                    throw CoreDataFormatError("inflates to more than \(limit) bytes (Limits.inflatedBytes)")
                }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END: return output
                case Z_OK: if stream.avail_in == 0 && produced == 0 { throw CoreDataFormatError("deflate data ends early") }
                case Z_BUF_ERROR: throw CoreDataFormatError("deflate data ends early")
                default: throw CoreDataFormatError("not deflate data (zlib error \(status))")
                }
            }
        }
    }
}

/// A Core Data file format (compressed model, property list, keyed archive, compiled model) that cannot be read.
public struct CoreDataFormatError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let problem: String
    init(_ problem: String) { self.problem = problem }
    /// The text `print` and `String(describing:)` show.
    public var description: String { problem }
}
