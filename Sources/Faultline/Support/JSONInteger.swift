import Foundation

/// A JSON number read as an integer without passing through Double: JSONSerialization keeps integers that fit in
/// Int64 or UInt64 as such and larger ones as NSDecimalNumber, so every integer it read is known exactly.
public enum JSONInteger: Equatable, Sendable {
    /// An integer that fits in Int64.
    case exact(Int64)
    /// An integer outside Int64, as written.
    case outOfRange(String)
    /// A number written with a fraction or exponent whose value is integral but at or above 2^53, where a Double no
    /// longer tells which integer was meant.
    case inexact(String)
    /// Not an integer.
    case fraction

    /// How `number`, from JSONSerialization, reads as an integer.
    public init(_ number: NSNumber) {
        let text = number.stringValue
        if number is NSDecimalNumber {
            if let n = Int64(text) { self = .exact(n); return }
            var value = number.decimalValue, rounded = Decimal()
            NSDecimalRound(&rounded, &value, 0, .plain)
            self = rounded == value ? .outOfRange(text) : .fraction
            return
        }
        switch String(cString: number.objCType) {
        case "q", "l", "i", "s", "c": self = .exact(number.int64Value)
        case "Q", "L", "I", "S", "C": self = Int64(exactly: number.uint64Value).map(JSONInteger.exact) ?? .outOfRange(text)
        default:
            let d = number.doubleValue
            guard d.isFinite, d.rounded(.towardZero) == d else { self = .fraction; return }
            if abs(d) < 9_007_199_254_740_992 { self = .exact(Int64(d)) }
            else if abs(d) < 9.2233720368547758e18 { self = .inexact(text) }
            else { self = .outOfRange(text) }
        }
    }
}

/// True when an NSNumber came from a JSON `true`/`false` (JSONSerialization gives booleans the `c` type).
public func isJSONBoolean(_ number: NSNumber) -> Bool {
    String(cString: number.objCType) == "c"
}
