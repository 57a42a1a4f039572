import Foundation

/// The canonical format of predicates and expressions: NSPredicate's `predicateFormat` style, which parses back
/// to an equal predicate.
enum PredicateFormatter {
    static func format(_ predicate: ObjectPredicate) -> String {
        switch predicate {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .comparison(let c): return comparison(c)
        case .and(let items): return items.map { nested($0) }.joined(separator: " AND ")
        case .or(let items): return items.map { nested($0) }.joined(separator: " OR ")
        case .not(let inner): return "NOT " + nested(inner)
        }
    }

    /// Compound sub-predicates are parenthesized; comparisons and constants are not.
    private static func nested(_ predicate: ObjectPredicate) -> String {
        switch predicate {
        case .constant, .comparison: return format(predicate)
        default: return "(" + format(predicate) + ")"
        }
    }

    static func comparison(_ c: Comparison) -> String {
        var text = ""
        switch c.quantifier {
        case .direct: break
        case .any: text = "ANY "
        case .all: text = "ALL "
        case .none: text = "NONE "
        }
        text += expression(c.left) + " " + operatorText(c.op)
        if !c.options.isEmpty {
            text += "[" + (c.options.contains(.caseInsensitive) ? "c" : "") + (c.options.contains(.diacriticInsensitive) ? "d" : "")
                + (c.options.contains(.normalized) ? "n" : "") + "]"
        }
        return text + " " + expression(c.right)
    }

    static func operatorText(_ op: ComparisonOperator) -> String {
        switch op {
        case .equal: return "=="
        case .notEqual: return "!="
        case .lessThan: return "<"
        case .lessThanOrEqual: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqual: return ">="
        case .beginsWith: return "BEGINSWITH"
        case .endsWith: return "ENDSWITH"
        case .contains: return "CONTAINS"
        case .like: return "LIKE"
        case .matches: return "MATCHES"
        case .in: return "IN"
        case .between: return "BETWEEN"
        case .custom(let name): return name
        }
    }

    static func expression(_ e: ObjectExpression) -> String {
        switch e {
        case .constant(let value): return literal(value)
        case .evaluatedObject: return "SELF"
        case .keyPath(let base, let components):
            let path = components.map(keyComponent).joined(separator: ".")
            guard let base else { return path }
            return operand(base) + "." + path
        case .variable(let name): return "$" + name
        case .aggregate(let items): return "{" + items.map(expression).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate):
            return "SUBQUERY(\(expression(collection)), $\(variable), \(format(predicate)))"
        case .predicate(let predicate): return format(predicate)
        case .placeholder(let spec): return spec
        case .function(let name, let args):
            switch name {
            case "+", "-", "*", "/", "**", "&", "|":
                return "(" + args.map(expression).joined(separator: " \(name) ") + ")"
            case "UNION", "INTERSECT", "MINUS":
                return "(" + args.map(expression).joined(separator: " \(name) ") + ")"
            case "INDEX":
                let index: String
                if case .constant(.string(let word)) = args[1], ["FIRST", "LAST", "SIZE"].contains(word) { index = word } else { index = expression(args[1]) }
                return operand(args[0]) + "[" + index + "]"
            default:
                if name.hasSuffix(":") { return name + "(" + args.map(expression).joined(separator: ", ") + ")" }
                return name + "(" + args.map(expression).joined(separator: ", ") + ")"
            }
        }
    }

    /// An expression as the base of a key path or subscript.
    private static func operand(_ e: ObjectExpression) -> String {
        switch e {
        case .aggregate, .keyPath, .variable, .evaluatedObject, .subquery, .placeholder: return expression(e)
        case .function(let name, _) where !["+", "-", "*", "/", "**", "&", "|", "UNION", "INTERSECT", "MINUS"].contains(name): return expression(e)
        default: return "(" + expression(e) + ")"
        }
    }

    /// Key names that collide with reserved words are written with `#`.
    private static func keyComponent(_ name: String) -> String {
        if name.hasPrefix("@") || name == "%K" { return name }
        return PredicateParser.keywords.contains(name.uppercased()) ? "#" + name : name
    }

    static func literal(_ value: PredicateValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "YES" : "NO"
        case .integer(let n): return String(n)
        case .double(let d):
            if d.isNaN || d.isInfinite { return "CAST(\"\(d)\", \"NSNumber\")" }
            let text = String(d)
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .string(let s): return quoted(s)
        case .date(let d): return "CAST(\(String(d.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let d): return "CAST(\(quoted(d.base64EncodedString())), \"NSData\")"
        case .uuid(let u): return "CAST(\(quoted(u.uuidString)), \"NSUUID\")"
        case .objectID(let id): return "CAST(\(quoted(id.uriString)), \"NSManagedObjectID\")"
        case .array(let items): return "{" + items.map(literal).joined(separator: ", ") + "}"
        }
    }

    /// A string literal; the format's escapes are JSON's (`\"`, `\\`, `\n`, `\t`, `\r`, `\uXXXX`).
    static func quoted(_ s: String) -> String { JSONLineBuffer.quote(s) }
}
