/// Text for HTML pages.
public enum HTMLText {
    /// `text` made safe for HTML content and attribute values: everything that comes from a trace, a model or a
    /// results file (SQL, values, names, paths) goes through here.
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
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
