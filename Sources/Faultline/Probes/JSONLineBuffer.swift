/// JSON Lines written field by field into one byte buffer: the trace writer formats a whole batch of events into
/// it without building a string per line or per field.
struct JSONLineBuffer {
    private(set) var bytes: [UInt8] = []
    private var first = true

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Starts an object (`{`).
    mutating func begin() {
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    /// Ends an object and its line (`}\n`).
    mutating func endLine() {
        bytes.append(UInt8(ascii: "}"))
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Ends a nested object (`}`).
    mutating func end() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        first = true
    }

    mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        literal(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ name: StaticString, _ value: String) { key(name); quoted(value) }

    mutating func optionalString(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { quoted(value) } else { literal("null") }
    }

    mutating func int(_ name: StaticString, _ value: Int) { key(name); integer(value) }

    /// Seconds as a decimal with nanosecond precision (`0.000012345`): times are measured in nanoseconds, and
    /// integer digits cost far less than a shortest-round-trip `Double` description.
    mutating func seconds(_ name: StaticString, _ value: Double) {
        key(name)
        guard value.isFinite, value >= 0, value < 9e9 else {
            if value.isFinite { bytes.append(contentsOf: value.description.utf8) } else { literal("null") }
            return
        }
        let nanoseconds = Int((value * 1e9).rounded())
        integer(nanoseconds / 1_000_000_000)
        var fraction = nanoseconds % 1_000_000_000
        guard fraction != 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var digits = 9
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        var divisor = 1
        for _ in 1..<digits { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
    }

    mutating func strings(_ name: StaticString, _ values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            quoted(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"?"` `count` times: the placeholders of bind values not recorded.
    mutating func placeholders(_ name: StaticString, count: Int) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for i in 0..<count { if i > 0 { bytes.append(UInt8(ascii: ",")) }; literal("\"?\"") }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `{"key":n,…}` sorted by key.
    mutating func counts(_ name: StaticString, _ values: [String: Int]) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        for (i, pair) in values.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            quoted(pair.key)
            bytes.append(UInt8(ascii: ":"))
            integer(pair.value)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Starts an array value; call `element()` before each element and `endArray()` after the last.
    mutating func beginArray(_ name: StaticString) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        first = true
    }

    mutating func element() {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = true
        bytes.append(UInt8(ascii: "{"))
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        first = false
    }

    /// Short constant text, byte by byte (cheaper than a generic append for a few bytes).
    private mutating func literal(_ text: StaticString) {
        let start = text.utf8Start
        for i in 0..<text.utf8CodeUnitCount { bytes.append(start[i]) }
    }

    private mutating func integer(_ value: Int) {
        guard value >= 0 else { bytes.append(contentsOf: String(value).utf8); return }
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// A JSON string: most (SQL, names, URIs) need no escaping and are copied whole; otherwise runs between the
    /// characters that need it are.
    mutating func quoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `value` as a JSON string literal.
    static func quote(_ value: String) -> String {
        var buffer = JSONLineBuffer(capacity: value.utf8.count + 2)
        buffer.quoted(value)
        return String(decoding: buffer.bytes, as: UTF8.self)
    }
}
