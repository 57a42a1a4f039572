import Foundation

/// Turns `--arg` texts into format-argument values: integers, decimals, true/false, nil, ISO 8601 dates, JSON
/// arrays; anything else is a string.
enum ArgumentValues {
    static func parse(_ text: String) -> Any? {
        switch text.lowercased() {
        case "nil", "null": return nil
        case "true", "yes": return true
        case "false", "no": return false
        default: break
        }
        if let n = Int(text) { return n }
        if let d = Double(text), text.contains(".") || text.lowercased().contains("e") { return d }
        if text.hasPrefix("["), let data = text.data(using: .utf8), let array = try? JSONSerialization.jsonObject(with: data) as? [Any] {
            return array.map { item -> Any in
                if let n = item as? NSNumber, String(cString: n.objCType) != "c" { return n.stringValue.contains(".") ? n.doubleValue as Any : n.intValue as Any }
                return item
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
}
