import Foundation

/// A value that does not fit an attribute: names what was given and what was expected.
public struct ValueError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let problem: String
    /// An error saying `problem`.
    public init(problem: String) { self.problem = problem }
    /// The text `print` and `String(describing:)` show.
    public var description: String { problem }
}

extension ValueError {
    /// An integer outside an attribute type's range, naming the range.
    static func outOfRange(_ text: String, _ type: AttributeType) -> ValueError {
        let range = type.integerRange ?? Int64.min...Int64.max
        return ValueError(problem: "\(text) does not fit in \(type.rawValue) (\(range.lowerBound) to \(range.upperBound))")
    }
}

/// Conversions between Swift values and stored slots, by attribute type.
///
/// Stored forms: integers and booleans as INTEGER; doubles and floats as REAL; dates as REAL seconds since
/// 2001-01-01 UTC (as Core Data); decimals as TEXT in a DECIMAL column; strings and URIs as TEXT; binary, UUID
/// (16 bytes) and transformable values as BLOB.
enum ValueCoding {
    static func slot(for value: Any?, attribute: AttributeDescription) throws -> Slot {
        guard let value = unwrap(value) else { return .null }
        let type = attribute.type
        switch type {
        case .integer16, .integer32, .integer64:
            guard let n = integer(value) else { throw mismatch(value, type) }
            guard let range = type.integerRange, range.contains(n) else {
                throw ValueError.outOfRange(String(n), type)
            }
            return .integer(n)
        case .boolean:
            if let b = value as? Bool { return .integer(b ? 1 : 0) }
            if let n = integer(value), n == 0 || n == 1 { return .integer(n) }
            throw mismatch(value, type)
        case .double, .float:
            if let d = value as? Double {
                guard type == .double || !d.isFinite || abs(d) <= Double(Float.greatestFiniteMagnitude) else {
                    throw ValueError(problem: "\(d) does not fit in Float (its largest magnitude is \(Float.greatestFiniteMagnitude))")
                }
                return .real(type == .float ? Double(Float(d)) : d)
            }
            if let f = value as? Float { return .real(Double(f)) }
            if let n = integer(value) { return .real(Double(n)) }
            if let d = value as? Decimal { return .real(NSDecimalNumber(decimal: d).doubleValue) }
            throw mismatch(value, type)
        case .decimal:
            if let d = value as? Decimal { return .text(d.description) }
            if let n = integer(value) { return .text(String(n)) }
            if let d = value as? Double, d.isFinite { return .text(Decimal(d).description) }
            if let s = value as? String, let d = Decimal(string: s) { return .text(d.description) }
            throw mismatch(value, type)
        case .string:
            guard let s = value as? String else { throw mismatch(value, type) }
            return .text(s)
        case .date:
            if let d = value as? Date {
                guard Limits.dateSecondsSinceReferenceDate.contains(d.timeIntervalSinceReferenceDate) else {
                    throw ValueError(problem: "\(d.timeIntervalSinceReferenceDate) seconds since 2001 is outside the dates a Date attribute holds (years 1 to 4001)")
                }
                return .real(d.timeIntervalSinceReferenceDate)
            }
            throw mismatch(value, type)
        case .binary:
            if let d = value as? Data { return .blob(d) }
            if let bytes = value as? [UInt8] { return .blob(Data(bytes)) }
            throw mismatch(value, type)
        case .uuid:
            if let u = value as? UUID { return .blob(withUnsafeBytes(of: u.uuid) { Data($0) }) }
            if let s = value as? String, let u = UUID(uuidString: s) { return .blob(withUnsafeBytes(of: u.uuid) { Data($0) }) }
            throw mismatch(value, type)
        case .uri:
            if let u = value as? URL { return .text(u.absoluteString) }
            throw mismatch(value, type)
        case .composite:
            throw ValueError(problem: "a composite attribute's value is a dictionary of its elements' values, set through the object")
        case .transformable, .undefined, .objectID:
            if attribute.isTransient { return .blob(Data()) } // never stored; the live value is kept by the object
            do {
                return .blob(try ValueTransformerRegistry.transformer(named: attribute.valueTransformerName).encode(value))
            } catch let error as ValueError {
                throw error
            } catch {
                throw ValueError(problem: "transformer failed: \(error)")
            }
        }
    }

    static func value(of slot: Slot, type: AttributeType, transformer: String?) -> Any? {
        switch slot {
        case .null: return nil
        case .integer(let n):
            switch type {
            case .integer16: return Int16(clamping: n)
            case .integer32: return Int32(clamping: n)
            case .integer64: return n
            case .boolean: return n != 0
            case .double: return Double(n)
            case .float: return Float(n)
            case .decimal: return Decimal(n)
            case .date: return Date(timeIntervalSinceReferenceDate: Double(n))
            default: return n
            }
        case .real(let d):
            switch type {
            case .double: return d
            case .float: return Float(d)
            case .date: return Date(timeIntervalSinceReferenceDate: d)
            case .decimal: return Decimal(string: String(d)) ?? Decimal(d)
            case .integer16: return Int16(clamping: saturatingInt64(d))
            case .integer32: return Int32(clamping: saturatingInt64(d))
            case .integer64: return saturatingInt64(d)
            case .boolean: return d != 0
            default: return d
            }
        case .text(let s):
            switch type {
            case .decimal: return Decimal(string: s)
            case .uri: return URL(string: s)
            case .string, .transformable, .undefined, .objectID: return s
            default:
                // Text in a numeric or date column (written by another program): its number, else nil.
                if let n = Int64(s) { return value(of: .integer(n), type: type, transformer: transformer) }
                if let d = Double(s) { return value(of: .real(d), type: type, transformer: transformer) }
                return nil
            }
        case .blob(let data):
            switch type {
            case .integer16, .integer32, .integer64, .double, .float, .decimal, .boolean, .date, .string, .uri:
                return nil // a blob where a scalar belongs: unreadable, not a trap
            case .uuid:
                guard data.count == 16 else { return nil }
                return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            case .transformable:
                // Bytes a transformer cannot read stay readable as bytes.
                guard let value = try? ValueTransformerRegistry.transformer(named: transformer).decode(data) else { return data }
                return value is NSNull ? nil : value
            default: return data
            }
        case .object(let o): return o
        case .many(let m): return m.objects
        }
    }

    /// A REAL read from an integer column (a foreign or damaged store) becomes the nearest integer, never a trap.
    @inline(__always) static func saturatingInt64(_ d: Double) -> Int64 {
        if d.isNaN { return 0 }
        if d >= 9.2233720368547758e18 { return .max }
        if d <= -9.2233720368547758e18 { return .min }
        return Int64(d)
    }

    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if value is NSNull { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.map { unwrap($0.value) } ?? nil
        }
        return value
    }

    static func integer(_ value: Any) -> Int64? {
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt32: return Int64(v)
        case let v as UInt: return Int64(exactly: v)
        case let v as UInt64: return Int64(exactly: v)
        default: return nil
        }
    }

    static func mismatch(_ value: Any, _ type: AttributeType) -> ValueError {
        ValueError(problem: "expected a value of type \(type.rawValue), got \(Swift.type(of: value))")
    }
}
