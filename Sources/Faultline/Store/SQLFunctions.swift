import CSQLite
import Foundation

/// SQL functions the predicate compiler uses, registered on every connection:
/// - `FL_FOLD(text, flags)`: Unicode case (flags & 1) and diacritic (flags & 2) folding, for `[c]`, `[d]`, `[cd]`.
/// - `FL_MATCHES(text, pattern, flags)`: whole-string regular-expression match (ICU syntax), for `MATCHES`.
enum SQLFunctions {
    static func register(on connection: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(connection, "FL_FOLD", 2, flags, nil, { context, _, arguments in
            guard let arguments, let text = SQLFunctions.text(arguments[0]) else { sqlite3_result_null(context); return }
            let folded = SQLFunctions.fold(text, flags: Int(sqlite3_value_int(arguments[1])))
            SQLFunctions.result(context, folded)
        }, nil, nil, nil)
        sqlite3_create_function_v2(connection, "FL_MATCHES", 3, flags, nil, { context, _, arguments in
            guard let arguments, let text = SQLFunctions.text(arguments[0]), let pattern = SQLFunctions.text(arguments[1]) else {
                sqlite3_result_null(context)
                return
            }
            let flags = Int(sqlite3_value_int(arguments[2]))
            sqlite3_result_int(context, SQLFunctions.matches(text, pattern: pattern, flags: flags) ? 1 : 0)
        }, nil, nil, nil)
    }

    /// Case and diacritic folding as `[c]`/`[d]` mean it (the same function the in-memory evaluator uses).
    static func fold(_ text: String, flags: Int) -> String {
        var options: String.CompareOptions = []
        if flags & 1 != 0 { options.insert(.caseInsensitive) }
        if flags & 2 != 0 { options.insert(.diacriticInsensitive) }
        return text.folding(options: options, locale: nil)
    }

    private static let regexCache = LockedDictionary<String, NSRegularExpression>()

    /// Whole-string regular-expression match; an invalid pattern matches nothing.
    static func matches(_ text: String, pattern: String, flags: Int) -> Bool {
        let subject = flags & 2 != 0 ? fold(text, flags: 2) : text
        let key = "\(flags)\u{0}\(pattern)"
        let regex: NSRegularExpression
        if let cached = regexCache.get(key) {
            regex = cached
        } else {
            let source = flags & 2 != 0 ? fold(pattern, flags: 2) : pattern
            guard let compiled = try? NSRegularExpression(pattern: "^(?:" + source + ")$", options: flags & 1 != 0 ? [.caseInsensitive] : []) else { return false }
            regexCache.set(compiled, for: key)
            regex = compiled
        }
        return regex.firstMatch(in: subject, range: NSRange(subject.startIndex..., in: subject)) != nil
    }

    static func text(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL, let pointer = sqlite3_value_text(value) else { return nil }
        return String(cString: pointer)
    }

    static func result(_ context: OpaquePointer?, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                sqlite3_result_text(context, chars.baseAddress, Int32(chars.count), SQLITE_TRANSIENT_DESTRUCTOR)
            }
        }
    }
}
