/// A predicate's formatting, recorded by the traced thread as it queues a fetch event and replayed by the trace
/// writer as the line's text.
///
/// The writer could format the predicate itself, but a predicate is a handful of small allocations made for one
/// fetch: the writer reading them would pull each cache line over to its processor, and the traced thread would pull
/// it back when it frees them. Where that is dear (the spells in docs/trace-format.md, Cost), one-row fetches cost
/// 1.10× rather than 1.05× (medians). So the traced thread walks the predicate (the formatter, with this type as its
/// sink) and keeps only what the text needs, in bytes of its own: constant text by address, other text copied,
/// integers as they are, object IDs as their URI prefix and key. Escaping and number formatting are left to the
/// writer.
///
/// A fetch compiled through a `FetchFilterTemplate` is not walked at all: its shape's text was recorded once, with
/// a hole for each constant (`PredicateTextShape`), and the fetch records a reference to it and its constants.
struct PredicateRecording: PredicateTextSink, ~Copyable {
    /// Where the recording goes. A trace's queue lends its own storage here for each fetch, so that the bytes are
    /// written where they are kept.
    var bytes: RecordedBytes
    /// The URI prefix of the last object ID recorded: a fetch by object ID records the same one every time.
    private var uriPrefix = ObjectURIPrefix()
    /// Record a hole for each constant instead of its literal (the recording of a `PredicateTextShape`).
    fileprivate var marksConstants = false
    /// The holes recorded.
    fileprivate private(set) var holes = 0

    private enum Token: UInt8 {
        /// Constant text: its address and length (8 bytes each).
        case constant = 1
        /// Text to escape: its length (8 bytes), then its bytes.
        case text
        /// Text that needs no escape: its length, then its bytes.
        case plain
        /// An integer (8 bytes).
        case integer
        /// An object ID literal: its key (8 bytes), its URI prefix's length (8 bytes), then the prefix, which needs
        /// no escape.
        case objectID
        /// A shape's text with a hole for each constant: its recording's address and length (8 bytes each). The
        /// constants follow, in order, each ended by `end`.
        case shape
        /// Where a shape's next constant goes.
        case hole
        /// The end of one constant after a `shape`.
        case end
    }

    init(capacity: Int = 256) {
        bytes = RecordedBytes(capacity: capacity)
    }

    deinit { bytes.deallocate() }

    @inline(__always) private mutating func reserve(_ n: Int) { bytes.reserve(n) }

    @inline(__always) private mutating func put<T: BitwiseCopyable>(_ value: T) {
        bytes.base.storeBytes(of: value, toByteOffset: bytes.count, as: T.self)
        bytes.count &+= MemoryLayout<T>.size
    }

    private mutating func put(_ raw: UnsafeRawBufferPointer) {
        guard let source = raw.baseAddress else { return }
        (bytes.base + bytes.count).copyMemory(from: source, byteCount: raw.count)
        bytes.count &+= raw.count
    }

    private mutating func put(_ token: Token, text: UnsafeRawBufferPointer) {
        reserve(9 &+ text.count)
        put(token.rawValue)
        put(text.count)
        put(text)
    }

    mutating func emit(_ text: StaticString) {
        guard text.hasPointerRepresentation else {
            text.withUTF8Buffer { put(.text, text: UnsafeRawBufferPointer($0)) }
            return
        }
        reserve(17)
        put(Token.constant.rawValue)
        put(UInt(bitPattern: text.utf8Start))
        put(text.utf8CodeUnitCount)
    }

    mutating func emit(text: String) {
        JSONLineBuffer.withUTF8(of: text) { put(.text, text: $0) }
    }

    mutating func emit(plain text: String) {
        JSONLineBuffer.withUTF8(of: text) { put(.plain, text: $0) }
    }

    mutating func emit(integer value: Int64) {
        reserve(9)
        put(Token.integer.rawValue)
        put(value)
    }

    mutating func emit(objectID id: ManagedObjectID) {
        guard uriPrefix.update(for: id) else {
            PredicateFormatter.objectIDLiteral(id, into: &self)
            return
        }
        reserve(17 &+ uriPrefix.bytes.count)
        put(Token.objectID.rawValue)
        put(id.key)
        put(uriPrefix.bytes.count)
        uriPrefix.bytes.withUnsafeBytes { put($0) }
    }

    mutating func emit(constant value: PredicateValue) {
        guard marksConstants else {
            PredicateFormatter.literal(value, into: &self)
            return
        }
        reserve(1)
        put(Token.hole.rawValue)
        holes &+= 1
    }

    /// Records one constant of a shape-recorded predicate (`PredicateShape` does, as it scans): its literal, then
    /// the end of it.
    mutating func recordConstant(_ value: PredicateValue) {
        PredicateFormatter.literal(value, into: &self)
        endConstant()
    }

    /// Ends a constant recorded through `emit`.
    mutating func endConstant() {
        reserve(1)
        put(Token.end.rawValue)
    }

    /// Records a predicate of `text`'s shape by its constants, as `recordConstant` recorded them (`text` must
    /// outlive the recording).
    mutating func record(_ text: PredicateTextShape, constants recorded: UnsafeRawBufferPointer) {
        reserve(17 &+ recorded.count)
        put(Token.shape.rawValue)
        put(UInt(bitPattern: text.bytes.base))
        put(text.bytes.count)
        put(recorded)
    }

    /// Writes recorded bytes as the inside of a JSON string: the predicate's text, escaped.
    static func replay(_ recorded: UnsafeRawBufferPointer, into json: inout JSONLineBuffer) {
        var reader = Reader(recorded)
        replay(&reader, into: &json, constants: nil)
    }

    /// Replays tokens to the end of `reader`, or to the end of one constant; a shape's holes take `constants`.
    private static func replay(_ reader: inout Reader, into json: inout JSONLineBuffer, constants: UnsafeMutablePointer<Reader>?) {
        while !reader.atEnd {
            switch Token(rawValue: reader.read(UInt8.self)) {
            case .constant:
                let address = UnsafeRawPointer(bitPattern: reader.read(UInt.self))
                json.escaped(UnsafeRawBufferPointer(start: address, count: reader.read(Int.self)))
            case .text: json.escaped(reader.bytes())
            case .plain: json.text(reader.bytes())
            case .integer: json.emit(integer: reader.read(Int64.self))
            case .objectID:
                let key = reader.read(Int64.self)
                json.literal(#"CAST(\""#)
                json.text(reader.bytes())
                json.emit(integer: key)
                json.literal(#"\", \"NSManagedObjectID\")"#)
            case .shape:
                let address = UnsafeRawPointer(bitPattern: reader.read(UInt.self))
                var shape = Reader(UnsafeRawBufferPointer(start: address, count: reader.read(Int.self)))
                // The constants follow the shape's reference in this recording.
                withUnsafeMutablePointer(to: &reader) { replay(&shape, into: &json, constants: $0) }
            case .hole:
                guard let constants else { return }
                replay(&constants.pointee, into: &json, constants: nil)
            case .end:
                if constants == nil { return }
            case nil: return
            }
        }
    }

    /// Reads recorded bytes in order.
    private struct Reader {
        let start: UnsafeRawPointer?
        let count: Int
        var offset = 0

        init(_ bytes: UnsafeRawBufferPointer) {
            start = bytes.baseAddress
            count = bytes.baseAddress == nil ? 0 : bytes.count
        }

        var atEnd: Bool { offset >= count }

        mutating func read<T: BitwiseCopyable>(_: T.Type) -> T {
            defer { offset &+= MemoryLayout<T>.size }
            return start.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: T.self)
        }

        mutating func bytes() -> UnsafeRawBufferPointer {
            let length = read(Int.self)
            defer { offset &+= length }
            return UnsafeRawBufferPointer(start: start.unsafelyUnwrapped + offset, count: length)
        }
    }
}

/// A predicate shape's canonical text with a hole where each constant goes, recorded once per shape (with its
/// `FetchFilterTemplate`) so that a traced fetch of that shape records only its constants.
final class PredicateTextShape: @unchecked Sendable {
    /// The recording (immutable once made).
    let bytes: RecordedBytes

    /// The text of `predicate`'s shape; nil unless it has exactly `constants` holes, in the order `PredicateShape`
    /// lists the constants.
    init?(_ predicate: ObjectPredicate, constants: Int) {
        var recording = PredicateRecording(capacity: 64)
        recording.marksConstants = true
        PredicateFormatter.format(predicate, into: &recording)
        guard recording.holes == constants else { return nil }
        var taken = RecordedBytes(capacity: 0)
        swap(&taken, &recording.bytes)
        bytes = taken
    }

    deinit { bytes.deallocate() }
}
