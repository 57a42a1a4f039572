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
struct PredicateRecording: PredicateTextSink, ~Copyable {
    /// Where the recording goes. A trace's queue lends its own storage here for each fetch, so that the bytes are
    /// written where they are kept.
    var bytes: RecordedBytes
    /// The URI prefix of the last object ID recorded: a fetch by object ID records the same one every time.
    private var uriPrefix = ObjectURIPrefix()

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

    /// Writes recorded bytes as the inside of a JSON string: the predicate's text, escaped.
    static func replay(_ recorded: UnsafeRawBufferPointer, into json: inout JSONLineBuffer) {
        guard let start = recorded.baseAddress else { return }
        var offset = 0
        func read<T: BitwiseCopyable>(_: T.Type) -> T {
            defer { offset &+= MemoryLayout<T>.size }
            return start.loadUnaligned(fromByteOffset: offset, as: T.self)
        }
        func bytes() -> UnsafeRawBufferPointer {
            let length = read(Int.self)
            defer { offset &+= length }
            return UnsafeRawBufferPointer(start: start + offset, count: length)
        }
        while offset < recorded.count {
            switch Token(rawValue: read(UInt8.self)) {
            case .constant:
                let address = UnsafeRawPointer(bitPattern: read(UInt.self))
                json.escaped(UnsafeRawBufferPointer(start: address, count: read(Int.self)))
            case .text: json.escaped(bytes())
            case .plain: json.text(bytes())
            case .integer: json.emit(integer: read(Int64.self))
            case .objectID:
                let key = read(Int64.self)
                json.literal(#"CAST(\""#)
                json.text(bytes())
                json.emit(integer: key)
                json.literal(#"\", \"NSManagedObjectID\")"#)
            case nil: return
            }
        }
    }
}

/// Bytes recorded end to end, in storage freed by hand (`deallocate()`): a trace's queue keeps one for each batch
/// of events, beside the events.
struct RecordedBytes {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(byteCount: self.capacity, alignment: 8)
    }

    @inline(__always) mutating func reserve(_ n: Int) {
        if count &+ n > capacity { grow(count + n) }
    }

    private mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// The bytes from `start` to `end` (valid until the next change).
    func slice(_ start: Int, _ end: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + start, count: end - start)
    }

    func deallocate() { base.deallocate() }
}
