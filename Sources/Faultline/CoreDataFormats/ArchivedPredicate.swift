import Foundation

/// An archived `NSPredicate` (a compiled model's fetched property) printed in Core Data's predicate format, for
/// Faultline's predicate parser to read. Anything this cannot print exactly is an error, never a guess.
struct ArchivedPredicate {
    let archive: KeyedArchive
    /// Prints the operands; its visit budget bounds the whole predicate's.
    private let expressions: ExpressionFormat

    init(archive: KeyedArchive) {
        self.archive = archive
        expressions = ExpressionFormat(archive: archive)
    }

    /// `NSComparisonPredicate`'s `NSPredicateOperatorType`, as the format writes each.
    private static let operators: [Int64: String] = [
        0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!=", 6: "MATCHES", 7: "LIKE", 8: "BEGINSWITH", 9: "ENDSWITH",
        10: "IN", 99: "CONTAINS", 100: "BETWEEN",
    ]

    func format(_ object: PropertyListValue, depth: Int = 0) throws -> String {
        guard depth < ExpressionFormat.depth else { throw CoreDataFormatError("an archived predicate nests more than \(ExpressionFormat.depth) deep") }
        try expressions.visits.visit()
        switch try archive.className(of: object) {
        case "NSTruePredicate": return "TRUEPREDICATE"
        case "NSFalsePredicate": return "FALSEPREDICATE"
        case "NSCompoundPredicate":
            let parts = try archive.field("NSSubpredicates", of: object).map { try archive.elements(of: $0) } ?? []
            let texts = try parts.map { "(" + (try format($0, depth: depth + 1)) + ")" }
            switch object["NSCompoundPredicateType"]?.integer {
            case 0?:
                guard texts.count == 1 else { throw CoreDataFormatError("an archived NOT predicate has \(texts.count) subpredicates") }
                return "NOT " + texts[0]
            case 1?: return texts.isEmpty ? "TRUEPREDICATE" : texts.joined(separator: " AND ")
            case 2?: return texts.isEmpty ? "FALSEPREDICATE" : texts.joined(separator: " OR ")
            default: throw CoreDataFormatError("an archived compound predicate of an unknown type")
            }
        case "NSComparisonPredicate":
            guard let left = try archive.field("NSLeftExpression", of: object), let right = try archive.field("NSRightExpression", of: object),
                  let op = try archive.field("NSPredicateOperator", of: object) else {
                throw CoreDataFormatError("an archived comparison has no operator or operands")
            }
            guard let code = op["NSOperatorType"]?.integer, let name = Self.operators[code] else {
                throw CoreDataFormatError("an archived comparison's operator \(try archive.className(of: op) ?? "?") Faultline cannot print")
            }
            // Case and diacritic insensitivity: NSOptions on most operators, NSFlags on some (the IN/CONTAINS one).
            let options = (op["NSOptions"]?.integer ?? 0) | (op["NSFlags"]?.integer ?? 0)
            guard options & ~7 == 0 else { throw CoreDataFormatError("an archived comparison has options \(options) Faultline cannot print") }
            var flags = ""
            if options & 1 != 0 { flags += "c" }
            if options & 2 != 0 { flags += "d" }
            if options & 4 != 0 { flags += "n" }
            let modifier: String
            switch op["NSModifier"]?.integer ?? 0 {
            case 0: modifier = ""
            case 1: modifier = "ALL "
            case 2: modifier = "ANY "
            default: throw CoreDataFormatError("an archived comparison has a modifier Faultline cannot print")
            }
            return modifier + (try expressions.predicateOperand(left, depth: depth + 1)) + " " + name + (flags.isEmpty ? "" : "[\(flags)]")
                + " " + (try expressions.predicateOperand(right, depth: depth + 1))
        default:
            throw CoreDataFormatError("an archived \(try archive.className(of: object) ?? "predicate") Faultline cannot print")
        }
    }

    /// An archived `NSSortDescriptor` as a sort; an error for a comparison selector Faultline does not have.
    func sortDescriptor(_ object: PropertyListValue) throws -> FetchSortDescriptor {
        guard let key = try archive.string(object["NSKey"]), !key.isEmpty else { throw CoreDataFormatError("an archived sort descriptor names no key") }
        let comparison: FetchSortDescriptor.Comparison
        switch try archive.string(object["NSSelector"]) ?? "compare:" {
        case "compare:": comparison = .binary
        case "caseInsensitiveCompare:": comparison = .caseInsensitive
        case "localizedStandardCompare:", "localizedCompare:", "localizedCaseInsensitiveCompare:": comparison = .localized
        case let other: throw CoreDataFormatError("a sort on \(key) by \(other), which Faultline does not have")
        }
        return FetchSortDescriptor(keyPath: key, ascending: object["NSAscending"]?.boolean ?? true, comparison: comparison)
    }
}

extension ExpressionFormat {
    /// An expression as a predicate's operand: strings escaped for the parser, `$VARIABLE.key.path` for a key path
    /// from a variable, `{a, b}` for an aggregate, `CAST(seconds, "NSDate")` for a date.
    func predicateOperand(_ object: PropertyListValue, depth: Int) throws -> String {
        guard depth < Self.depth else { throw CoreDataFormatError("an archived expression nests more than \(Self.depth) deep") }
        try visits.visit()
        switch object["NSExpressionType"]?.integer ?? -1 {
        case 0:
            guard let value = try archive.field("NSConstantValue", of: object) else { return "nil" }
            if let text = try archive.string(value) {
                return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
            }
            switch value {
            case .integer(let n): return String(n)
            case .real(let d) where d.isFinite: return String(d)
            case .boolean(let b): return b ? "YES" : "NO"
            case .date(let seconds): return "CAST(\(seconds), \"NSDate\")"
            default:
                if case .real(let seconds)? = value["NS.time"] { return "CAST(\(seconds), \"NSDate\")" }
                throw CoreDataFormatError("an archived predicate holds a constant Faultline cannot print")
            }
        case 4 where object["NSOperand"] != nil:
            // `$FETCH_SOURCE.alias` is archived as valueForKeyPath: sent to the variable.
            let selector = try archive.string(object["NSSelectorName"])
            guard selector == "valueForKeyPath:" || selector == "valueForKey:" else { break }
            let arguments = try archive.field("NSArguments", of: object).map { try archive.elements(of: $0) } ?? []
            guard arguments.count == 1, let key = try archive.string(arguments[0]["NSKeyPath"]), let operand = try archive.field("NSOperand", of: object) else {
                throw CoreDataFormatError("an archived key-path function names no key path")
            }
            if operand["NSExpressionType"]?.integer == 1 { return key }
            return try predicateOperand(operand, depth: depth + 1) + "." + key
        case 14:
            let members = try archive.field("NSCollection", of: object).map { try archive.elements(of: $0) } ?? []
            return "{" + (try members.map { try predicateOperand($0, depth: depth + 1) }).joined(separator: ", ") + "}"
        default:
            break
        }
        return try format(object, depth: depth)
    }
}
