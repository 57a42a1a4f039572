/// A predicate over managed objects, as NSPredicate's format language describes them: compound predicates of
/// comparisons between expressions. Parse one with `ObjectPredicate(format:_:)`, build one in code with the
/// operators on `ObjectExpression`, print one with `predicateFormat`.
public indirect enum ObjectPredicate: Hashable, Sendable, CustomStringConvertible {
    /// TRUEPREDICATE / FALSEPREDICATE.
    case constant(Bool)
    /// A comparison.
    case comparison(Comparison)
    /// All of the sub-predicates, in order (SQL keeps the order: put cheap clauses first).
    case and([ObjectPredicate])
    /// Any of the sub-predicates.
    case or([ObjectPredicate])
    /// The negation.
    case not(ObjectPredicate)

    /// The canonical format string; parsing it gives back an equal predicate.
    public var predicateFormat: String { PredicateFormatter.format(self) }

    /// The text `print` and `String(describing:)` show.
    public var description: String { predicateFormat }

    /// `self AND other`.
    public static func && (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        if case .and(let items) = lhs { return .and(items + [rhs]) }
        return .and([lhs, rhs])
    }

    /// `self OR other`.
    public static func || (lhs: ObjectPredicate, rhs: ObjectPredicate) -> ObjectPredicate {
        if case .or(let items) = lhs { return .or(items + [rhs]) }
        return .or([lhs, rhs])
    }

    /// `NOT self`.
    public static prefix func ! (predicate: ObjectPredicate) -> ObjectPredicate { .not(predicate) }
}

/// One comparison: `left operator[options] right`, optionally quantified over a to-many left side.
public struct Comparison: Hashable, Sendable {
    /// The left side (usually a key path).
    public var left: ObjectExpression
    /// The operator.
    public var op: ComparisonOperator
    /// The right side (usually a constant).
    public var right: ObjectExpression
    /// `ANY`, `ALL`, `NONE` over a to-many left side, or none.
    public var quantifier: Quantifier
    /// `[c]`, `[d]`, `[n]`.
    public var options: StringOptions

    /// `left op[options] right`, quantified by `quantifier`.
    public init(_ left: ObjectExpression, _ op: ComparisonOperator, _ right: ObjectExpression,
                quantifier: Quantifier = .direct, options: StringOptions = []) {
        self.left = left
        self.op = op
        self.right = right
        self.quantifier = quantifier
        self.options = options
    }
}

/// Comparison operators.
public enum ComparisonOperator: Hashable, Sendable {
    /// `==`.
    case equal
    /// `!=`.
    case notEqual
    /// `<`.
    case lessThan
    /// `<=`.
    case lessThanOrEqual
    /// `>`.
    case greaterThan
    /// `>=`.
    case greaterThanOrEqual
    /// `BEGINSWITH`.
    case beginsWith
    /// `ENDSWITH`.
    case endsWith
    /// `CONTAINS`: a substring, or a member of a collection.
    case contains
    /// `LIKE`: `*` and `?` wildcards.
    case like
    /// `MATCHES`: an ICU regular expression matching the whole string.
    case matches
    /// Left is a member of the right collection.
    case `in`
    /// Left lies in the closed range given by the right two-element collection.
    case between
    /// UTI-CONFORMS-TO, UTI-EQUALS and `selector:` comparisons: parsed and printed, not evaluated.
    case custom(String)
}

/// ANY / ALL / NONE over a to-many left side.
public enum Quantifier: Hashable, Sendable {
    /// No quantifier: the left side is one value.
    case direct
    /// `ANY`: at least one member matches.
    case any
    /// `ALL`: every member matches.
    case all
    /// `NONE`: no member matches.
    case none
}

/// String comparison options: `[c]` case-insensitive, `[d]` diacritic-insensitive, `[n]` normalized (plain,
/// byte-wise, index-friendly).
public struct StringOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    /// The options whose bits `rawValue` holds.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: case-insensitive.
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
    /// `[n]`: normalized (byte-wise, index-friendly).
    public static let normalized = StringOptions(rawValue: 4)

    var folds: Bool { !isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]) }
}
