import Foundation

/// Checks an Xcode model's bytes before Foundation's XMLParser reads them. Besides bytes that are not UTF-8, the
/// parser crashes on a processing instruction without data (`<?x?>`: it takes the length of a null string), and a
/// document type declaration can define entities that expand to such markup or to gigabytes. Xcode writes neither,
/// so both are refused, with their line.
enum XcodeModelPreflight {
    /// `allowingExternalDoctype`: a `<!DOCTYPE … SYSTEM "…">` naming an external DTD only (no internal subset that
    /// could define entities), as Xcode's mapping models carry; XMLParser does not fetch it.
    static func check(_ data: Data, allowingExternalDoctype: Bool = false) throws(ModelPreflightError) {
        if let offset = UTF8Validation.firstInvalidByte(in: data) {
            throw ModelPreflightError(problem: UTF8Validation.describe(data, invalidAt: offset))
        }
        let bytes = [UInt8](data)
        func starts(_ text: String, at i: Int) -> Bool {
            let pattern = Array(text.utf8)
            return i + pattern.count <= bytes.count && Array(bytes[i..<(i + pattern.count)]) == pattern
        }
        func skip(to end: String, from i: Int) -> Int {
            var j = i
            while j < bytes.count && !starts(end, at: j) { j += 1 }
            return j + end.utf8.count
        }
        func line(_ offset: Int) -> Int { bytes[..<min(offset, bytes.count)].reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } }
        var i = 0
        var seenMarkup = false
        var seenMarkupBesidesDeclaration = false
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<") else { i += 1; continue }
            if starts("<!--", at: i) {
                i = skip(to: "-->", from: i + 4)
            } else if starts("<![CDATA[", at: i) {
                i = skip(to: "]]>", from: i + 9)
            } else if starts("<!DOCTYPE", at: i) {
                let end = bytes[i...].firstIndex(of: UInt8(ascii: ">")) ?? bytes.count
                if allowingExternalDoctype && !seenMarkupBesidesDeclaration && !bytes[i..<end].contains(UInt8(ascii: "[")) {
                    i = end
                    seenMarkup = true
                    continue
                }
                throw ModelPreflightError(problem: "a document type declaration (<!DOCTYPE) at line \(line(i)): an Xcode model has none")
            } else if starts("<?", at: i) {
                let isDeclaration = !seenMarkup && starts("<?xml", at: i) && i + 5 < bytes.count
                    && [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[i + 5])
                guard isDeclaration else {
                    throw ModelPreflightError(problem: "a processing instruction (<?…?>) at line \(line(i)): an Xcode model has none")
                }
                let end = skip(to: "?>", from: i + 2)
                guard end <= bytes.count, isWellFormedDeclaration(bytes[i..<end]) else {
                    throw ModelPreflightError(problem: "a malformed XML declaration (<?xml …?>) at line \(line(i))")
                }
                i = end
            } else {
                seenMarkupBesidesDeclaration = true
                i += 1
            }
            seenMarkup = true
        }
    }
}

extension XcodeModelPreflight {
    /// `<?xml` then only `name="value"` pairs (no markup inside the values) up to `?>`: libxml2 reads anything else
    /// as a processing instruction, which is what crashes the parser.
    static func isWellFormedDeclaration(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let text = String(bytes: bytes, encoding: .utf8) else { return false }
        return text.range(of: #"^<\?xml(\s+[A-Za-z_:][A-Za-z0-9_:.-]*\s*=\s*("[^"<&]*"|'[^'<&]*'))*\s*\?>$"#, options: .regularExpression) != nil
    }
}

/// Why an Xcode model's bytes were refused before parsing.
struct ModelPreflightError: Error {
    let problem: String
}
