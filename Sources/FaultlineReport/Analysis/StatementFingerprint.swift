import Foundation

/// A statement's SQL with what varies between runs of "the same" statement normalized: literals (numbers and
/// quoted strings) become `?` and lists of placeholders `(?, ?, …)` become `(…)`.
public enum StatementFingerprint {
    public static func of(_ sql: String) -> String { normalize(sql, quotes: [UInt8(ascii: "'")]) }

    /// A predicate's canonical format with its constants (numbers, `"…"` and `'…'` strings) as `?`: fetches that
    /// differ only in their constants share it.
    public static func ofPredicate(_ predicate: String) -> String { normalize(predicate, quotes: [UInt8(ascii: "'"), UInt8(ascii: "\"")]) }

    /// One pass over the UTF-8 bytes (every character that matters here is ASCII), then one over the result for the
    /// lists: a statement of any length costs its length.
    private static func normalize(_ sql: String, quotes: [UInt8]) -> String {
        var sql = sql
        let bytes = sql.withUTF8 { b -> [UInt8] in
            var out: [UInt8] = []
            out.reserveCapacity(b.count)
            var i = 0, run = 0
            // Whether the last character was a letter, a digit or `_`: a number right after one is part of a name
            // (Z_4CATEGORY, t0).
            var previousIsName = false
            // The text since `run` is copied whole when a literal starts (or at the end).
            func literal(from start: Int) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: b[run..<start]))
                out.append(UInt8(ascii: "?"))
                previousIsName = false
                run = i
            }
            while i < b.count {
                let c = b[i]
                if quotes.contains(c) {
                    // A quoted string literal ('' escapes a quote in SQL, \" in a predicate).
                    let start = i
                    i += 1
                    while i < b.count {
                        let d = b[i]
                        i += 1
                        if d == UInt8(ascii: "\\") && c == UInt8(ascii: "\"") { i += 1; continue }
                        if d == c { if i < b.count && b[i] == c { i += 1 } else { break } }
                    }
                    i = min(i, b.count)
                    literal(from: start)
                } else if isDigit(c) && !previousIsName {
                    let start = i
                    while i < b.count, isDigit(b[i]) || b[i] == UInt8(ascii: ".") { i += 1 }
                    literal(from: start)
                } else if c < 0x80 {
                    previousIsName = isDigit(c) || c == UInt8(ascii: "_") || (c | 0x20 >= UInt8(ascii: "a") && c | 0x20 <= UInt8(ascii: "z"))
                    i += 1
                } else {
                    let end = min(i + scalarLength(c), b.count)
                    if end < b.count, isDigit(b[end]) {
                        // Only a digit next asks what this character is.
                        let scalar = String(decoding: UnsafeBufferPointer(rebasing: b[i..<end]), as: UTF8.self).unicodeScalars.first
                        previousIsName = scalar.map { $0.properties.isAlphabetic || $0.properties.numericType != nil } ?? false
                    } else {
                        previousIsName = false
                    }
                    i = end
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[run..<b.count]))
            return out
        }
        return String(decoding: collapsingLists(bytes), as: UTF8.self)
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// The length of the UTF-8 sequence `lead` starts (1 for a stray continuation byte).
    private static func scalarLength(_ lead: UInt8) -> Int {
        lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
    }

    /// `(?, ?, ?)` → `(…)` (two or more placeholders, `,` with or without one space), in one pass: a statement with
    /// a million such lists costs a million steps, not a million searches from its start.
    static func collapsingLists(_ bytes: [UInt8]) -> [UInt8] {
        let mark = UInt8(ascii: "?"), comma = UInt8(ascii: ","), space = UInt8(ascii: " ")
        return bytes.withUnsafeBufferPointer { b -> [UInt8] in
            var out: [UInt8] = []
            out.reserveCapacity(b.count)
            var run = 0, i = 0
            // From one `(` to the next (memchr), the text between copied whole.
            while i < b.count, let found = memchr(b.baseAddress! + i, Int32(UInt8(ascii: "(")), b.count - i) {
                i = b.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var j = i + 1, placeholders = 0
                if j < b.count, b[j] == mark {
                    placeholders = 1
                    j += 1
                    while j < b.count, b[j] == comma {
                        var k = j + 1
                        if k < b.count, b[k] == space { k += 1 }
                        guard k < b.count, b[k] == mark else { break }
                        placeholders += 1
                        j = k + 1
                    }
                }
                if placeholders >= 2, j < b.count, b[j] == UInt8(ascii: ")") {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: b[run..<i]))
                    out.append(contentsOf: "(…)".utf8)
                    i = j + 1
                    run = i
                } else {
                    i += 1
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[run..<b.count]))
            return out
        }
    }
}
