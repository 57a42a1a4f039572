/// An expression in a predicate: a constant, a key path, a variable, an aggregate, a subquery, a function.
public indirect enum ObjectExpression: Hashable, Sendable, CustomStringConvertible {
    /// A constant.
    case constant(PredicateValue)
    /// The evaluated object (`SELF`).
    case evaluatedObject
    /// A key path, from the evaluated object (base nil) or from another expression (`$x.age`,
    /// `SUBQUERY(…).@count`). Components may be collection operators (`@count`, `@sum`, …).
    case keyPath(base: ObjectExpression?, components: [String])
    /// A variable: `$x` in a subquery, or a template's `$NAME`.
    case variable(String)
    /// `{a, b, c}`.
    case aggregate([ObjectExpression])
    /// `SUBQUERY(collection, $variable, predicate)`.
    case subquery(collection: ObjectExpression, variable: String, predicate: ObjectPredicate)
    /// A function: arithmetic (`+ - * / **`), `FUNCTION`, `CAST`, `TERNARY`, set operations, subscripts and
    /// selector calls, by name, with arguments.
    case function(String, [ObjectExpression])
    /// A predicate used as a value: TERNARY's condition.
    case predicate(ObjectPredicate)
    /// An unbound format specifier (`%@`, `%K`, …), kept when a format is parsed without arguments.
    case placeholder(String)

    /// A key path from the evaluated object, split at dots.
    public static func key(_ path: String) -> ObjectExpression {
        .keyPath(base: nil, components: path.split(separator: ".").map(String.init))
    }

    /// A constant from a Swift value (nil when it has no predicate form).
    public static func value(_ value: Any?) -> ObjectExpression {
        .constant(PredicateValue(value) ?? .null)
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String { PredicateFormatter.expression(self) }

    // MARK: Building predicates in code

    /// `lhs == rhs`: the comparison predicate (equal to).
    public static func == (lhs: ObjectExpression, rhs: ObjectExpression) -> ObjectPredicate { .comparison(Comparison(lhs, .equal, rhs)) }
    /// `lhs != rhs`: the comparison predicate (not equal to).
    public static func != (lhs: ObjectExpression, rhs: ObjectExpression) -> ObjectPredicate { .comparison(Comparison(lhs, .notEqual, rhs)) }
    /// `lhs < rhs`: the comparison predicate (less than).
    public static func < (lhs: ObjectExpression, rhs: ObjectExpression) -> ObjectPredicate { .comparison(Comparison(lhs, .lessThan, rhs)) }
    /// `lhs <= rhs`: the comparison predicate (at most).
    public static func <= (lhs: ObjectExpression, rhs: ObjectExpression) -> ObjectPredicate { .comparison(Comparison(lhs, .lessThanOrEqual, rhs)) }
    /// `lhs > rhs`: the comparison predicate (greater than).
    public static func > (lhs: ObjectExpression, rhs: ObjectExpression) -> ObjectPredicate { .comparison(Comparison(lhs, .greaterThan, rhs)) }
    /// `lhs >= rhs`: the comparison predicate (at least).
    public static func >= (lhs: ObjectExpression, rhs: ObjectExpression) -> ObjectPredicate { .comparison(Comparison(lhs, .greaterThanOrEqual, rhs)) }

    /// `self BEGINSWITH[options] prefix`.
    public func beginsWith(_ other: ObjectExpression, _ options: StringOptions = []) -> ObjectPredicate {
        .comparison(Comparison(self, .beginsWith, other, options: options))
    }

    /// `self CONTAINS[options] other`.
    public func contains(_ other: ObjectExpression, _ options: StringOptions = []) -> ObjectPredicate {
        .comparison(Comparison(self, .contains, other, options: options))
    }

    /// `self IN collection`.
    public func isIn(_ collection: ObjectExpression) -> ObjectPredicate {
        .comparison(Comparison(self, .in, collection))
    }

    /// `self BETWEEN {low, high}` (inclusive).
    public func isBetween(_ low: ObjectExpression, _ high: ObjectExpression) -> ObjectPredicate {
        .comparison(Comparison(self, .between, .aggregate([low, high])))
    }
}

extension ObjectExpression: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    /// A string literal is a constant string; use `.key("name")` for key paths.
    public init(stringLiteral value: String) { self = .constant(.string(value)) }
    /// An integer literal is a constant integer.
    public init(integerLiteral value: Int64) { self = .constant(.integer(value)) }
    /// A floating-point literal is a constant double.
    public init(floatLiteral value: Double) { self = .constant(.double(value)) }
    /// A Boolean literal is a constant Boolean.
    public init(booleanLiteral value: Bool) { self = .constant(.bool(value)) }
    /// `nil` is the constant NULL.
    public init(nilLiteral: ()) { self = .constant(.null) }
}
