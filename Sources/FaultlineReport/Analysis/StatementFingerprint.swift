/// A statement's SQL with what varies between runs of "the same" statement normalized: literals (numbers and
/// quoted strings) become `?` and lists of placeholders `(?, ?, …)` become `(…)`.
public enum StatementFingerprint {
    public static func of(_ sql: String) -> String { normalize(sql, quotes: ["'"]) }

    /// A predicate's canonical format with its constants (numbers, `"…"` and `'…'` strings) as `?`: fetches that
    /// differ only in their constants share it.
    public static func ofPredicate(_ predicate: String) -> String { normalize(predicate, quotes: ["'", "\""]) }

    private static func normalize(_ sql: String, quotes: Set<Unicode.Scalar>) -> String {
        var out = ""
        out.reserveCapacity(sql.utf8.count)
        var chars = Array(sql.unicodeScalars)[...]
        var previous: Unicode.Scalar = " "
        while let c = chars.first {
            if quotes.contains(c) {
                // A quoted string literal ('' escapes a quote in SQL, \" in a predicate).
                chars = chars.dropFirst()
                while let d = chars.first {
                    chars = chars.dropFirst()
                    if d == "\\" && c == "\"" { chars = chars.dropFirst(); continue }
                    if d == c { if chars.first == c { chars = chars.dropFirst() } else { break } }
                }
                out += "?"
                previous = "?"
            } else if c.properties.numericType != nil && c.isASCII && !(previous.properties.isAlphabetic || previous == "_" || previous.properties.numericType != nil) {
                // A number not part of a name (Z_4CATEGORY, t0).
                while let d = chars.first, d.isASCII, d.properties.numericType != nil || d == "." { chars = chars.dropFirst() }
                out += "?"
                previous = "?"
            } else {
                out.unicodeScalars.append(c)
                previous = c
                chars = chars.dropFirst()
            }
        }
        // (?, ?, ?) → (…)
        while let range = out.range(of: #"\(\?(, ?\?)+\)"#, options: .regularExpression) {
            out.replaceSubrange(range, with: "(…)")
        }
        return out
    }
}
