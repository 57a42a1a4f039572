import Foundation

/// Compiles predicates and sort orderings to SQL over an entity's table, in Core Data's shapes: to-one key paths
/// as LEFT OUTER JOINs, to-many key paths as EXISTS / COUNT subqueries, `[c]/[d]` through `FL_FOLD`, `MATCHES`
/// through `FL_MATCHES`, `LIKE`/`BEGINSWITH`/`ENDSWITH` as GLOB patterns with GLOB's own wildcards escaped.
/// Every constant is a bound parameter; clause order is kept.
///
/// Nil rule (documented in docs/predicates.md): a comparison with a nil value is false, except `== nil` and
/// `!= nil`, in SQL and in memory alike; so `x != 2` does not match rows where `x` is nil (as a Core Data fetch,
/// unlike NSPredicate's in-memory `evaluate(with:)`).
struct PredicateCompiler {
    let model: ManagedObjectModel
    let storeIdentifier: String?
    private(set) var bindings: [Slot] = []
    /// Where each binding's value comes from, so that a predicate of the same shape reuses the SQL
    /// (`FetchFilterTemplate`).
    private(set) var parameters: [BoundParameter] = []
    /// The number of constants met so far, in the order `PredicateShape` lists them.
    private var constantsMet = 0
    private var aliasCount = 1
    /// Names of dictionary-fetch columns, usable as keys in predicates and orderings (`total > 5000`).
    var aliases: [String: (String, Kind)] = [:]

    /// The bindings collected so far, handed over and cleared (for SQL assembled from several parts).
    mutating func takeBindings() -> [Slot] {
        defer { bindings = []; parameters = [] }
        return bindings
    }

    /// A dictionary-fetch column: a key path's value, or an aggregate over the rows (or groups).
    mutating func selectTerm(_ property: PropertyToFetch, in scope: Scope) throws -> (String, Kind) {
        if property.function == .count && property.keyPath == "*" { return ("COUNT(*)", .number) }
        guard case .scalar(let sql, let kind) = try operand(.key(property.keyPath), in: scope) else {
            throw ObjectPredicateError(.unsupported, "cannot fetch '\(property.keyPath)': it is not a single value of \(scope.entity.name)")
        }
        guard let function = property.function else { return (sql, kind) }
        switch function {
        case .count: return ("COUNT(\(sql))", .number)
        case .sum: return ("SUM(\(sql))", .number)
        case .avg: return ("AVG(\(sql))", .number)
        case .min: return ("MIN(\(sql))", kind)
        case .max: return ("MAX(\(sql))", kind)
        }
    }

    init(model: ManagedObjectModel, storeIdentifier: String?) {
        self.model = model
        self.storeIdentifier = storeIdentifier
    }

    /// A table alias with its entity, the joins made from it, and the subquery variables in view.
    final class Scope {
        let alias: String
        let entity: EntityDescription
        var joins: [String] = []
        var joined: [String: (alias: String, entity: EntityDescription)] = [:]
        var variables: [String: Scope]

        init(alias: String, entity: EntityDescription, variables: [String: Scope] = [:]) {
            self.alias = alias
            self.entity = entity
            self.variables = variables
        }

        var joinSQL: String { joins.map { " " + $0 }.joined() }
    }

    enum Kind {
        case attribute(AttributeDescription)
        case object(EntityDescription)
        case number
        case text
        case boolean
        case unknown
    }

    /// A to-many relationship reached from a scope, with the key path still to follow from each member.
    struct Members {
        let scope: Scope
        let relationship: RelationshipDescription
        let remaining: [String]
    }

    enum Operand {
        case scalar(String, Kind)
        case constant(PredicateValue, ConstantSource)
        case members(Members)
        case subquery(Members, variable: String, predicate: ObjectPredicate)
    }

    // MARK: Entry points

    /// The WHERE condition for `predicate` over `scope` (its joins are added to the scope).
    mutating func condition(_ predicate: ObjectPredicate, in scope: Scope) throws -> String {
        switch predicate {
        case .constant(let value): return value ? "1" : "0"
        case .and(let items): return "(" + (try items.map { try condition($0, in: scope) }).joined(separator: " AND ") + ")"
        case .or(let items): return "(" + (try items.map { try condition($0, in: scope) }).joined(separator: " OR ") + ")"
        // Two-valued logic, as in memory: a comparison with nil is false, so its negation is true.
        case .not(let inner): return "NOT IFNULL(" + (try condition(inner, in: scope)) + ", 0)"
        case .comparison(let c): return try comparison(c, in: scope)
        }
    }

    /// An ORDER BY term for a sort key path.
    mutating func orderTerm(_ descriptor: FetchSortDescriptor, in scope: Scope) throws -> String {
        guard case .scalar(var sql, let kind) = try operand(.key(descriptor.keyPath), in: scope) else {
            throw ObjectPredicateError(.unsupported, "cannot sort by '\(descriptor.keyPath)': it is not a single value of \(scope.entity.name)")
        }
        if descriptor.comparison == .caseInsensitive, isText(kind) { sql = "FL_FOLD(\(sql), 1)" }
        return sql + (descriptor.ascending ? "" : " DESC")
    }

    private mutating func newAlias() -> String {
        defer { aliasCount += 1 }
        return "t\(aliasCount)"
    }

    // MARK: Operands

    mutating func operand(_ expression: ObjectExpression, in scope: Scope) throws -> Operand {
        switch expression {
        case .constant(let value):
            defer { constantsMet += 1 }
            return .constant(value, .constant(constantsMet))
        case .evaluatedObject: return .scalar("\(scope.alias).Z_PK", .object(scope.entity))
        case .variable(let name):
            guard let target = scope.variables[name] else {
                throw ObjectPredicateError(.unsupported, "variable $\(name) has no value (substitute template variables before fetching)")
            }
            return .scalar("\(target.alias).Z_PK", .object(target.entity))
        case .keyPath(let base, let components):
            guard components.count <= Limits.keyPathComponents else {
                throw ObjectPredicateError(.limit, "the key path '\(components.prefix(3).joined(separator: "."))…' has \(components.count) components; the limit is \(Limits.keyPathComponents) (Limits.keyPathComponents)")
            }
            var start = scope
            if let base {
                switch base {
                case .variable(let name):
                    guard let target = scope.variables[name] else {
                        throw ObjectPredicateError(.unsupported, "variable $\(name) has no value (substitute template variables before fetching)")
                    }
                    start = target
                case .evaluatedObject:
                    break
                case .subquery(let collection, let variable, let predicate):
                    guard components == ["@count"] else {
                        throw ObjectPredicateError(.unsupported, "a SUBQUERY can only be counted (SUBQUERY(…).@count)")
                    }
                    guard case .members(let members) = try operand(collection, in: scope), members.remaining.isEmpty else {
                        throw ObjectPredicateError(.unsupported, "SUBQUERY needs a to-many relationship as its collection, got \(collection)")
                    }
                    return .subquery(members, variable: variable, predicate: predicate)
                default:
                    throw ObjectPredicateError(.unsupported, "key path on \(base) cannot be evaluated by the store")
                }
            }
            return try keyPath(components, from: start)
        case .function(let name, let args) where ["+", "-", "*", "/"].contains(name) && args.count == 2:
            let left = try scalarSQL(args[0], in: scope, kind: .number)
            let right = try scalarSQL(args[1], in: scope, kind: .number)
            return .scalar("(\(left) \(name) \(right))", .number)
        case .function("noindex:", let args) where args.count == 1:
            // Core Data's `noindex:(expression)`: SQLite uses no index for a term whose column has a unary `+`.
            guard case .scalar(let inner, let kind) = try operand(args[0], in: scope) else {
                throw ObjectPredicateError(.unsupported, "noindex: applies to an attribute or an expression of one value")
            }
            return .scalar("+" + inner, kind)
        case .function("CAST", let args) where args.count == 2:
            if case .constant(.string(let uri)) = args[0], case .constant(.string("NSManagedObjectID")) = args[1] {
                guard let id = ManagedObjectID(uriString: uri, model: model, storeIdentifier: storeIdentifier) else {
                    throw ObjectPredicateError(.typeMismatch, "'\(uri)' is not an object URI of this store")
                }
                return .constant(.objectID(id), .unavailable)
            }
            throw ObjectPredicateError(.unsupported, "CAST to \(args[1]) cannot be evaluated by the store")
        case .placeholder(let spec):
            throw ObjectPredicateError(.argument, "format specifier \(spec) has no argument")
        case .aggregate(let items):
            var values: [PredicateValue] = []
            var sources: [ConstantSource] = []
            for item in items {
                guard case .constant(let value, let source) = try operand(item, in: scope) else {
                    throw ObjectPredicateError(.unsupported, "aggregates of key paths ({…}) cannot be evaluated by the store")
                }
                values.append(value)
                sources.append(source)
            }
            return .constant(.array(values), .items(sources))
        case .subquery:
            throw ObjectPredicateError(.unsupported, "a SUBQUERY can only be counted (SUBQUERY(…).@count)")
        case .function(let name, _):
            throw ObjectPredicateError(.unsupported, "\(name)(…) cannot be evaluated by the store")
        case .predicate:
            throw ObjectPredicateError(.unsupported, "a predicate used as a value cannot be evaluated by the store")
        }
    }

    /// Follows a key path: attributes become columns, to-ones become joins, a to-many stops the walk (the rest is
    /// evaluated per member).
    private mutating func keyPath(_ components: [String], from start: Scope) throws -> Operand {
        if components.count == 1, let (sql, kind) = aliases[components[0]] { return .scalar(sql, kind) }
        var alias = start.alias
        var entity = start.entity
        var path = ""
        for (i, name) in components.enumerated() {
            let isLast = i == components.count - 1
            if name == "self" || name == "SELF" { continue }
            if name.hasPrefix("@") {
                throw ObjectPredicateError(.unsupported, "collection operator \(name) needs a to-many relationship before it")
            }
            guard let property = entity.property(named: name) else {
                throw ObjectPredicateError(.unknownKey, "entity '\(entity.name)' has no key '\(name)'")
            }
            if let attribute = property as? AttributeDescription {
                if attribute.type == .composite, !isLast {
                    // A composite's element is an attribute of the entity named by its path ("author.person").
                    return try keyPath(Array(components[..<i]) + ["\(name).\(components[i + 1])"] + Array(components[(i + 2)...]), from: start)
                }
                guard isLast else {
                    throw ObjectPredicateError(.unknownKey, "'\(name)' is an attribute of '\(entity.name)'; it has no key '\(components[i + 1])'")
                }
                if attribute.type == .composite {
                    throw ObjectPredicateError(.unsupported, "'\(entity.name).\(name)' is a composite attribute: compare its elements (\(name).\(attribute.entityElements.first?.elementName ?? "…"))")
                }
                guard let column = attribute.columnName else {
                    throw ObjectPredicateError(.unsupported, "'\(entity.name).\(name)' is transient: the store cannot fetch by it")
                }
                return .scalar("\(alias).\(column)", .attribute(attribute))
            }
            let relationship = property as! RelationshipDescription
            if relationship.isTransient {
                throw ObjectPredicateError(.unsupported, "'\(entity.name).\(name)' is transient: the store cannot fetch by it")
            }
            if relationship.isToMany {
                // Members are read by a correlated subquery anchored at the current alias (a join of `start`).
                let anchor = alias == start.alias ? start : Scope(alias: alias, entity: entity, variables: start.variables)
                return .members(Members(scope: anchor, relationship: relationship, remaining: Array(components[(i + 1)...])))
            }
            if isLast { return .scalar("\(alias).\(relationship.columnName!)", .object(relationship.destination)) }
            path += (path.isEmpty ? "" : ".") + name
            if let existing = start.joined[path] {
                alias = existing.alias
                entity = existing.entity
            } else {
                let next = newAlias()
                start.joins.append("LEFT OUTER JOIN \(relationship.destination.table.name) \(next) ON \(alias).\(relationship.columnName!) = \(next).Z_PK")
                start.joined[path] = (next, relationship.destination)
                alias = next
                entity = relationship.destination
            }
        }
        return .scalar("\(alias).Z_PK", .object(entity))
    }

    /// FROM … WHERE link for the members of a to-many relationship, with a new scope for them.
    private mutating func memberSource(_ members: Members) -> (from: String, link: String, scope: Scope) {
        let relationship = members.relationship
        let alias = newAlias()
        let memberScope = Scope(alias: alias, entity: relationship.destination, variables: members.scope.variables)
        let source = members.scope.alias
        if let join = relationship.joinTable {
            let j = newAlias()
            return ("\(join.name) \(j) JOIN \(relationship.destination.table.name) \(alias) ON \(alias).Z_PK = \(j).\(join.destinationColumn)",
                    "\(j).\(join.sourceColumn) = \(source).Z_PK", memberScope)
        }
        let inverse = relationship.inverse!
        return ("\(relationship.destination.table.name) \(alias)", "\(alias).\(inverse.columnName!) = \(source).Z_PK", memberScope)
    }

    private func subquerySQL(select: String, from source: (from: String, link: String, scope: Scope), condition: String?) -> String {
        var sql = "SELECT \(select) FROM \(source.from)\(source.scope.joinSQL) WHERE \(source.link)"
        if let condition { sql += " AND " + condition }
        return "(" + sql + ")"
    }

    /// A value from a to-many: `@count`, or `@sum/@avg/@min/@max` of a member key path.
    private mutating func collectionValue(_ members: Members) throws -> (String, Kind)? {
        guard let first = members.remaining.first, first.hasPrefix("@") else { return nil }
        let source = memberSource(members)
        if first == "@count" {
            guard members.remaining.count == 1 else { throw ObjectPredicateError(.unsupported, "nothing can follow @count") }
            return (subquerySQL(select: "COUNT(*)", from: source, condition: nil), .number)
        }
        let functions = ["@sum": "TOTAL", "@avg": "AVG", "@min": "MIN", "@max": "MAX"]
        guard let function = functions[first.lowercased()] else {
            throw ObjectPredicateError(.unsupported, "collection operator \(first) is not supported (known: @count, @sum, @avg, @min, @max)")
        }
        let rest = Array(members.remaining.dropFirst())
        guard !rest.isEmpty else { throw ObjectPredicateError(.unsupported, "\(first) needs a key path after it (\(first).key)") }
        guard case .scalar(let column, let kind) = try keyPath(rest, from: source.scope) else {
            throw ObjectPredicateError(.unsupported, "\(first) needs an attribute of \(members.relationship.destination.name)")
        }
        let resultKind: Kind = function == "MIN" || function == "MAX" ? kind : .number
        return (subquerySQL(select: "\(function)(\(column))", from: source, condition: nil), resultKind)
    }

    private mutating func scalarSQL(_ expression: ObjectExpression, in scope: Scope, kind: Kind) throws -> String {
        switch try operand(expression, in: scope) {
        case .scalar(let sql, _): return sql
        case .constant(let value, let source): return try bind(value, as: kind, from: source)
        case .members(let members):
            guard let (sql, _) = try collectionValue(members) else {
                throw ObjectPredicateError(.unsupported, "'\(members.relationship.name)' is a to-many relationship; use ANY, ALL, NONE, @count or an aggregate")
            }
            return sql
        case .subquery(let members, let variable, let predicate):
            return try subqueryCount(members, variable: variable, predicate: predicate)
        }
    }

    private mutating func subqueryCount(_ members: Members, variable: String, predicate: ObjectPredicate) throws -> String {
        let source = memberSource(members)
        source.scope.variables[variable] = source.scope
        let inner = try condition(predicate, in: source.scope)
        return subquerySQL(select: "COUNT(*)", from: source, condition: inner)
    }

    // MARK: Comparisons

    private mutating func comparison(_ c: Comparison, in scope: Scope) throws -> String {
        if case .custom(let name) = c.op {
            throw ObjectPredicateError(.unsupported, "the \(name) operator cannot be evaluated by the store")
        }
        var left = try operand(c.left, in: scope)
        var right = try operand(c.right, in: scope)
        // Aggregates of to-many members (@count, @avg …) and counted subqueries are scalars.
        left = try scalarized(left)
        right = try scalarized(right)

        // `collection CONTAINS x` is `x IN collection`.
        if c.op == .contains, case .members = left { return try membership(right, in: left, options: c.options, scope: scope) }
        if c.op == .in, case .members = right { return try membership(left, in: right, options: c.options, scope: scope) }

        if case .members(let members) = left {
            if members.remaining.isEmpty && c.quantifier == .direct {
                throw ObjectPredicateError(.unsupported, "'\(members.relationship.name)' is a to-many relationship; use ANY, ALL, NONE, @count or IN")
            }
            let source = memberSource(members)
            let member = try keyPath(members.remaining, from: source.scope)
            var inner = c
            inner.quantifier = .direct
            let test = try scalarComparison(member, c.op, right, options: c.options)
            switch c.quantifier {
            case .direct, .any: return "EXISTS " + subquerySQL(select: "1", from: source, condition: test)
            case .none: return "NOT EXISTS " + subquerySQL(select: "1", from: source, condition: test)
            case .all: return "NOT EXISTS " + subquerySQL(select: "1", from: source, condition: "NOT IFNULL(" + test + ", 0)")
            }
        }
        if c.quantifier != .direct, case .constant(.array(let values), let source) = left {
            // ANY/ALL/NONE over a constant collection on the left: expand.
            let tests = try values.indices.map {
                try scalarComparison(.constant(values[$0], source.element($0)), c.op, right, options: c.options)
            }
            switch c.quantifier {
            case .all: return tests.isEmpty ? "1" : "(" + tests.joined(separator: " AND ") + ")"
            case .none: return tests.isEmpty ? "1" : "NOT (" + tests.joined(separator: " OR ") + ")"
            default: return tests.isEmpty ? "0" : "(" + tests.joined(separator: " OR ") + ")"
            }
        }
        return try scalarComparison(left, c.op, right, options: c.options)
    }

    private mutating func scalarized(_ operand: Operand) throws -> Operand {
        switch operand {
        case .members(let members):
            if let (sql, kind) = try collectionValue(members) { return .scalar(sql, kind) }
            return operand
        case .subquery(let members, let variable, let predicate):
            return .scalar(try subqueryCount(members, variable: variable, predicate: predicate), .number)
        default:
            return operand
        }
    }

    /// `value IN members`: an object (or object ID) among a to-many's members, or a value among their key path's values.
    private mutating func membership(_ value: Operand, in collection: Operand, options: StringOptions, scope: Scope) throws -> String {
        guard case .members(let members) = collection else { throw ObjectPredicateError(.unsupported, "membership needs a to-many relationship") }
        let source = memberSource(members)
        let member = try keyPath(members.remaining, from: source.scope)
        let test = try scalarComparison(member, .equal, value, options: options)
        return "EXISTS " + subquerySQL(select: "1", from: source, condition: test)
    }

    private mutating func scalarComparison(_ left: Operand, _ op: ComparisonOperator, _ right: Operand, options: StringOptions) throws -> String {
        // Put the column first when only the right side is one.
        if case .constant = left, case .scalar = right, let flipped = Self.flipped(op) {
            return try scalarComparison(right, flipped, left, options: options)
        }
        let kind = self.kind(of: left) ?? self.kind(of: right) ?? .unknown
        let folds = options.folds && !options.contains(.normalized)
        let foldFlags = (options.contains(.caseInsensitive) ? 1 : 0) | (options.contains(.diacriticInsensitive) ? 2 : 0)
        func sql(_ operand: Operand) throws -> String {
            switch operand {
            case .scalar(let text, _): return folds ? "FL_FOLD(\(text), \(foldFlags))" : text
            case .constant(let value, let source):
                if folds, case .string(let s) = value {
                    return bindRaw(try Self.slot(.string(SQLFunctions.fold(s, flags: foldFlags)), as: kind), from: source, .folded(kind, foldFlags))
                }
                return try bind(value, as: kind, from: source)
            case .members(let members):
                throw ObjectPredicateError(.unsupported, "'\(members.relationship.name)' is a to-many relationship; use ANY, ALL, NONE, @count or IN")
            case .subquery: throw ObjectPredicateError(.unsupported, "a SUBQUERY can only be counted")
            }
        }
        let lhs = try sql(left)
        switch op {
        case .equal, .notEqual:
            if case .constant(.null, _) = right { return "\(lhs) IS \(op == .equal ? "" : "NOT ")NULL" }
            if case .constant(.objectID(let id), _) = right, case .object(let entity) = kind, !sameKind(id, entity) {
                return op == .equal ? "0" : "\(lhs) IS NOT NULL"
            }
            return "\(lhs) \(op == .equal ? "=" : "<>") \(try sql(right))"
        case .lessThan: return "\(lhs) < \(try sql(right))"
        case .lessThanOrEqual: return "\(lhs) <= \(try sql(right))"
        case .greaterThan: return "\(lhs) > \(try sql(right))"
        case .greaterThanOrEqual: return "\(lhs) >= \(try sql(right))"
        case .between:
            guard case .constant(.array(let bounds), let source) = right, bounds.count == 2 else {
                throw ObjectPredicateError(.typeMismatch, "BETWEEN needs two values, {low, high}")
            }
            return "\(lhs) BETWEEN \(try sql(.constant(bounds[0], source.element(0)))) AND \(try sql(.constant(bounds[1], source.element(1))))"
        case .in:
            switch right {
            case .constant(.array(let values), let source):
                var items: [String] = []
                for (i, value) in values.enumerated() {
                    if case .objectID(let id) = value, case .object(let entity) = kind, !sameKind(id, entity) { continue }
                    items.append(try sql(.constant(value, source.element(i))))
                }
                return items.isEmpty ? "0" : "\(lhs) IN (\(items.joined(separator: ", ")))"
            case .constant(.string, _):
                // `x IN "text"`: a substring test, as NSPredicate does for strings.
                return "instr(\(try sql(right)), \(lhs)) > 0"
            default:
                return "\(lhs) = \(try sql(right))"
            }
        case .contains:
            return "instr(\(lhs), \(try sql(right))) > 0"
        case .beginsWith, .endsWith, .like:
            try requireText(kind, op)
            guard case .constant(.string(let pattern), let source) = right else {
                let r = try sql(right)
                switch op {
                case .beginsWith: return "substr(\(lhs), 1, length(\(r))) = \(r)"
                case .endsWith: return "substr(\(lhs), -length(\(r))) = \(r)"
                default: throw ObjectPredicateError(.unsupported, "LIKE needs a constant pattern")
                }
            }
            let foldsPattern = folds ? foldFlags : nil
            return "\(lhs) GLOB \(bindRaw(.text(Self.glob(op, pattern, folding: foldsPattern)), from: source, .glob(op, folding: foldsPattern)))"
        case .matches:
            try requireText(kind, op)
            let text: String
            if case .scalar(let s, _) = left { text = s } else { text = lhs }
            guard case .constant(.string(let pattern), let source) = right else {
                throw ObjectPredicateError(.unsupported, "\(PredicateFormatter.operatorText(op)) needs a constant string pattern")
            }
            return "FL_MATCHES(\(text), \(try bind(.string(pattern), as: .text, from: source)), \(foldFlags)) = 1"
        case .custom(let name):
            throw ObjectPredicateError(.unsupported, "the \(name) operator cannot be evaluated by the store")
        }
    }

    private func requireText(_ kind: Kind, _ op: ComparisonOperator) throws {
        guard isText(kind) || isUnknown(kind) else {
            throw ObjectPredicateError(.typeMismatch, "\(PredicateFormatter.operatorText(op)) compares strings, not \(Self.kindName(kind)) values")
        }
    }

    private func isText(_ kind: Kind) -> Bool {
        switch kind {
        case .text: return true
        case .attribute(let a): return a.type == .string || a.type == .uri
        default: return false
        }
    }

    private func isUnknown(_ kind: Kind) -> Bool { if case .unknown = kind { return true }; return false }

    private func sameKind(_ id: ManagedObjectID, _ entity: EntityDescription) -> Bool {
        guard let own = model.entity(named: id.entity.name) else { return false }
        return own.isKind(of: entity)
    }

    private func kind(of operand: Operand) -> Kind? {
        if case .scalar(_, let kind) = operand { return kind }
        return nil
    }

    private static func flipped(_ op: ComparisonOperator) -> ComparisonOperator? {
        switch op {
        case .equal: return .equal
        case .notEqual: return .notEqual
        case .lessThan: return .greaterThan
        case .lessThanOrEqual: return .greaterThanOrEqual
        case .greaterThan: return .lessThan
        case .greaterThanOrEqual: return .lessThanOrEqual
        default: return nil
        }
    }

    /// The GLOB pattern for `BEGINSWITH`, `ENDSWITH` or `LIKE` with `pattern`, folded first when `folding` gives
    /// the fold's flags.
    static func glob(_ op: ComparisonOperator, _ pattern: String, folding: Int?) -> String {
        let pattern = folding.map { SQLFunctions.fold(pattern, flags: $0) } ?? pattern
        switch op {
        case .beginsWith: return globEscaped(pattern) + "*"
        case .endsWith: return "*" + globEscaped(pattern)
        default: return glob(fromLike: pattern)
        }
    }

    /// A literal for GLOB: its wildcards and brackets match themselves.
    static func globEscaped(_ text: String) -> String {
        var out = ""
        for ch in text {
            switch ch {
            case "*": out += "[*]"
            case "?": out += "[?]"
            case "[": out += "[[]"
            default: out.append(ch)
            }
        }
        return out
    }

    /// NSPredicate LIKE (`*` any run, `?` one character, `\` escapes) as a GLOB pattern.
    static func glob(fromLike pattern: String) -> String {
        var out = ""
        var escaped = false
        for ch in pattern {
            if escaped {
                out += globEscaped(String(ch))
                escaped = false
            } else if ch == "\\" {
                escaped = true
            } else if ch == "*" || ch == "?" {
                out.append(ch)
            } else {
                out += globEscaped(String(ch))
            }
        }
        return out
    }

    // MARK: Binding

    private mutating func bindRaw(_ slot: Slot, from source: ConstantSource, _ derivation: BoundParameter.Derivation) -> String {
        bindings.append(slot)
        parameters.append(BoundParameter(source: source, derivation: derivation))
        return "?"
    }

    /// Binds a constant in the stored form of what it is compared with (a collection as a parenthesized list); a
    /// constant of the wrong type is an error naming both types.
    mutating func bind(_ value: PredicateValue, as kind: Kind, from source: ConstantSource) throws -> String {
        if case .array(let items) = value {
            var list: [String] = []
            for (i, item) in items.enumerated() { list.append(try bind(item, as: kind, from: source.element(i))) }
            return "(" + list.joined(separator: ", ") + ")"
        }
        return bindRaw(try Self.slot(value, as: kind), from: source, .value(kind))
    }

    /// A single constant's stored form when compared with `kind`.
    static func slot(_ value: PredicateValue, as kind: Kind) throws -> Slot {
        func mismatch() -> ObjectPredicateError {
            ObjectPredicateError(.typeMismatch, "\(kindName(kind)) compared with \(value.typeName) value \(value)")
        }
        switch value {
        case .null, .array: return .null
        default: break
        }
        switch kind {
        case .attribute(let attribute):
            switch attribute.type {
            case .integer16, .integer32, .integer64, .boolean, .double, .float, .decimal:
                switch value {
                case .integer(let n): return .integer(n)
                case .bool(let b): return .integer(b ? 1 : 0)
                case .double(let d): return .real(d)
                default: throw mismatch()
                }
            case .string, .uri:
                guard case .string(let s) = value else { throw mismatch() }
                return .text(s)
            case .date:
                guard case .date(let d) = value else { throw mismatch() }
                return .real(d.timeIntervalSinceReferenceDate)
            case .binary:
                guard case .data(let d) = value else { throw mismatch() }
                return .blob(d)
            case .uuid:
                switch value {
                case .uuid(let u): return .blob(withUnsafeBytes(of: u.uuid) { Data($0) })
                case .string(let s):
                    guard let u = UUID(uuidString: s) else { throw mismatch() }
                    return .blob(withUnsafeBytes(of: u.uuid) { Data($0) })
                default: throw mismatch()
                }
            case .transformable, .undefined, .objectID:
                do {
                    return try ValueCoding.slot(for: swiftValue(value), attribute: attribute)
                } catch {
                    throw mismatch()
                }
            case .composite:
                throw mismatch()
            }
        case .object:
            guard case .objectID(let id) = value else { throw mismatch() }
            return id.key > 0 ? .integer(id.key) : .null
        case .number, .boolean:
            switch value {
            case .integer(let n): return .integer(n)
            case .bool(let b): return .integer(b ? 1 : 0)
            case .double(let d): return .real(d)
            case .date(let d): return .real(d.timeIntervalSinceReferenceDate)
            default: throw mismatch()
            }
        case .text:
            guard case .string(let s) = value else { throw mismatch() }
            return .text(s)
        case .unknown:
            return naturalSlot(value)
        }
    }

    static func naturalSlot(_ value: PredicateValue) -> Slot {
        switch value {
        case .null, .array: return .null
        case .bool(let b): return .integer(b ? 1 : 0)
        case .integer(let n): return .integer(n)
        case .double(let d): return .real(d)
        case .string(let s): return .text(s)
        case .date(let d): return .real(d.timeIntervalSinceReferenceDate)
        case .data(let d): return .blob(d)
        case .uuid(let u): return .blob(withUnsafeBytes(of: u.uuid) { Data($0) })
        case .objectID(let id): return id.key > 0 ? .integer(id.key) : .null
        }
    }

    static func swiftValue(_ value: PredicateValue) -> Any? {
        switch value {
        case .null: return nil
        case .bool(let b): return b
        case .integer(let n): return n
        case .double(let d): return d
        case .string(let s): return s
        case .date(let d): return d
        case .data(let d): return d
        case .uuid(let u): return u
        case .objectID(let id): return id
        case .array(let items): return items.map(swiftValue)
        }
    }

    private static func kindName(_ kind: Kind) -> String {
        switch kind {
        case .attribute(let a): return "\(a.entity.name).\(a.name) (\(a.type.rawValue))"
        case .object(let e): return "a \(e.name) object"
        case .number: return "a number"
        case .text: return "a string"
        case .boolean: return "a Boolean"
        case .unknown: return "a value"
        }
    }
}
