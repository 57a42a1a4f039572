import Foundation

/// One line of Core Data's SQL debug output (`-com.apple.CoreData.SQLDebug 1…4`) as people paste it: found inside
/// an NSLog prefix (`2014-07-30 12:00:00.123 App[1234:c07] CoreData: …`), with `CoreData: ` cut or stripped, indented,
/// with CRLF endings or ANSI colour escapes, or as Faultline's own `Faultline:` lines.
struct CoreDataLogLine: Equatable {
    enum Category: String { case sql, annotation, details, debug, error, warning, info, cloudKit }

    let category: Category
    /// The text after `<category>: `, with colour escapes and the line ending removed.
    let text: String

    /// Longest line read in full; a longer one (a huge IN list) is cut to this many characters.
    static let maximumLength = 1_000_000

    /// The line's category and text, or nil when it is not a Core Data line (other output of the app).
    init?(_ raw: Substring) {
        var line = Self.withoutEscapes(raw.count > Self.maximumLength ? raw.prefix(Self.maximumLength) : raw)
        while line.last == "\r" || line.last == "\n" { line.removeLast() }
        var rest = Substring(line)
        // CloudKit mirroring's own lines (`CoreData+CloudKit: -[PFCloudKitExporter …]: …`, with or without a
        // category before them): Core Data's, read and not analysed.
        if let range = rest.range(of: "CoreData+CloudKit: ") {
            category = .cloudKit
            text = String(rest[range.upperBound...])
            return
        }
        var prefixed = false
        if let range = rest.range(of: "CoreData: ") ?? rest.range(of: "Faultline: ") {
            rest = rest[range.upperBound...]
            prefixed = true
        } else {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            // A line whose start was cut inside "CoreData: " ("ata: sql: …", "oreData: sql: …").
            if let colon = rest.firstIndex(of: ":"), rest.distance(from: rest.startIndex, to: colon) <= 8,
               "CoreData".hasSuffix(rest[..<colon]), !rest[..<colon].isEmpty,
               Self.category(of: rest[rest.index(after: colon)...].drop { $0 == " " }) != nil {
                rest = rest[rest.index(after: colon)...].drop { $0 == " " }
            }
        }
        guard let (category, text) = Self.category(of: rest) else { return nil }
        // Without the prefix only the categories that carry SQL and timings count: another program's "error: …" or
        // "warning: …" line is not Core Data's.
        guard prefixed || category == .sql || category == .annotation || category == .details else { return nil }
        self.category = category
        self.text = String(text)
    }

    init(category: Category, text: String) {
        self.category = category
        self.text = text
    }

    private static func category(of text: Substring) -> (Category, Substring)? {
        guard let colon = text.firstIndex(of: ":"), text.distance(from: text.startIndex, to: colon) <= 10,
              let category = Category(rawValue: String(text[..<colon])), category != .cloudKit else { return nil }
        var body = text[text.index(after: colon)...]
        if body.first == " " { body = body.dropFirst() }
        return (category, body)
    }

    /// The line without ANSI escape sequences (`ESC [ … letter`), which syntax-coloured logging wraps values in.
    private static func withoutEscapes(_ raw: Substring) -> String {
        guard raw.contains("\u{1B}") else { return String(raw) }
        var result = ""
        result.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            let character = raw[index]
            if character == "\u{1B}" {
                var next = raw.index(after: index)
                if next < raw.endIndex, raw[next] == "[" {
                    next = raw.index(after: next)
                    while next < raw.endIndex, !(raw[next].isLetter && raw[next].isASCII) { next = raw.index(after: next) }
                    if next < raw.endIndex { next = raw.index(after: next) }
                }
                index = next
                continue
            }
            result.append(character)
            index = raw.index(after: index)
        }
        return result
    }
}
