/// JSON Lines written field by field into one growable byte buffer: the trace writer formats a whole batch of events
/// into it without building a string per line or per field, and without the uniqueness and capacity checks an array
/// makes on every append.
struct JSONLineBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    private var first = true
    /// The file name of the last call site written when it needed no escape (call sites come from a few files).
    private var plainCallSiteFile: UnsafeRawPointer?
    private var plainCallSiteLength = 0
    /// The URI prefix of the last object ID written: the faults of a run are faults of a few entities.
    private var objectURIPrefix = ObjectURIPrefix()
    /// SQL texts with their quoted, escaped form: a traced program runs the same few statements over and over.
    private var sqlCache: [(sql: String, quoted: [UInt8])] = []
    private var sqlCacheNext = 0
    private static let sqlCacheSize = 16

    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The bytes written so far (valid until the next change).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The bytes written so far, as text.
    var string: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }

    @inline(__always) private mutating func reserve(_ n: Int) {
        if count &+ n > capacity { grow(count + n) }
    }

    private mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always) private mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    @inline(__always) private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        append(source, count: bytes.count)
    }

    /// Copies `n` bytes. Most runs are short (keys, punctuation, names): those are copied a word at a time here,
    /// the last word overlapping the one before, rather than through a call to `memcpy`.
    @inline(__always) private mutating func append(_ source: UnsafeRawPointer, count n: Int) {
        reserve(n)
        let target = UnsafeMutableRawPointer(base + count)
        if n >= 8 && n <= 64 {
            var i = 0
            while i &+ 8 < n {
                target.storeBytes(of: source.loadUnaligned(fromByteOffset: i, as: UInt64.self), toByteOffset: i, as: UInt64.self)
                i &+= 8
            }
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self), toByteOffset: n &- 8, as: UInt64.self)
        } else if n < 8 {
            for i in 0..<n { target.storeBytes(of: source.load(fromByteOffset: i, as: UInt8.self), toByteOffset: i, as: UInt8.self) }
        } else {
            target.copyMemory(from: source, byteCount: n)
        }
        count &+= n
    }

    /// Starts an object (`{`).
    mutating func begin() {
        append(UInt8(ascii: "{"))
        first = true
    }

    /// Starts an object with constant text that includes its first key (e.g. `{"type":"fetch","t":`).
    @inline(__always) mutating func begin(_ opening: StaticString) {
        literal(opening)
        first = false
    }

    /// Constant text that continues an object: a key with its punctuation (`,"rows":`), perhaps with the end of
    /// the previous value before it.
    @inline(__always) mutating func field(_ text: StaticString) {
        literal(text)
        first = false
    }

    /// A continuing key and its integer value.
    @inline(__always) mutating func field(_ text: StaticString, integer value: Int) {
        field(text)
        integer(value)
    }

    /// A continuing key and its value in seconds.
    @inline(__always) mutating func field(_ text: StaticString, seconds value: Double) {
        field(text)
        secondsValue(value)
    }

    /// Ends an object and its line (`}\n`).
    mutating func endLine() {
        append(UInt8(ascii: "}"))
        append(UInt8(ascii: "\n"))
    }

    /// Ends a nested object (`}`).
    mutating func end() {
        append(UInt8(ascii: "}"))
        first = false
    }

    /// Forgets what was written, keeping the storage.
    mutating func removeAll() {
        count = 0
        first = true
    }

    mutating func key(_ name: StaticString) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        append(UInt8(ascii: "\""))
        literal(name)
        append(UInt8(ascii: "\""))
        append(UInt8(ascii: ":"))
    }

    mutating func string(_ name: StaticString, _ value: String) { key(name); quoted(value) }

    mutating func optionalString(_ name: StaticString, _ value: String?) {
        key(name)
        optionalQuoted(value)
    }

    mutating func optionalQuoted(_ value: String?) {
        if let value { quoted(value) } else { literal("null") }
    }

    mutating func int(_ name: StaticString, _ value: Int) { key(name); integer(value) }

    /// Seconds as a decimal with nanosecond precision (`0.000012345`): times are measured in nanoseconds, and
    /// integer digits cost far less than a shortest-round-trip `Double` description.
    mutating func seconds(_ name: StaticString, _ value: Double) {
        key(name)
        secondsValue(value)
    }

    mutating func secondsValue(_ value: Double) {
        guard value.isFinite, value >= 0, value < 9e9 else {
            if value.isFinite { text(value.description) } else { literal("null") }
            return
        }
        // Non-negative, so adding a half and truncating rounds to the nearest nanosecond.
        let nanoseconds = Int(value * 1e9 + 0.5)
        integer(nanoseconds / 1_000_000_000)
        // Below 10⁹: 32-bit division by a constant is a shorter multiply than 64-bit signed.
        let fraction = UInt32(truncatingIfNeeded: nanoseconds % 1_000_000_000)
        guard fraction != 0 else { return }
        // Nine digits after the point, two at a time, then the trailing zeros taken off.
        reserve(10)
        base[count] = UInt8(ascii: ".")
        let end = count &+ 10
        var position = end
        var rest = fraction
        for _ in 0..<4 {
            position &-= 2
            pair(Int(rest % 100), at: position)
            rest /= 100
        }
        base[position &- 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
        count = end
        while base[count &- 1] == UInt8(ascii: "0") { count &-= 1 }
    }

    /// The two decimal digits of `value` (below 100) at `position`.
    @inline(__always) private func pair(_ value: Int, at position: Int) {
        let pairs = Self.digitPairs.utf8Start
        base[position] = pairs[value &* 2]
        base[position &+ 1] = pairs[value &* 2 &+ 1]
    }

    /// "00", "01", … "99".
    private static var digitPairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    mutating func strings(_ name: StaticString, _ values: [String]) {
        key(name)
        stringArray(values)
    }

    mutating func stringArray(_ values: [String]) {
        append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { append(UInt8(ascii: ",")) }
            quoted(value)
        }
        append(UInt8(ascii: "]"))
    }

    /// `"?"` `count` times: the placeholders of bind values not recorded.
    mutating func placeholders(_ name: StaticString, count: Int) {
        key(name)
        placeholderArray(count: count)
    }

    mutating func placeholderArray(count: Int) {
        append(UInt8(ascii: "["))
        for i in 0..<count { if i > 0 { append(UInt8(ascii: ",")) }; literal("\"?\"") }
        append(UInt8(ascii: "]"))
    }

    /// `{"key":n,…}` sorted by key.
    mutating func counts(_ name: StaticString, _ values: [String: Int]) {
        key(name)
        append(UInt8(ascii: "{"))
        for (i, pair) in values.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { append(UInt8(ascii: ",")) }
            quoted(pair.key)
            append(UInt8(ascii: ":"))
            integer(pair.value)
        }
        append(UInt8(ascii: "}"))
    }

    /// Starts an array value; call `element()` before each element and `endArray()` after the last.
    mutating func beginArray(_ name: StaticString) {
        key(name)
        append(UInt8(ascii: "["))
        first = true
    }

    mutating func element() {
        if !first { append(UInt8(ascii: ",")) }
        first = true
        append(UInt8(ascii: "{"))
    }

    mutating func endArray() {
        append(UInt8(ascii: "]"))
        first = false
    }

    /// Text written as it is (no quotes, no escaping): for values known to need none.
    mutating func text(_ value: String) {
        Self.withUTF8(of: value) { append($0) }
    }

    /// Bytes written as they are (no quotes, no escaping): for bytes known to need none.
    mutating func text(_ bytes: UnsafeRawBufferPointer) {
        append(bytes)
    }

    /// Lends `value`'s UTF-8 bytes: a native string its own storage, without a copy or a retain.
    static func withUTF8(of value: String, _ body: (UnsafeRawBufferPointer) -> Void) {
        if value.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) == nil {
            var copy = value
            copy.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Constant text (inlined, so that the copy of a constant's bytes is made for its known length).
    @inline(__always) mutating func literal(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func integer(_ value: Int) {
        // Most integers in a trace are counts below ten.
        if value >= 0 && value < 10 { append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)); return }
        var magnitude = value.magnitude
        var digits = 1
        var power: UInt = 10
        while digits < 20 && power <= magnitude { digits += 1; power = power &* 10 }
        reserve(digits + 1)
        if value < 0 { base[count] = UInt8(ascii: "-"); count &+= 1 }
        var position = count &+ digits
        count = position
        while magnitude >= 10 {
            position &-= 2
            pair(Int(magnitude % 100), at: position)
            magnitude /= 100
        }
        if position > count &- digits {
            position &-= 1
            base[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
        }
    }

    /// A JSON string: most (SQL, names, URIs) need no escaping and are copied whole; otherwise runs between the
    /// characters that need it are.
    mutating func quoted(_ value: String) {
        let utf8 = value.utf8
        // Short strings (entity names, result types: stored in the string itself) byte by byte, without lending
        // their bytes through a copy.
        if utf8.count <= 15 {
            reserve(2 &+ 6 &* 15)
            base[count] = UInt8(ascii: "\"")
            count &+= 1
            for byte in utf8 {
                if Self.needsEscaping(byte) {
                    escaped(byte)
                } else {
                    base[count] = byte
                    count &+= 1
                }
            }
            base[count] = UInt8(ascii: "\"")
            count &+= 1
            return
        }
        append(UInt8(ascii: "\""))
        escaped(value)
        append(UInt8(ascii: "\""))
    }

    /// `"Module/File.swift:42"`: a call site's file and line as a JSON string.
    mutating func quotedCallSite(file: StaticString, line: UInt) {
        let name = UnsafeRawPointer(file.utf8Start)
        let length = file.utf8CodeUnitCount
        append(UInt8(ascii: "\""))
        if name == plainCallSiteFile && length == plainCallSiteLength {
            append(name, count: length)
        } else {
            let before = count
            escaped(UnsafeRawBufferPointer(start: name, count: length))
            if count &- before == length {
                plainCallSiteFile = name
                plainCallSiteLength = length
            }
        }
        append(UInt8(ascii: ":"))
        integer(Int(line))
        append(UInt8(ascii: "\""))
    }

    /// An object ID's URI as a JSON string (`objectID.uriString`), written from the ID: no URI string is built, and
    /// the ID's entity and store are compared by reference, not read.
    mutating func quotedObjectURI(_ id: ManagedObjectID) {
        guard objectURIPrefix.update(for: id) else { quoted(id.uriString); return }
        append(UInt8(ascii: "\""))
        objectURIPrefix.bytes.withUnsafeBytes { append($0) }
        integer(Int(id.key))
        append(UInt8(ascii: "\""))
    }

    /// `value` escaped, read in place.
    mutating func escaped(_ value: String) {
        Self.withUTF8(of: value) { escaped($0) }
    }

    /// An SQL text as a JSON string, escaped once per distinct text while it stays among the last 16.
    mutating func quotedSQL(_ sql: String) {
        let length = sql.utf8.count
        for i in sqlCache.indices where sqlCache[i].sql.utf8.count == length && sqlCache[i].sql == sql {
            sqlCache[i].quoted.withUnsafeBytes { append($0) }
            return
        }
        let start = count
        quoted(sql)
        let entry = (sql, Array(UnsafeBufferPointer(start: base + start, count: count - start)))
        if sqlCache.count < Self.sqlCacheSize {
            sqlCache.append(entry)
        } else {
            sqlCache[sqlCacheNext] = entry
            sqlCacheNext = (sqlCacheNext + 1) % Self.sqlCacheSize
        }
    }

    /// UTF-8 text as the inside of a JSON string (without the quotes): runs that need no escape are copied whole.
    mutating func escaped(_ utf8: UnsafeRawBufferPointer) {
        guard let start = utf8.baseAddress else { return }
        let n = utf8.count
        var runStart = 0
        var i = 0
        while i < n {
            // Eight bytes at a time while none of them needs escaping (control characters, quote, backslash).
            if i &+ 8 <= n && !Self.needsEscaping(start.loadUnaligned(fromByteOffset: i, as: UInt64.self)) {
                i &+= 8
                continue
            }
            let byte = start.load(fromByteOffset: i, as: UInt8.self)
            i &+= 1
            guard Self.needsEscaping(byte) else { continue }
            append(start + runStart, count: i &- 1 &- runStart)
            runStart = i
            escaped(byte)
        }
        append(start + runStart, count: n &- runStart)
    }

    /// True for the bytes JSON escapes in a string: control characters, the quote and the backslash.
    @inline(__always) private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The escape of one byte that needs one (a control character, a quote or a backslash).
    private mutating func escaped(_ byte: UInt8) {
        append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(byte)
        case UInt8(ascii: "\n"): append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): append(UInt8(ascii: "t"))
        default:
            func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
            literal("u00")
            append(hex(byte >> 4))
            append(hex(byte & 0xF))
        }
    }

    /// True when any byte of `word` is below 0x20, a quote or a backslash (the bit tricks of "Bit Twiddling Hacks":
    /// a byte is below n when `(x - n) & ~x & 0x80` is set; a byte equals c when `x ^ c` has a zero byte).
    @inline(__always) private static func needsEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (word &- ones &* 0x20) & ~word & highs
        return control | hasZero(word ^ (ones &* 0x22)) | hasZero(word ^ (ones &* 0x5C)) != 0
    }

    /// `value` as a JSON string literal.
    static func quote(_ value: String) -> String {
        var buffer = JSONLineBuffer(capacity: value.utf8.count + 2)
        buffer.quoted(value)
        return buffer.string
    }
}

/// Inside a JSON string: the predicate formatter writes a predicate straight into the buffer (a fetch event written
/// without a recording, as `TraceWriter.line(for:)` writes one; queued fetches are written from a `PredicateRecording`).
extension JSONLineBuffer: PredicateTextSink {
    mutating func emit(_ text: StaticString) {
        escaped(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func emit(text: String) { escaped(text) }

    /// Plain text needs no JSON escape either (JSON escapes the same characters): copied as it is.
    mutating func emit(plain value: String) { text(value) }

    mutating func emit(integer value: Int64) {
        if let value = Int(exactly: value) { integer(value) } else { emit(text: String(value)) }
    }
}
