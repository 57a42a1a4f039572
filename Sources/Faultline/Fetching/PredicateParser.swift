import Foundation

extension ObjectPredicate {
    /// Parses an NSPredicate format string, substituting format arguments (`%@ %K %d %i %ld %lu %lld %f %lf %la
    /// %a %s`). A wrong argument for its specifier, a missing or extra argument, or bad syntax throws a
    /// `ObjectPredicateError` with the character position. For formats that come from input.
    public init(parsing format: String, _ arguments: Any?...) throws {
        try self.init(parsing: format, argumentArray: arguments)
    }

    /// Parses a format string with an array of arguments (throwing, as `init(parsing:_:)`).
    public init(parsing format: String, argumentArray: [Any?]) throws {
        var parser = PredicateParser(format: format, arguments: .bound(argumentArray))
        self = try parser.parseWhole()
    }

    /// Core Data's `NSPredicate(format:_:)`: a format written in the program. A format that does not parse traps
    /// with the error and its position, as `NSPredicate` raises an exception; use `init(parsing:_:)` for formats
    /// from input.
    public init(format: String, _ arguments: Any?...) {
        self.init(format: format, argumentArray: arguments)
    }

    /// Core Data's `NSPredicate(format:argumentArray:)` (traps on a bad format, as `init(format:_:)`).
    public init(format: String, argumentArray: [Any?]) {
        do {
            try self.init(parsing: format, argumentArray: argumentArray)
        } catch {
            preconditionFailure("NSPredicate format \"\(format)\": \(error)")
        }
    }

    /// Parses a format string without arguments: format specifiers stay in the predicate as placeholders (a
    /// linter's view). Such a predicate cannot be evaluated or fetched with.
    public init(unboundFormat format: String) throws {
        var parser = PredicateParser(format: format, arguments: .unbound)
        self = try parser.parseWhole()
    }

    /// Replaces `$NAME` variables with values (fetch request templates). Subquery variables are left alone.
    public func substituting(_ variables: [String: Any?]) throws -> ObjectPredicate {
        var converted: [String: PredicateValue] = [:]
        for (name, value) in variables {
            guard let v = PredicateValue(value ?? nil) else {
                throw ObjectPredicateError(.argument, "variable $\(name): \(type(of: value as Any)) has no predicate form")
            }
            converted[name] = v
        }
        return PredicateSubstitution(values: converted).predicate(self)
    }
}

struct PredicateSubstitution {
    let values: [String: PredicateValue]
    /// Resolves a variable, or a key path from one (`$FETCH_SOURCE.name`), itself: nil leaves it to `values`.
    var resolve: ((_ variable: String, _ components: [String]) -> ObjectExpression?)? = nil
    var bound: Set<String> = []

    func predicate(_ p: ObjectPredicate) -> ObjectPredicate {
        switch p {
        case .constant: return p
        case .comparison(var c):
            c.left = expression(c.left)
            c.right = expression(c.right)
            return .comparison(c)
        case .and(let items): return .and(items.map(predicate))
        case .or(let items): return .or(items.map(predicate))
        case .not(let inner): return .not(predicate(inner))
        }
    }

    func expression(_ e: ObjectExpression) -> ObjectExpression {
        switch e {
        case .variable(let name) where !bound.contains(name):
            if let resolved = resolve?(name, []) { return resolved }
            return values[name].map(ObjectExpression.constant) ?? e
        case .keyPath(let base, let components):
            if case .variable(let name)? = base, !bound.contains(name), let resolved = resolve?(name, components) { return resolved }
            return .keyPath(base: base.map(expression), components: components)
        case .aggregate(let items): return .aggregate(items.map(expression))
        case .function(let name, let args): return .function(name, args.map(expression))
        case .predicate(let inner): return .predicate(predicate(inner))
        case .subquery(let collection, let variable, let inner):
            var nested = self
            nested.bound.insert(variable)
            return .subquery(collection: expression(collection), variable: variable, predicate: nested.predicate(inner))
        default: return e
        }
    }
}

/// A recursive-descent parser for the NSPredicate format language.
struct PredicateParser {
    enum Arguments {
        case bound([Any?])
        case unbound
    }

    enum Token: Equatable {
        case identifier(String)
        case keyword(String)        // upper-cased
        case number(String)
        case string(String)
        case specifier(String)      // "%@", "%K", "%ld", …
        case variable(String)
        case symbol(String)         // == != <= … ( ) { } [ ] , . @ + - * / ** :
        case end
    }

    struct Located {
        let token: Token
        let position: Int
    }

    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "ANY", "SOME",
        "ALL", "NONE", "SUBQUERY", "TRUEPREDICATE", "FALSEPREDICATE", "YES", "NO", "TRUE", "FALSE", "NIL", "NULL",
        "SELF", "FUNCTION", "CAST", "TERNARY", "UNION", "INTERSECT", "MINUS", "UTI-CONFORMS-TO", "UTI-EQUALS",
    ]

    let format: String
    private let characters: [Character]
    private var tokens: [Located] = []
    private var index = 0
    private var arguments: Arguments
    private var argumentIndex = 0
    /// How deeply the expression being read nests (`Limits.predicateNestingDepth`).
    private var depth = 0

    init(format: String, arguments: Arguments) {
        self.format = format
        self.characters = Self.lexicalCharacters(format)
        self.arguments = arguments
    }

    /// The format's characters as the lexer reads them: Swift's characters, except that one beginning with an ASCII
    /// character (a quote, a backslash, a digit, an operator) followed by combining marks is split into its scalars,
    /// so that `"` followed by U+0347 still closes a string and `\u0006` followed by one still has four digits.
    static func lexicalCharacters(_ format: String) -> [Character] {
        var characters: [Character] = []
        characters.reserveCapacity(format.utf8.count)
        for character in format {
            if character.unicodeScalars.count > 1, let first = character.unicodeScalars.first, first.isASCII {
                for scalar in character.unicodeScalars { characters.append(Character(scalar)) }
            } else {
                characters.append(character)
            }
        }
        return characters
    }

    mutating func parseWhole() throws -> ObjectPredicate {
        guard characters.count <= Limits.predicateLength else {
            throw ObjectPredicateError(.limit, "the predicate is \(characters.count) characters long; the limit is \(Limits.predicateLength) (Limits.predicateLength)")
        }
        try tokenize()
        let predicate = try parsePredicate()
        guard case .end = current.token else { throw expected("AND, OR or the end of the predicate") }
        if case .bound(let values) = arguments, argumentIndex < values.count {
            throw ObjectPredicateError(.argument, "\(values.count) format arguments given but only \(argumentIndex) used", format: format, position: characters.count)
        }
        return predicate
    }

    // MARK: Lexing

    private mutating func tokenize() throws {
        var i = 0
        func peek(_ offset: Int = 0) -> Character? { i + offset < characters.count ? characters[i + offset] : nil }
        while i < characters.count {
            let c = characters[i]
            if c.isWhitespace { i += 1; continue }
            let start = i
            if c.startsIdentifier || c == "#" {
                var text = ""
                if c == "#" { // `#name` escapes a reserved word; a name starts with a letter or `_`
                    i += 1
                    guard let first = peek(), first.startsIdentifier else {
                        throw ObjectPredicateError(.syntax, "expected a name after '#'", format: format, position: start)
                    }
                }
                while let ch = peek(), ch.isLetter || ch.isNumber || ch == "_" { text.append(ch); i += 1 }
                // UTI-CONFORMS-TO and UTI-EQUALS are hyphenated keywords.
                if text.uppercased() == "UTI", peek() == "-" {
                    var j = i
                    var rest = ""
                    while j < characters.count, characters[j].isLetter || characters[j] == "-" { rest.append(characters[j]); j += 1 }
                    let word = ("UTI" + rest).uppercased()
                    if word == "UTI-CONFORMS-TO" || word == "UTI-EQUALS" {
                        tokens.append(Located(token: .keyword(word), position: start))
                        i = j
                        continue
                    }
                }
                guard !text.isEmpty else { throw ObjectPredicateError(.syntax, "expected a name after '#'", format: format, position: start) }
                let upper = text.uppercased()
                if c != "#" && Self.keywords.contains(upper) {
                    tokens.append(Located(token: .keyword(upper), position: start))
                } else {
                    tokens.append(Located(token: .identifier(text), position: start))
                }
                continue
            }
            if c.isNumber || (c == "." && peek(1)?.isNumber == true) {
                var text = ""
                if c == "0", let x = peek(1), x == "x" || x == "X" {
                    text = "0x"
                    i += 2
                    while let ch = peek(), ch.isHexDigit { text.append(ch); i += 1 }
                } else {
                    while let ch = peek(), ch.isNumber || ch == "." { text.append(ch); i += 1 }
                    if let e = peek(), e == "e" || e == "E", let next = peek(1), next.isNumber || ((next == "-" || next == "+") && peek(2)?.isNumber == true) {
                        text.append(e); i += 1
                        if let sign = peek(), sign == "-" || sign == "+" { text.append(sign); i += 1 }
                        while let ch = peek(), ch.isNumber { text.append(ch); i += 1 }
                    }
                }
                tokens.append(Located(token: .number(text), position: start))
                continue
            }
            if c == "\"" || c == "'" {
                i += 1
                var text = ""
                var closed = false
                while let ch = peek() {
                    i += 1
                    if ch == c { closed = true; break }
                    if ch == "\\" {
                        guard let escaped = peek() else { break }
                        i += 1
                        switch escaped {
                        case "n": text.append("\n")
                        case "t": text.append("\t")
                        case "r": text.append("\r")
                        case "0": text.append("\0")
                        case "u":
                            var hex = ""
                            while hex.count < 4, let h = peek(), h.isHexDigit { hex.append(h); i += 1 }
                            guard hex.count == 4, let scalar = UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init) else {
                                throw ObjectPredicateError(.syntax, "\\u must be followed by four hexadecimal digits", format: format, position: i)
                            }
                            text.unicodeScalars.append(scalar)
                        default: text.append(escaped)
                        }
                    } else {
                        text.append(ch)
                    }
                }
                guard closed else { throw ObjectPredicateError(.syntax, "unterminated string literal", format: format, position: start) }
                tokens.append(Located(token: .string(text), position: start))
                continue
            }
            if c == "%" {
                var spec = "%"
                i += 1
                while let ch = peek(), "lhqL".contains(ch) { spec.append(ch); i += 1 }
                guard let conversion = peek(), "@KdiuxXfFeEgGaAsc".contains(conversion) else {
                    throw ObjectPredicateError(.syntax, "unknown format specifier '\(spec)\(peek().map(String.init) ?? "")'", format: format, position: start)
                }
                spec.append(conversion)
                i += 1
                tokens.append(Located(token: .specifier(spec), position: start))
                continue
            }
            if c == "$" {
                i += 1
                var name = ""
                while let ch = peek(), ch.isLetter || ch.isNumber || ch == "_" { name.append(ch); i += 1 }
                guard !name.isEmpty else { throw ObjectPredicateError(.syntax, "expected a variable name after '$'", format: format, position: start) }
                tokens.append(Located(token: .variable(name), position: start))
                continue
            }
            let two = peek(1).map { String(c) + String($0) }
            if let two, ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||", "**"].contains(two) {
                tokens.append(Located(token: .symbol(two), position: start))
                i += 2
                continue
            }
            if "=<>!(){}[],.@+-*/:&|".contains(c) {
                tokens.append(Located(token: .symbol(String(c)), position: start))
                i += 1
                continue
            }
            throw ObjectPredicateError(.syntax, "unexpected character '\(c)'", format: format, position: start)
        }
        tokens.append(Located(token: .end, position: characters.count))
    }

    // MARK: Helpers

    private var current: Located { tokens[index] }
    private func peekToken(_ offset: Int = 1) -> Token { tokens[min(index + offset, tokens.count - 1)].token }
    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    /// One level deeper; an error past `Limits.predicateNestingDepth`. Every caller undoes it (`depth -= 1`).
    private mutating func enter() throws {
        guard depth < Limits.predicateNestingDepth else {
            throw ObjectPredicateError(.limit, "the predicate nests more than \(Limits.predicateNestingDepth) levels deep (Limits.predicateNestingDepth)", format: format, position: current.position)
        }
        depth += 1
    }

    /// A key path's components, at most `Limits.keyPathComponents`.
    private func checked(_ components: [String], at position: Int) throws -> [String] {
        guard components.count <= Limits.keyPathComponents else {
            throw ObjectPredicateError(.limit, "a key path has more than \(Limits.keyPathComponents) components (Limits.keyPathComponents)", format: format, position: position)
        }
        return components
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .identifier(let s): return "'\(s)'"
        case .keyword(let s): return s
        case .number(let s): return s
        case .string(let s): return "the string \"\(s.prefix(30))\""
        case .specifier(let s): return s
        case .variable(let s): return "$\(s)"
        case .symbol(let s): return "'\(s)'"
        case .end: return "the end"
        }
    }

    private func expected(_ what: String) -> ObjectPredicateError {
        ObjectPredicateError(.syntax, "expected \(what), found \(describe(current.token))", format: format, position: current.position)
    }

    private mutating func accept(symbol: String) -> Bool {
        if case .symbol(symbol) = current.token { advance(); return true }
        return false
    }

    private mutating func accept(keyword: String) -> Bool {
        if case .keyword(keyword) = current.token { advance(); return true }
        return false
    }

    private mutating func expect(symbol: String, _ what: String? = nil) throws {
        guard accept(symbol: symbol) else { throw expected(what ?? "'\(symbol)'") }
    }

    // MARK: Predicates

    private mutating func parsePredicate() throws -> ObjectPredicate {
        try enter()
        defer { depth -= 1 }
        var items = [try parseAnd()]
        while accept(keyword: "OR") || accept(symbol: "||") { items.append(try parseAnd()) }
        return items.count == 1 ? items[0] : .or(items)
    }

    private mutating func parseAnd() throws -> ObjectPredicate {
        var items = [try parseNot()]
        while accept(keyword: "AND") || accept(symbol: "&&") { items.append(try parseNot()) }
        return items.count == 1 ? items[0] : .and(items)
    }

    private mutating func parseNot() throws -> ObjectPredicate {
        if accept(keyword: "NOT") || accept(symbol: "!") {
            try enter()
            defer { depth -= 1 }
            return .not(try parseNot())
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws -> ObjectPredicate {
        if accept(keyword: "TRUEPREDICATE") { return .constant(true) }
        if accept(keyword: "FALSEPREDICATE") { return .constant(false) }
        var predicateError: ObjectPredicateError?
        if case .symbol("(") = current.token {
            // A parenthesized predicate, or a comparison whose left side starts with a parenthesized expression.
            let saved = (index, argumentIndex)
            advance()
            do {
                let inner = try parsePredicate()
                try expect(symbol: ")", "')'")
                if !isComparisonOperatorAhead() { return inner }
            } catch let error as ObjectPredicateError where error.kind != .limit {
                predicateError = error
            }
            (index, argumentIndex) = saved
        }
        do {
            return try parseComparison()
        } catch let error as ObjectPredicateError {
            // Report whichever reading got further into the text.
            if let predicateError, (predicateError.position ?? 0) > (error.position ?? 0) { throw predicateError }
            throw error
        }
    }

    private func isComparisonOperatorAhead() -> Bool {
        switch current.token {
        case .symbol(let s): return ["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "+", "-", "*", "/", "**", ".", "["].contains(s)
        case .keyword(let k): return ["IN", "BETWEEN", "CONTAINS", "BEGINSWITH", "ENDSWITH", "LIKE", "MATCHES", "UTI-CONFORMS-TO", "UTI-EQUALS"].contains(k)
        default: return false
        }
    }

    private mutating func parseComparison() throws -> ObjectPredicate {
        var quantifier = Quantifier.direct
        if accept(keyword: "ANY") || accept(keyword: "SOME") { quantifier = .any }
        else if accept(keyword: "ALL") { quantifier = .all }
        else if accept(keyword: "NONE") { quantifier = .none }
        let left = try parseExpression()
        guard let op = try parseOperator() else {
            if quantifier == .direct, isBooleanTerm(left) {
                // A bare Boolean key path (or argument) is a predicate: `hidden` means `hidden == YES`.
                return .comparison(Comparison(left, .equal, .constant(.bool(true))))
            }
            throw expected("a comparison operator")
        }
        let options = try parseOptions()
        let right = try parseExpression()
        if op == .between {
            guard case .aggregate(let items) = right, items.count != 2 else {
                return .comparison(Comparison(left, op, right, quantifier: quantifier, options: options))
            }
            throw ObjectPredicateError(.syntax, "BETWEEN takes two values, {low, high}; got \(items.count)", format: format, position: current.position)
        }
        return .comparison(Comparison(left, op, right, quantifier: quantifier, options: options))
    }

    private func isBooleanTerm(_ e: ObjectExpression) -> Bool {
        switch e {
        case .keyPath, .placeholder, .variable: return true
        case .constant(.bool): return true
        default: return false
        }
    }

    private mutating func parseOperator() throws -> ComparisonOperator? {
        switch current.token {
        case .symbol(let s):
            let map: [String: ComparisonOperator] = ["==": .equal, "=": .equal, "!=": .notEqual, "<>": .notEqual,
                                                     "<": .lessThan, "<=": .lessThanOrEqual, "=<": .lessThanOrEqual,
                                                     ">": .greaterThan, ">=": .greaterThanOrEqual, "=>": .greaterThanOrEqual]
            guard let op = map[s] else { return nil }
            advance()
            return op
        case .keyword(let k):
            let map: [String: ComparisonOperator] = ["IN": .in, "BETWEEN": .between, "CONTAINS": .contains,
                                                     "BEGINSWITH": .beginsWith, "ENDSWITH": .endsWith, "LIKE": .like,
                                                     "MATCHES": .matches, "UTI-CONFORMS-TO": .custom("UTI-CONFORMS-TO"),
                                                     "UTI-EQUALS": .custom("UTI-EQUALS")]
            guard let op = map[k] else { return nil }
            advance()
            return op
        case .identifier(let name):
            // A custom selector comparison: `lhs selector: rhs`.
            guard case .symbol(":") = peekToken() else { return nil }
            advance()
            advance()
            return .custom(name + ":")
        default:
            return nil
        }
    }

    private mutating func parseOptions() throws -> StringOptions {
        guard case .symbol("[") = current.token, case .identifier(let letters) = peekToken(), case .symbol("]") = peekToken(2) else { return [] }
        var options: StringOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": break // locale-sensitive: accepted, comparisons are not locale-dependent here
            default:
                throw ObjectPredicateError(.syntax, "unknown comparison option '\(letter)' (known: c, d, n)", format: format, position: tokens[index + 1].position)
            }
        }
        advance(); advance(); advance()
        return options
    }

    // MARK: Expressions

    private mutating func parseExpression() throws -> ObjectExpression {
        try enter()
        var levels = 1
        defer { depth -= levels }
        var left = try parseAdditive()
        while case .keyword(let k) = current.token, k == "UNION" || k == "INTERSECT" || k == "MINUS" {
            advance()
            try enter()
            levels += 1
            left = .function(k, [left, try parseAdditive()])
        }
        return left
    }

    private mutating func parseAdditive() throws -> ObjectExpression {
        var levels = 0
        defer { depth -= levels }
        var left = try parseMultiplicative()
        while true {
            if case .symbol(let s) = current.token, s == "+" || s == "-" { try enter(); levels += 1 }
            if accept(symbol: "+") { left = .function("+", [left, try parseMultiplicative()]) }
            else if accept(symbol: "-") { left = .function("-", [left, try parseMultiplicative()]) }
            else { return left }
        }
    }

    private mutating func parseMultiplicative() throws -> ObjectExpression {
        var levels = 0
        defer { depth -= levels }
        var left = try parsePower()
        while true {
            if case .symbol(let s) = current.token, s == "*" || s == "/" || s == "&" || s == "|" { try enter(); levels += 1 }
            if accept(symbol: "*") { left = .function("*", [left, try parsePower()]) }
            else if accept(symbol: "/") { left = .function("/", [left, try parsePower()]) }
            else if accept(symbol: "&") { left = .function("&", [left, try parsePower()]) }
            else if accept(symbol: "|") { left = .function("|", [left, try parsePower()]) }
            else { return left }
        }
    }

    private mutating func parsePower() throws -> ObjectExpression {
        let base = try parseUnary()
        if accept(symbol: "**") {
            try enter()
            defer { depth -= 1 }
            return .function("**", [base, try parsePower()])
        }
        return base
    }

    private mutating func parseUnary() throws -> ObjectExpression {
        let minus = current.position
        if accept(symbol: "-") {
            if case .number(let text) = current.token {
                // `-9223372036854775808` is Int64.min: the literal is read with its sign, not negated after.
                advance()
                if case .symbol(let next) = current.token, next == "." || next == "[" {
                    index -= 1
                } else {
                    return .constant(try numberLiteral(text, negated: true, position: minus))
                }
            }
            try enter()
            defer { depth -= 1 }
            let operand = try parseUnary()
            // -Int64.min does not exist: it stays a subtraction (SQLite and the evaluator make it a real number).
            if case .constant(.integer(let n)) = operand, n != .min { return .constant(.integer(-n)) }
            if case .constant(.double(let d)) = operand { return .constant(.double(-d)) }
            return .function("-", [.constant(.integer(0)), operand])
        }
        return try parsePostfix()
    }

    private mutating func parsePostfix() throws -> ObjectExpression {
        var levels = 0
        defer { depth -= levels }
        var expression = try parsePrimary()
        while true {
            if accept(symbol: ".") {
                let position = current.position
                let components = try parseKeyComponent()
                if case .keyPath(let base, var existing) = expression {
                    existing += components
                    expression = .keyPath(base: base, components: try checked(existing, at: position))
                } else {
                    try enter()
                    levels += 1
                    expression = .keyPath(base: expression, components: components)
                }
            } else if case .symbol("[") = current.token {
                try enter()
                levels += 1
                advance()
                let subscriptExpression: ObjectExpression
                if case .identifier(let word) = current.token, ["FIRST", "LAST", "SIZE"].contains(word.uppercased()) {
                    advance()
                    subscriptExpression = .constant(.string(word.uppercased()))
                } else {
                    subscriptExpression = try parseExpression()
                }
                try expect(symbol: "]")
                expression = .function("INDEX", [expression, subscriptExpression])
            } else {
                return expression
            }
        }
    }

    private mutating func parseKeyComponent() throws -> [String] {
        switch current.token {
        case .identifier(let name):
            advance()
            return [name]
        case .keyword(let k) where k == "SELF":
            advance()
            return ["self"]
        case .symbol("@"):
            advance()
            guard case .identifier(let op) = current.token else { throw expected("a collection operator after '@'") }
            advance()
            return ["@" + op]
        case .specifier(let spec) where spec == "%K":
            return try keyPathArgument()
        default:
            throw expected("a key name")
        }
    }

    private mutating func keyPathArgument() throws -> [String] {
        let position = current.position
        advance()
        switch arguments {
        case .unbound:
            return ["%K"]
        case .bound(let values):
            guard argumentIndex < values.count else {
                throw ObjectPredicateError(.argument, "missing argument for %K", format: format, position: position)
            }
            let value = ValueCoding.unwrap(values[argumentIndex])
            argumentIndex += 1
            guard let path = value as? String, !path.isEmpty else {
                throw ObjectPredicateError(.argument, "%K needs a key path string, got \(value.map { "\(type(of: $0))" } ?? "nil")", format: format, position: position)
            }
            return try checked(path.split(separator: ".", omittingEmptySubsequences: false).map(String.init), at: position)
        }
    }

    private mutating func parsePrimary() throws -> ObjectExpression {
        let located = current
        switch located.token {
        case .number(let text):
            advance()
            return .constant(try numberLiteral(text, negated: false, position: located.position))
        case .string(let text):
            advance()
            return .constant(.string(text))
        case .specifier(let spec):
            if spec == "%K" { return .keyPath(base: nil, components: try keyPathArgument()) }
            advance()
            return try valueArgument(spec, position: located.position)
        case .variable(let name):
            advance()
            return .variable(name)
        case .symbol("{"):
            advance()
            var items: [ObjectExpression] = []
            if !accept(symbol: "}") {
                repeat { items.append(try parseExpression()) } while accept(symbol: ",")
                try expect(symbol: "}", "',' or '}'")
            }
            return .aggregate(items)
        case .symbol("("):
            advance()
            let inner = try parseExpression()
            try expect(symbol: ")")
            return inner
        case .symbol("@"):
            advance()
            guard case .identifier(let op) = current.token else { throw expected("a collection operator after '@'") }
            advance()
            return .keyPath(base: nil, components: ["@" + op])
        case .keyword(let k):
            switch k {
            case "YES", "TRUE": advance(); return .constant(.bool(true))
            case "NO", "FALSE": advance(); return .constant(.bool(false))
            case "NIL", "NULL": advance(); return .constant(.null)
            case "SELF": advance(); return .evaluatedObject
            case "SUBQUERY":
                try enter()
                defer { depth -= 1 }
                advance()
                try expect(symbol: "(")
                let collection = try parseExpression()
                try expect(symbol: ",")
                guard case .variable(let variable) = current.token else { throw expected("a $variable") }
                advance()
                try expect(symbol: ",")
                let predicate = try parsePredicate()
                try expect(symbol: ")")
                return .subquery(collection: collection, variable: variable, predicate: predicate)
            case "FUNCTION", "CAST", "TERNARY":
                try enter()
                defer { depth -= 1 }
                advance()
                try expect(symbol: "(")
                var args: [ObjectExpression] = []
                if k == "TERNARY" {
                    let condition = try parsePredicate()
                    args.append(.predicate(condition))
                    try expect(symbol: ",")
                }
                repeat { args.append(try parseExpression()) } while accept(symbol: ",")
                try expect(symbol: ")", "',' or ')'")
                if k == "CAST", let folded = Self.castConstant(args) { return .constant(folded) }
                return .function(k, args)
            default:
                throw expected("an expression")
            }
        case .identifier(let name):
            advance()
            // Selector-style function call: `name:(args)` or `name:otherPart:(args)`; plain call `name(args)`.
            if case .symbol(":") = current.token {
                var selector = name + ":"
                var lookahead = index + 1
                while case .identifier(let part) = tokens[lookahead].token, case .symbol(":") = tokens[lookahead + 1].token {
                    selector += part + ":"
                    lookahead += 2
                }
                if case .symbol("(") = tokens[lookahead].token {
                    index = lookahead
                    return .function(selector, try parseArguments())
                }
            }
            if case .symbol("(") = current.token {
                // `#CAST(…)` would print as `CAST(…)`, the keyword: a name escaped with `#` is a key, never a function.
                guard !Self.keywords.contains(name.uppercased()) else {
                    throw ObjectPredicateError(.syntax, "'\(name)' is a reserved word: it cannot name a function", format: format, position: located.position)
                }
                return .function(name, try parseArguments())
            }
            return .keyPath(base: nil, components: [name])
        default:
            throw expected("an expression")
        }
    }

    /// A number literal, exactly: integers as Integer 64 (one outside its range is an error, never rounded to a
    /// Double), anything with a fraction or exponent as a Double.
    private func numberLiteral(_ text: String, negated: Bool, position: Int) throws -> PredicateValue {
        func outOfRange() -> ObjectPredicateError {
            ObjectPredicateError(.syntax, "the integer \(negated ? "-" : "")\(text) does not fit in Integer 64 (\(Int64.min) to \(Int64.max))", format: format, position: position)
        }
        if text.hasPrefix("0x") {
            guard let magnitude = UInt64(text.dropFirst(2), radix: 16) else {
                if text.count > 2 { throw outOfRange() }
                throw ObjectPredicateError(.syntax, "malformed number '\(text)'", format: format, position: position)
            }
            if negated && magnitude == UInt64(Int64.max) + 1 { return .integer(.min) }
            guard let n = Int64(exactly: magnitude) else { throw outOfRange() }
            return .integer(negated ? -n : n)
        }
        if text.allSatisfy(\.isASCIIDigit) {
            guard let n = Int64((negated ? "-" : "") + text) else { throw outOfRange() }
            return .integer(n)
        }
        guard let d = Double(text), text.allSatisfy({ $0.isASCIIDigit || $0 == "." || $0 == "e" || $0 == "E" || $0 == "-" || $0 == "+" }) else {
            throw ObjectPredicateError(.syntax, "malformed number '\(text)'", format: format, position: position)
        }
        guard d.isFinite else {
            throw ObjectPredicateError(.syntax, "the number \(text) is beyond the largest Double", format: format, position: position)
        }
        return .double(negated ? -d : d)
    }

    /// `CAST(constant, "NSDate" | "NSUUID" | "NSData" | "NSNumber" | "NSString")` as a typed constant; object IDs
    /// stay a CAST of their URI (resolved against a store when compiled).
    static func castConstant(_ args: [ObjectExpression]) -> PredicateValue? {
        guard args.count == 2, case .constant(let value) = args[0], case .constant(.string(let type)) = args[1] else { return nil }
        switch (type, value) {
        case ("NSDate", .integer(let n)): return .date(Date(timeIntervalSinceReferenceDate: Double(n)))
        case ("NSDate", .double(let d)): return .date(Date(timeIntervalSinceReferenceDate: d))
        case ("NSDate", .string(let s)): return Double(s).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case ("NSUUID", .string(let s)): return UUID(uuidString: s).map(PredicateValue.uuid)
        case ("NSData", .string(let s)): return Data(base64Encoded: s).map(PredicateValue.data)
        case ("NSNumber", .string(let s)): return Int64(s).map(PredicateValue.integer) ?? Double(s).map(PredicateValue.double)
        case ("NSNumber", .integer), ("NSNumber", .double): return value
        case ("NSString", _): return .string(PredicateFormatter.expression(.constant(value)))
        default: return nil
        }
    }

    private mutating func parseArguments() throws -> [ObjectExpression] {
        try enter()
        defer { depth -= 1 }
        try expect(symbol: "(")
        var args: [ObjectExpression] = []
        if !accept(symbol: ")") {
            repeat { args.append(try parseExpression()) } while accept(symbol: ",")
            try expect(symbol: ")", "',' or ')'")
        }
        return args
    }

    // MARK: Arguments

    private mutating func valueArgument(_ spec: String, position: Int) throws -> ObjectExpression {
        guard case .bound(let values) = arguments else { return .placeholder(spec) }
        guard argumentIndex < values.count else {
            throw ObjectPredicateError(.argument, "missing argument for \(spec)", format: format, position: position)
        }
        let raw = values[argumentIndex]
        argumentIndex += 1
        let value = ValueCoding.unwrap(raw)
        func wrong(_ expected: String) -> ObjectPredicateError {
            ObjectPredicateError(.argument, "\(spec) needs \(expected), got \(value.map { "\(type(of: $0))" } ?? "nil")", format: format, position: position)
        }
        let conversion = spec.last!
        switch conversion {
        case "@":
            guard let converted = PredicateValue(raw) else { throw wrong("an object, a number, a string, a date, data, a UUID or a collection of them") }
            return .constant(converted)
        case "d", "i", "u", "x", "X", "c":
            guard let value, !(value is Bool), let n = ValueCoding.integer(value) else { throw wrong("an integer") }
            return .constant(.integer(n))
        case "f", "F", "e", "E", "g", "G", "a", "A":
            switch value {
            case let d as Double: return .constant(.double(d))
            case let f as Float: return .constant(.double(Double(f)))
            default: throw wrong("a floating-point number")
            }
        case "s":
            guard let s = value as? String else { throw wrong("a string") }
            return .constant(.string(s))
        default:
            throw ObjectPredicateError(.syntax, "unsupported format specifier \(spec)", format: format, position: position)
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }

    /// A letter or `_` that can begin a name: not a combining mark, which would join the space printed before it
    /// into one character and so not read back.
    var startsIdentifier: Bool {
        guard isLetter || self == "_", let first = unicodeScalars.first else { return false }
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return false
        default: return true
        }
    }
}
