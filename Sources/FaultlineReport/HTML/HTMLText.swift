/// Text for HTML pages and diagrams.
public enum HTMLText {
    /// `text` made safe for HTML content and attribute values: everything that comes from a trace, a model or a
    /// results file (SQL, values, names, paths) goes through here. Bidirectional embedding, override and isolate
    /// controls are shown as `[U+202E]`, so that text cannot be made to read other than it is.
    public static func escape(_ text: String) -> String {
        // The runs between the bytes that may need a change are copied whole. The controls are E2 80 AA–AE and
        // E2 81 A6–A9 in UTF-8; a run stops at each E2 to look.
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + text.utf8.count / 8)
        var pending: [UInt8] = []
        var changed = false
        ByteRuns.forEach(in: text, stoppingAt: Self.special) { run, stop in
            if !pending.isEmpty, let first = run.first, let second = run.dropFirst().first, pending == [0xE2],
               (first == 0x80 && (0xAA...0xAE).contains(second)) || (first == 0x81 && (0xA6...0xA9).contains(second)) {
                let value = 0x2000 | (UInt32(first & 0x3F) << 6) | UInt32(second & 0x3F)
                out.append(contentsOf: visible(Unicode.Scalar(value)!).utf8)
                out.append(contentsOf: run.dropFirst(2))
                changed = true
            } else {
                out.append(contentsOf: pending)
                out.append(contentsOf: run)
            }
            pending = []
            switch stop {
            case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8); changed = true
            case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8); changed = true
            case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8); changed = true
            case UInt8(ascii: "\""): out.append(contentsOf: "&quot;".utf8); changed = true
            case UInt8(ascii: "'"): out.append(contentsOf: "&#39;".utf8); changed = true
            case 0xE2: pending = [0xE2]
            case let byte?: out.append(byte) // NUL
            case nil: break
            }
        }
        return changed ? String(decoding: out, as: UTF8.self) : text
    }

    private static let special: [UInt8] = Array("&<>\"'".utf8) + [0xE2]

    /// `text` for Graphviz to draw: bidirectional controls, other control characters (but newline and tab) and NUL
    /// shown as `[U+202E]`, since Graphviz copies them into SVG, where they are not allowed or disguise the text.
    public static func showingControls(_ text: String) -> String {
        func hidden(_ c: Unicode.Scalar) -> Bool { isBidiControl(c) || (c.value < 0x20 && c != "\n" && c != "\t") || c.value == 0x7F }
        guard text.unicodeScalars.contains(where: hidden) else { return text }
        var out = ""
        for c in text.unicodeScalars {
            if hidden(c) { out += visible(c) } else { out.unicodeScalars.append(c) }
        }
        return out
    }

    /// U+202A–U+202E (embeddings and overrides) and U+2066–U+2069 (isolates).
    static func isBidiControl(_ c: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(c.value) || (0x2066...0x2069).contains(c.value)
    }

    private static func visible(_ c: Unicode.Scalar) -> String { "[U+\(String(c.value, radix: 16, uppercase: true))]" }
}
