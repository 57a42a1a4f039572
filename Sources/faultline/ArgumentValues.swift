import Faultline
import Foundation

/// Turns `--arg` texts into format-argument values: integers, decimals, true/false, nil, ISO 8601 dates, JSON
/// arrays; anything else is a string. Integers are read exactly: one outside Integer 64 is an error, never rounded.
enum ArgumentValues {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func parse(_ text: String) throws -> Any? {
        switch text.lowercased() {
        case "nil", "null": return nil
        case "true", "yes": return true
        case "false", "no": return false
        default: break
        }
        if let n = Int64(text) { return n }
        if isInteger(text) { throw outOfRange(text) }
        if let d = Double(text), text.contains(".") || text.lowercased().contains("e") {
            guard d.isFinite else { throw Failure(description: "--arg '\(text)' is beyond the largest Double") }
            return d
        }
        if text.hasPrefix("["), let data = text.data(using: .utf8), let array = try? JSONSerialization.jsonObject(with: data) as? [Any] {
            return try array.map { item -> Any in
                guard let n = item as? NSNumber, !isJSONBoolean(n) else { return item }
                switch JSONInteger(n) {
                case .exact(let value): return value
                case .outOfRange(let written): throw outOfRange(written)
                case .inexact, .fraction: return n.doubleValue
                }
            }
        }
        if text.count >= 10, text.first?.isNumber == true, text.contains("-") {
            let formatter = ISO8601DateFormatter()
            for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds], [.withFullDate]] {
                formatter.formatOptions = options
                if let date = formatter.date(from: text) { return date }
            }
        }
        return text
    }

    /// An optional sign and one or more decimal digits.
    static func isInteger(_ text: String) -> Bool {
        let digits = text.utf8.first == UInt8(ascii: "-") || text.utf8.first == UInt8(ascii: "+") ? text.utf8.dropFirst() : text.utf8[...]
        return !digits.isEmpty && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    static func outOfRange(_ text: String) -> Failure {
        Failure(description: "--arg '\(text)' does not fit in Integer 64 (\(Int64.min) to \(Int64.max))")
    }
}
