import Foundation

/// Where the predicate formatter writes: a string, or the trace's JSON buffer (which escapes as it goes), so that a
/// trace line gets its predicate without a string built per part.
protocol PredicateTextSink: ~Copyable {
    /// Appends constant text (string literals in the formatter come here, not through a `String`).
    mutating func emit(_ text: StaticString)
    /// Appends text.
    mutating func emit(text: String)
    /// Appends a decimal integer.
    mutating func emit(integer: Int64)
    /// Appends text known to need no escape in a string literal (see `PredicateFormatter.isPlain`).
    mutating func emit(plain text: String)
    /// Appends an object ID as a literal: `CAST("<URI>", "NSManagedObjectID")`.
    mutating func emit(objectID id: ManagedObjectID)
    /// Appends one of the predicate's constants (`ObjectExpression.constant`) as a literal.
    mutating func emit(constant value: PredicateValue)
}

extension PredicateTextSink where Self: ~Copyable {
    mutating func emit(objectID id: ManagedObjectID) {
        PredicateFormatter.objectIDLiteral(id, into: &self)
    }

    mutating func emit(constant value: PredicateValue) {
        PredicateFormatter.literal(value, into: &self)
    }
}

/// The formatter's text as a string.
struct PredicateText: PredicateTextSink {
    var text = ""
    mutating func emit(_ text: StaticString) { self.text += text.description }
    mutating func emit(text: String) { self.text += text }
    mutating func emit(integer: Int64) { text += String(integer) }
    mutating func emit(plain text: String) { self.text += text }
}

/// The canonical format of predicates and expressions: NSPredicate's `predicateFormat` style, which parses back
/// to an equal predicate.
enum PredicateFormatter {
    static func format(_ predicate: ObjectPredicate) -> String {
        var text = PredicateText()
        format(predicate, into: &text)
        return text.text
    }

    static func expression(_ e: ObjectExpression) -> String {
        var text = PredicateText()
        expression(e, into: &text)
        return text.text
    }

    static func literal(_ value: PredicateValue) -> String {
        var text = PredicateText()
        literal(value, into: &text)
        return text.text
    }

    static func format<S: PredicateTextSink & ~Copyable>(_ predicate: ObjectPredicate, into out: inout S) {
        switch predicate {
        case .constant(let value): out.emit(value ? "TRUEPREDICATE" : "FALSEPREDICATE")
        case .comparison(let c): comparison(c, into: &out)
        case .and(let items):
            for (i, item) in items.enumerated() {
                if i > 0 { out.emit(" AND ") }
                nested(item, into: &out)
            }
        case .or(let items):
            for (i, item) in items.enumerated() {
                if i > 0 { out.emit(" OR ") }
                nested(item, into: &out)
            }
        case .not(let inner):
            out.emit("NOT ")
            if case .not = inner { format(inner, into: &out) } else { nested(inner, into: &out) }
        }
    }

    /// Compound sub-predicates are parenthesized; comparisons and constants are not.
    private static func nested<S: PredicateTextSink & ~Copyable>(_ predicate: ObjectPredicate, into out: inout S) {
        switch predicate {
        case .constant, .comparison: format(predicate, into: &out)
        default:
            out.emit("(")
            format(predicate, into: &out)
            out.emit(")")
        }
    }

    private static func comparison<S: PredicateTextSink & ~Copyable>(_ c: Comparison, into out: inout S) {
        switch c.quantifier {
        case .direct: break
        case .any: out.emit("ANY ")
        case .all: out.emit("ALL ")
        case .none: out.emit("NONE ")
        }
        expression(c.left, into: &out)
        if case .custom = c.op {} else if c.options.isEmpty {
            // The usual case in one piece: ` == `.
            out.emit(spacedOperatorSymbol(c.op))
            expression(c.right, into: &out)
            return
        }
        out.emit(" ")
        out.emit(text: operatorText(c.op))
        if !c.options.isEmpty {
            out.emit("[")
            if c.options.contains(.caseInsensitive) { out.emit("c") }
            if c.options.contains(.diacriticInsensitive) { out.emit("d") }
            if c.options.contains(.normalized) { out.emit("n") }
            out.emit("]")
        }
        out.emit(" ")
        expression(c.right, into: &out)
    }

    static func operatorText(_ op: ComparisonOperator) -> String {
        if case .custom(let name) = op { return name }
        return String(spacedOperatorSymbol(op).description.dropFirst().dropLast())
    }

    /// The operator with a space on either side.
    private static func spacedOperatorSymbol(_ op: ComparisonOperator) -> StaticString {
        switch op {
        case .equal: return " == "
        case .notEqual: return " != "
        case .lessThan: return " < "
        case .lessThanOrEqual: return " <= "
        case .greaterThan: return " > "
        case .greaterThanOrEqual: return " >= "
        case .beginsWith: return " BEGINSWITH "
        case .endsWith: return " ENDSWITH "
        case .contains: return " CONTAINS "
        case .like: return " LIKE "
        case .matches: return " MATCHES "
        case .in: return " IN "
        case .between: return " BETWEEN "
        case .custom: return "  " // not used: custom operators are written by name
        }
    }

    static func expression<S: PredicateTextSink & ~Copyable>(_ e: ObjectExpression, into out: inout S) {
        switch e {
        case .constant(let value): out.emit(constant: value)
        case .evaluatedObject: out.emit("SELF")
        case .keyPath(let base, let components):
            if let base {
                operand(base, into: &out)
                out.emit(".")
            }
            for (i, component) in components.enumerated() {
                if i > 0 { out.emit(".") }
                keyComponent(component, into: &out)
            }
        case .variable(let name):
            out.emit("$")
            out.emit(text: name)
        case .aggregate(let items):
            out.emit("{")
            list(items, separator: ", ", into: &out)
            out.emit("}")
        case .subquery(let collection, let variable, let predicate):
            out.emit("SUBQUERY(")
            expression(collection, into: &out)
            out.emit(", $")
            out.emit(text: variable)
            out.emit(", ")
            format(predicate, into: &out)
            out.emit(")")
        case .predicate(let predicate): format(predicate, into: &out)
        case .placeholder(let spec): out.emit(text: spec)
        case .function(let name, let args):
            switch name {
            case "+", "-", "*", "/", "**", "&", "|", "UNION", "INTERSECT", "MINUS":
                out.emit("(")
                chain(name, args, into: &out)
                out.emit(")")
            case "INDEX":
                operand(args[0], into: &out)
                out.emit("[")
                if case .constant(.string(let word)) = args[1], ["FIRST", "LAST", "SIZE"].contains(word) {
                    out.emit(text: word)
                } else {
                    expression(args[1], into: &out)
                }
                out.emit("]")
            default:
                out.emit(text: name)
                out.emit("(")
                list(args, separator: ", ", into: &out)
                out.emit(")")
            }
        }
    }

    private static func list<S: PredicateTextSink & ~Copyable>(_ items: [ObjectExpression], separator: StaticString, into out: inout S) {
        for (i, item) in items.enumerated() {
            if i > 0 { out.emit(separator) }
            expression(item, into: &out)
        }
    }

    /// An expression as the base of a key path or subscript.
    private static func operand<S: PredicateTextSink & ~Copyable>(_ e: ObjectExpression, into out: inout S) {
        switch e {
        case .aggregate, .keyPath, .variable, .evaluatedObject, .subquery, .placeholder:
            expression(e, into: &out)
        case .function(let name, _) where !["+", "-", "*", "/", "**", "&", "|", "UNION", "INTERSECT", "MINUS"].contains(name):
            expression(e, into: &out)
        default:
            out.emit("(")
            expression(e, into: &out)
            out.emit(")")
        }
    }

    /// The operands of a binary operator. An operand that is itself an operation of the same precedence on the side
    /// the parser groups (the left, or the right for `**`) is written without parentheses, `1 + 2 + 3` rather than
    /// `((1 + 2) + 3)`, so that a long chain prints no deeper than it was written.
    private static func chain<S: PredicateTextSink & ~Copyable>(_ name: String, _ args: [ObjectExpression], into out: inout S) {
        func group(_ op: String) -> Int {
            switch op {
            case "+", "-": return 1
            case "*", "/", "&", "|": return 2
            case "**": return 3
            default: return 0
            }
        }
        for (i, arg) in args.enumerated() {
            if i > 0 {
                out.emit(" ")
                out.emit(text: name)
                out.emit(" ")
            }
            let groupedSide = name == "**" ? 1 : 0
            if args.count == 2, i == groupedSide, case .function(let inner, let innerArgs) = arg, innerArgs.count == 2,
               group(inner) != 0, group(inner) == group(name) {
                chain(inner, innerArgs, into: &out)
            } else {
                expression(arg, into: &out)
            }
        }
    }

    /// Key names that collide with reserved words are written with `#`.
    private static func keyComponent<S: PredicateTextSink & ~Copyable>(_ name: String, into out: inout S) {
        if !name.hasPrefix("@") && name != "%K" && PredicateParser.keywords.contains(name.uppercased()) { out.emit("#") }
        out.emit(text: name)
    }

    static func literal<S: PredicateTextSink & ~Copyable>(_ value: PredicateValue, into out: inout S) {
        switch value {
        case .null: out.emit("nil")
        case .bool(let b): out.emit(b ? "YES" : "NO")
        case .integer(let n): out.emit(integer: n)
        case .double(let d):
            if d.isNaN || d.isInfinite {
                out.emit("CAST(\"")
                out.emit(text: String(d))
                out.emit("\", \"NSNumber\")")
                return
            }
            let text = String(d)
            out.emit(text: text)
            if !text.contains(".") && !text.contains("e") { out.emit(".0") }
        case .string(let s): quoted(s, into: &out)
        case .date(let d):
            out.emit("CAST(")
            out.emit(text: String(d.timeIntervalSinceReferenceDate))
            out.emit(", \"NSDate\")")
        case .data(let d):
            out.emit("CAST(")
            quoted(d.base64EncodedString(), into: &out)
            out.emit(", \"NSData\")")
        case .uuid(let u):
            out.emit("CAST(")
            quoted(u.uuidString, into: &out)
            out.emit(", \"NSUUID\")")
        case .objectID(let id):
            out.emit(objectID: id)
        case .array(let items):
            out.emit("{")
            for (i, item) in items.enumerated() {
                if i > 0 { out.emit(", ") }
                literal(item, into: &out)
            }
            out.emit("}")
        }
    }

    /// `CAST("<URI>", "NSManagedObjectID")`.
    static func objectIDLiteral<S: PredicateTextSink & ~Copyable>(_ id: ManagedObjectID, into out: inout S) {
        out.emit("CAST(")
        uri(of: id, into: &out)
        out.emit(", \"NSManagedObjectID\")")
    }

    /// An object ID's URI as a string literal; in the common case, its prefix and key written as they are.
    static func uri<S: PredicateTextSink & ~Copyable>(of id: ManagedObjectID, into out: inout S) {
        if let store = id.storeIdentifier, id.key > 0, hasPlainURIParts(store: store, entity: id.entity.name) {
            out.emit("\"")
            out.emit(plain: ManagedObjectID.permanentURIPrefix(store: store, entity: id.entity.name))
            out.emit(integer: id.key)
            out.emit("\"")
        } else {
            quoted(id.uriString, into: &out)
        }
    }

    /// True when a permanent ID's URI is its parts as they are (no escape in a literal, no percent-encoding).
    static func hasPlainURIParts(store: String, entity: String) -> Bool {
        isPlain(store) && entity.utf8.allSatisfy { $0 < 0x80 } && isPlain(entity)
    }

    /// A string literal; the format's escapes are JSON's (`\"`, `\\`, `\n`, `\t`, `\r`, `\uXXXX`).
    private static func quoted<S: PredicateTextSink & ~Copyable>(_ s: String, into out: inout S) {
        if isPlain(s) {
            out.emit("\"")
            out.emit(plain: s)
            out.emit("\"")
        } else {
            out.emit(text: JSONLineBuffer.quote(s))
        }
    }

    /// True when `s` needs no escape in a string literal (no control character, quote or backslash), nor in JSON.
    static func isPlain(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            return true
        }
    }
}
