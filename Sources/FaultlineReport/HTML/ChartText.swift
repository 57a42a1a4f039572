/// Text in the charts of the report and bench pages, fitted to the room it has: inline SVG does not wrap, and a
/// label longer than its room runs over the bars or is cut off at the picture's edge.
public enum ChartText {
    /// A generous estimate of `text`'s width in px at `size` px in the browser's sans-serif (DejaVu Sans, Liberation
    /// Sans, Helvetica, …): wide letters, capitals and digits as the widest of those fonts draw them, so that a label
    /// estimated to fit does fit.
    public static func width(_ text: String, size: Double) -> Double {
        text.unicodeScalars.reduce(0) { sum, c in
            let em: Double
            switch c {
            case "M", "W", "m", "w", "@", "%": em = 1.0
            case "A"..."Z": em = 0.78
            case "i", "j", "l", "I", ".", ",", ":", ";", "'", "|", "!": em = 0.32
            case "f", "r", "t", " ", "(", ")", "-", "/": em = 0.45
            case "a"..."z", "0"..."9", "#", "+", "…", "·": em = 0.64
            default: em = c.isASCII ? 0.64 : 1.0
            }
            return sum + em * size
        }
    }

    /// `text` as it is when it fits in `room` px at `size` px, else shortened at its end with "…" (the caller gives
    /// the whole text as the label's `<title>`).
    public static func fitted(_ text: String, room: Double, size: Double) -> String {
        guard width(text, size: size) > room else { return text }
        var short = Substring(text)
        while !short.isEmpty && width(short + "…", size: size) > room { short = short.dropLast() }
        return short + "…"
    }
}
