import Foundation

/// A JSON value of a trace line, as the trace reader needs it: numbers keep their text (so that a count is read
/// exactly and an error shows what was written).
enum TraceJSON {
    case string(String)
    case number(text: Substring, value: Double)
    case bool(Bool)
    case null
    case array([TraceJSON])
    case object([(String, TraceJSON)])

    /// True when a number was written as digits (an optional minus and digits only): read as an integer exactly.
    static func isWholeNumberText(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }

    /// The value as an error message shows it.
    var shown: String {
        switch self {
        case .string(let s): return s
        case .number(let text, let value):
            return TraceJSON.isWholeNumberText(text) ? String(text) : "\(value)"
        case .bool(let b): return b ? "1" : "0"
        case .null: return "null"
        case .array(let items): return "(" + items.map(\.shown).joined(separator: ", ") + ")"
        case .object(let pairs): return "{" + pairs.map { "\($0.0) = \($0.1.shown)" }.joined(separator: "; ") + "}"
        }
    }
}

/// A strict JSON parser for one trace line (RFC 8259: no comments, no trailing commas, no leading zeros), written
/// for speed over the flat objects a trace holds: a million lines take about a second where Foundation's
/// `JSONSerialization` took ten. Nesting is limited to `maximumDepth`.
struct TraceLineParser {
    static let maximumDepth = 16

    private let bytes: UnsafeRawBufferPointer
    private var i = 0

    struct Failure: Error {}

    /// The line's object, or nil when it is not one JSON object (whatever follows it but spaces).
    static func object(_ line: UnsafeRawBufferPointer) -> [(String, TraceJSON)]? {
        var parser = TraceLineParser(bytes: line)
        guard let value = try? parser.value(depth: 0), case .object(let pairs) = value else { return nil }
        parser.skipSpace()
        return parser.i == line.count ? pairs : nil
    }

    private init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0d || bytes[i] == 0x0a { i += 1 }
    }

    private mutating func value(depth: Int) throws -> TraceJSON {
        guard depth < Self.maximumDepth else { throw Failure() }
        skipSpace()
        guard i < bytes.count else { throw Failure() }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var pairs: [(String, TraceJSON)] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(pairs) }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw Failure() }
                let key = try string()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw Failure() }
                i += 1
                pairs.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard i < bytes.count else { throw Failure() }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                guard bytes[i] == UInt8(ascii: "}") else { throw Failure() }
                i += 1
                return .object(pairs)
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [TraceJSON] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw Failure() }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                guard bytes[i] == UInt8(ascii: "]") else { throw Failure() }
                i += 1
                return .array(items)
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default:
            return try number()
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard i + count <= bytes.count else { throw Failure() }
        for k in 0..<count where bytes[i + k] != word.utf8Start[k] { throw Failure() }
        i += count
    }

    private mutating func number() throws -> TraceJSON {
        let start = i
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        let digits = i
        while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
        guard i > digits, !(bytes[digits] == 0x30 && i - digits > 1) else { throw Failure() }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fraction = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            guard i > fraction else { throw Failure() }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            let exponent = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            guard i > exponent else { throw Failure() }
        }
        let text = Substring(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        if let value = Self.exactDecimal(UnsafeRawBufferPointer(rebasing: bytes[start..<i])) { return .number(text: text, value: value) }
        guard let value = Double(text) else { throw Failure() }
        return .number(text: text, value: value)
    }

    /// Powers of ten a double holds exactly.
    private static let exactPowersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { r, _ in r * 10 } }

    /// A number written `[-]digits[.digits]` with at most 15 significant digits and 22 after the point, as the
    /// trace writer writes times and counts: its digits and the power of ten are doubles exactly, so one division
    /// rounds correctly (Clinger's fast path) and gives what `strtod` gives, without it. Nil for anything else.
    private static func exactDecimal(_ text: UnsafeRawBufferPointer) -> Double? {
        var k = 0, negative = false
        if k < text.count && text[k] == 0x2D { negative = true; k += 1 }
        var mantissa: Int64 = 0, digits = 0, fraction = 0, seenPoint = false
        while k < text.count {
            let b = text[k]
            if b == 0x2E {
                if seenPoint { return nil }
                seenPoint = true
            } else if b >= 0x30 && b <= 0x39 {
                if mantissa > 0 || b != 0x30 { digits += 1 }
                guard digits <= 15 else { return nil }
                mantissa = mantissa * 10 + Int64(b - 0x30)
                if seenPoint { fraction += 1 }
            } else {
                return nil
            }
            k += 1
        }
        guard fraction <= 22 else { return nil }
        let value = Double(mantissa) / exactPowersOfTen[fraction]
        return negative ? -value : value
    }

    private mutating func string() throws -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < bytes.count, bytes[i] != UInt8(ascii: "\"") && bytes[i] != UInt8(ascii: "\\") {
            guard bytes[i] >= 0x20 else { throw Failure() }
            i += 1
        }
        guard i < bytes.count else { throw Failure() }
        if bytes[i] == UInt8(ascii: "\"") {
            defer { i += 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        }
        var out = Array(bytes[start..<i])
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; return String(decoding: out, as: UTF8.self) }
            guard b >= 0x20 else { throw Failure() }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw Failure() }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5c)
            case UInt8(ascii: "/"): out.append(0x2f)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    // A surrogate pair; a lone surrogate becomes U+FFFD, as Foundation reads it.
                    if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        let save = i
                        i += 2
                        let low = try hex4()
                        if (0xDC00...0xDFFF).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            i = save
                            scalar = 0xFFFD
                        }
                    } else {
                        scalar = 0xFFFD
                    }
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    scalar = 0xFFFD
                }
                out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default: throw Failure()
            }
        }
        throw Failure()
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw Failure() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x41...0x46: digit = UInt32(b - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(b - 0x61 + 10)
            default: throw Failure()
            }
            value = value << 4 | digit
            i += 1
        }
        return value
    }
}
