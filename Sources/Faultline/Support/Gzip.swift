import CZlib
import Foundation

/// gzip streams (RFC 1952) for traces and the files made from them: written by `GzipDeflater`, read by
/// `GzipInflater` — and so by `InputFile`, which every command reads its inputs with.
public enum Gzip {
    /// True when `bytes` begin as a gzip member does (0x1f 0x8b).
    public static func isCompressed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b
    }

    /// True when `path` names a file to be written compressed (it ends in `.gz`).
    public static func isCompressedName(_ path: String) -> Bool { path.hasSuffix(".gz") }

    /// zlib's window bits for a gzip wrapper.
    static let gzipWindowBits: Int32 = 15 + 16
    /// Bytes zlib fills at a time.
    static let chunkBytes = 1 << 16
    /// The most input given to zlib in one call (its counts are 32-bit).
    static let largestInput = 1 << 30
}

/// Compresses bytes into gzip members, handing the compressed bytes to a sink as they are made. The z_stream lives
/// at a fixed address (zlib's state points back at it).
public final class GzipDeflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let output = UnsafeMutableRawBufferPointer.allocate(byteCount: Gzip.chunkBytes, alignment: 1)
    /// The current member has input not yet finished with a trailer.
    private var open = false

    /// How the input written so far is closed off.
    public enum Flush {
        /// Keep it in zlib's window (the best ratio; the last block may wait for more input).
        case none
        /// Emit everything so far: a reader gets every byte written, though the member has no trailer yet.
        case sync
        /// End the member with its trailer: the file is a complete gzip file. More input starts a new member.
        case finish
    }

    /// A deflater at zlib's `level` (1 fastest … 9 smallest).
    public init(level: Int32 = 1) throws {
        stream.initialize(to: z_stream())
        guard deflateInit2_(stream, level, Z_DEFLATED, Gzip.gzipWindowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            output.deallocate()
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "zlib could not start deflating"])
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Compresses `input`, then closes it off as `flush` says; `sink` receives the compressed bytes, in order.
    public func write(_ input: UnsafeRawBufferPointer, flush: Flush, _ sink: (UnsafeRawBufferPointer) -> Void) {
        if input.count > Gzip.largestInput {
            write(UnsafeRawBufferPointer(rebasing: input[..<Gzip.largestInput]), flush: .none, sink)
            return write(UnsafeRawBufferPointer(rebasing: input[Gzip.largestInput...]), flush: flush, sink)
        }
        if input.isEmpty && (flush == .none || !open) { return }
        open = true
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        let mode: Int32 = switch flush { case .none: Z_NO_FLUSH; case .sync: Z_SYNC_FLUSH; case .finish: Z_FINISH }
        while true {
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(output.count)
            let status = deflate(stream, mode)
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 { sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            if status == Z_STREAM_END { break }
            // Done when zlib took all the input and did not fill the output (for a flush: emitted all it holds).
            if status != Z_OK && status != Z_BUF_ERROR { break }
            if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { break }
        }
        if flush == .finish {
            deflateReset(stream)
            open = false
        }
    }
}

/// Decompresses gzip bytes piece by piece — members one after another as gzip allows — handing the bytes to a body
/// as they come. Memory stays bounded whatever the sizes.
public final class GzipInflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let output = UnsafeMutableRawBufferPointer.allocate(byteCount: Gzip.chunkBytes * 4, alignment: 1)
    /// Compressed bytes read so far (for errors).
    private var consumed = 0
    /// True between a member's header and its trailer.
    public private(set) var isInsideMember = false

    /// Why compressed bytes could not be read: the phrase, with the offset in the compressed file.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// The phrase, for the caller to put after the file's name.
        public let description: String
    }

    /// An inflater for gzip members.
    public init() throws {
        stream.initialize(to: z_stream())
        guard inflateInit2_(stream, Gzip.gzipWindowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            output.deallocate()
            throw Failure(description: "zlib could not start inflating")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Inflates `input`, the next compressed bytes, handing what they decompress to to `body`.
    public func inflate(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        if input.count > Gzip.largestInput {
            try inflate(UnsafeRawBufferPointer(rebasing: input[..<Gzip.largestInput]), body)
            return try inflate(UnsafeRawBufferPointer(rebasing: input[Gzip.largestInput...]), body)
        }
        guard let base = input.baseAddress, !input.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer { consumed += input.count }
        while true {
            let before = stream.pointee.avail_in
            if !isInsideMember {
                guard before > 0 else { return }
                // A new member must begin with gzip's magic; zeros after the last member (a padded or preallocated
                // file) are not data.
                let rest = UnsafeRawBufferPointer(start: stream.pointee.next_in, count: Int(before))
                if rest.allSatisfy({ $0 == 0 }) { return }
                if rest[0] != 0x1f || (rest.count >= 2 && rest[1] != 0x8b) {
                    throw Failure(description: "bytes after the end of the compressed data, at byte \(consumed + input.count - rest.count), are not a gzip member")
                }
                isInsideMember = true
            }
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(output.count)
            let status = CZlib.inflate(stream, Z_NO_FLUSH)
            let produced = output.count - Int(stream.pointee.avail_out)
            if produced > 0 { try body(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            switch status {
            case Z_STREAM_END:
                inflateReset(stream)
                isInsideMember = false
            case Z_OK, Z_BUF_ERROR:
                // All input taken and room left over: zlib holds nothing more until more input comes.
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out != 0 { return }
                if produced == 0 && stream.pointee.avail_in == before {
                    throw Failure(description: "zlib made no progress at byte \(consumed + input.count - Int(before))")
                }
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                let at = consumed + input.count - Int(stream.pointee.avail_in)
                throw Failure(description: "the compressed data is damaged at byte \(at): \(message)")
            }
        }
    }
}
