/// Text for HTML pages and diagrams.
public enum HTMLText {
    /// `text` made safe for HTML content and attribute values: everything that comes from a trace, a model or a
    /// results file (SQL, values, names, paths) goes through here. Bidirectional embedding, override and isolate
    /// controls are shown as `[U+202E]`, so that text cannot be made to read other than it is.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                if isBidiControl(c) { out += visible(c) } else { out.unicodeScalars.append(c) }
            }
        }
        return out
    }

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
