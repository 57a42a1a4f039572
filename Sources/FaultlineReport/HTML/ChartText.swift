/// Text in the charts of the report and bench pages, fitted to the room it has: inline SVG does not wrap, and a
/// label longer than its room runs over the bars or is cut off at the picture's edge.
public enum ChartText {
    /// A generous estimate of `text`'s width in px at `size` px in the browser's sans-serif (DejaVu Sans, Liberation
    /// Sans, Helvetica, …): wide letters, capitals and digits as the widest of those fonts draw them, so that a label
    /// estimated to fit does fit.
    public static func width<S: StringProtocol>(_ text: S, size: Double) -> Double {
        text.unicodeScalars.reduce(0) { $0 + em($1) * size }
    }

    private static func em(_ c: Unicode.Scalar) -> Double {
        switch c {
        case "M", "W", "m", "w", "@", "%": return 1.0
        case "A"..."Z": return 0.78
        case "i", "j", "l", "I", ".", ",", ":", ";", "'", "|", "!": return 0.32
        case "f", "r", "t", " ", "(", ")", "-", "/": return 0.45
        case "a"..."z", "0"..."9", "#", "+", "…", "·": return 0.64
        default: return c.isASCII ? 0.64 : 1.0
        }
    }

    /// `text` as it is when it fits in `room` px at `size` px, else shortened at its end with "…" (the caller gives
    /// the whole text as the label's `<title>`). One pass that stops at the room's end: a label of any length costs
    /// only what fits.
    public static func fitted(_ text: String, room: Double, size: Double) -> String {
        let ellipsis = width("…", size: size)
        var used = 0.0, cut = text.startIndex
        for index in text.indices {
            // `used` is the width of text[..<index]; the longest such prefix that fits with "…" is the cut.
            if used + ellipsis <= room { cut = index }
            used += width(text[index...index], size: size)
            if used > room { return text[..<cut] + "…" }
        }
        return text
    }
}
