import Foundation

extension ObjectPredicate {
    /// Core Data's `evaluate(with:)`: whether `object` (a managed object) matches. A predicate that cannot be
    /// evaluated on it (an unknown key, a custom selector) traps, as `NSPredicate` raises an exception; `matches(_:)`
    /// throws instead. Any other value does not match.
    public func evaluate(with object: Any?) -> Bool {
        evaluate(with: object, substitutionVariables: [:])
    }

    /// Core Data's `evaluate(with:substitutionVariables:)`.
    public func evaluate(with object: Any?, substitutionVariables variables: [String: Any]) -> Bool {
        guard let object = object as? ManagedObject else { return false }
        do {
            return try matches(object, variables: variables)
        } catch {
            preconditionFailure("\(self) cannot be evaluated on \(object.entity.name): \(error)")
        }
    }

    /// Evaluates the predicate against an object in memory, with the same semantics as the SQL the store runs
    /// (byte-wise string comparison unless `[c]`/`[d]`, the nil rule of docs/predicates.md, implicit ANY over
    /// to-many key paths). Throws for forms that cannot be evaluated (custom selectors, unknown keys).
    public func matches(_ object: ManagedObject, variables: [String: Any?] = [:]) throws -> Bool {
        var bindings: [String: PredicateEvaluator.Value] = [:]
        for (name, value) in variables {
            if let object = value as? ManagedObject { bindings[name] = .object(object) } else { bindings[name] = .scalar(PredicateValue(value) ?? .null) }
        }
        return try PredicateEvaluator(variables: bindings).test(self, object)
    }
}

struct PredicateEvaluator {
    indirect enum Value {
        case scalar(PredicateValue)
        case object(ManagedObject)
        case many([Value])
    }

    var variables: [String: Value]

    func test(_ predicate: ObjectPredicate, _ object: ManagedObject) throws -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .and(let items):
            for item in items where !(try test(item, object)) { return false }
            return true
        case .or(let items):
            for item in items where try test(item, object) { return true }
            return false
        case .not(let inner): return !(try test(inner, object))
        case .comparison(let c): return try comparison(c, object)
        }
    }

    // MARK: Expressions

    func value(_ expression: ObjectExpression, _ object: ManagedObject) throws -> Value {
        switch expression {
        case .constant(.array(let items)): return .many(items.map(Value.scalar))
        case .constant(let v): return .scalar(v)
        case .evaluatedObject: return .object(object)
        case .variable(let name):
            guard let bound = variables[name] else { throw ObjectPredicateError(.unsupported, "variable $\(name) has no value") }
            return bound
        case .keyPath(let base, let components):
            let start = try base.map { try value($0, object) } ?? .object(object)
            return try follow(components[...], from: start)
        case .aggregate(let items): return .many(try items.map { try value($0, object) })
        case .subquery(let collection, let variable, let predicate):
            guard case .many(let members) = try value(collection, object) else {
                throw ObjectPredicateError(.unsupported, "SUBQUERY needs a collection")
            }
            var kept: [Value] = []
            for member in members {
                guard case .object(let memberObject) = member else { continue }
                var inner = self
                inner.variables[variable] = member
                if try inner.test(predicate, memberObject) { kept.append(member) }
            }
            return .many(kept)
        case .function(let name, let args) where ["+", "-", "*", "/"].contains(name) && args.count == 2:
            guard case .scalar(let l) = try value(args[0], object), case .scalar(let r) = try value(args[1], object),
                  let a = Self.number(l), let b = Self.number(r) else { return .scalar(.null) }
            switch name {
            case "+": return .scalar(.double(a + b))
            case "-": return .scalar(.double(a - b))
            case "*": return .scalar(.double(a * b))
            default: return .scalar(b == 0 ? .null : .double(a / b))
            }
        case .function("noindex:", let args) where args.count == 1:
            // An instruction to the store's query planner: in memory, the value itself.
            return try value(args[0], object)
        case .function("CAST", let args) where args.count == 2:
            if case .constant(.string(let uri)) = args[0], case .constant(.string("NSManagedObjectID")) = args[1],
               let id = object.managedObjectContext?.objectID(forURIString: uri) {
                return .scalar(.objectID(id))
            }
            throw ObjectPredicateError(.unsupported, "CAST to \(args[1]) cannot be evaluated")
        case .placeholder(let spec):
            throw ObjectPredicateError(.argument, "format specifier \(spec) has no argument")
        case .function(let name, _):
            throw ObjectPredicateError(.unsupported, "\(name)(…) cannot be evaluated")
        case .predicate:
            throw ObjectPredicateError(.unsupported, "a predicate used as a value cannot be evaluated")
        }
    }

    private func follow(_ components: ArraySlice<String>, from start: Value) throws -> Value {
        guard let name = components.first else { return start }
        let rest = components.dropFirst()
        switch start {
        case .scalar(let value):
            // Through a nil to-one, every key is nil (as the SQL's outer join gives).
            if name == "self" || value.isNull { return try follow(rest, from: start) }
            throw ObjectPredicateError(.unknownKey, "a value has no key '\(name)'")
        case .object(let object):
            if name == "self" || name == "SELF" { return try follow(rest, from: start) }
            guard let property = object.entity.property(named: name) else {
                throw ObjectPredicateError(.unknownKey, "entity '\(object.entity.name)' has no key '\(name)'")
            }
            if let attribute = property as? AttributeDescription {
                if attribute.type == .composite, let element = rest.first {
                    return try follow(["\(name).\(element)"] + rest.dropFirst(), from: start)
                }
                return try follow(rest, from: .scalar(Self.value(of: object, attribute)))
            }
            let relationship = property as! RelationshipDescription
            if relationship.isToMany {
                return try follow(rest, from: .many(object.objects(for: relationship).map(Value.object)))
            }
            guard let destination = object.destination(of: relationship) else { return try follow(rest, from: .scalar(.null)) }
            return try follow(rest, from: .object(destination))
        case .many(let members):
            switch name.lowercased() {
            case "@count":
                return try follow(rest, from: .scalar(.integer(Int64(members.count))))
            case "@sum", "@avg", "@min", "@max":
                guard let key = rest.first else { throw ObjectPredicateError(.unsupported, "\(name) needs a key path after it") }
                var numbers: [PredicateValue] = []
                for member in members {
                    if case .scalar(let v) = try follow([key][...], from: member), !v.isNull { numbers.append(v) }
                }
                let result: PredicateValue
                switch name.lowercased() {
                case "@sum": result = .double(numbers.compactMap(Self.number).reduce(0, +))
                case "@avg": result = numbers.isEmpty ? .null : .double(numbers.compactMap(Self.number).reduce(0, +) / Double(numbers.count))
                case "@min": result = numbers.min { Self.order($0, $1, folding: 0) == .orderedAscending } ?? .null
                default: result = numbers.max { Self.order($0, $1, folding: 0) == .orderedAscending } ?? .null
                }
                return try follow(rest.dropFirst(), from: .scalar(result))
            default:
                var values: [Value] = []
                for member in members {
                    let v = try follow(components, from: member)
                    if case .many(let nested) = v { values += nested } else { values.append(v) }
                }
                return .many(values)
            }
        }
    }

    static func value(of object: ManagedObject, _ attribute: AttributeDescription) -> PredicateValue {
        let slot = object.slot(at: attribute.index)
        switch slot {
        case .null: return .null
        case .integer(let n):
            switch attribute.type {
            case .boolean: return .bool(n != 0)
            case .double, .float, .decimal: return .double(Double(n))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(n)))
            default: return .integer(n)
            }
        case .real(let d):
            return attribute.type == .date ? .date(Date(timeIntervalSinceReferenceDate: d)) : .double(d)
        case .text(let s):
            if attribute.type == .decimal, let d = Double(s) { return .double(d) }
            return .string(s)
        case .blob(let data):
            if attribute.type == .uuid, data.count == 16 { return .uuid(data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }) }
            return .data(data)
        case .object(let o): return .objectID(o.objectID)
        case .many: return .null
        }
    }

    // MARK: Comparisons

    private func comparison(_ c: Comparison, _ object: ManagedObject) throws -> Bool {
        if case .custom(let name) = c.op { throw ObjectPredicateError(.unsupported, "the \(name) operator cannot be evaluated") }
        let left = try value(c.left, object)
        let right = try value(c.right, object)
        if c.op == .contains, case .many(let members) = left { return members.contains { matches($0, .equal, right, c.options) } }
        if c.op == .in, case .many(let members) = right, !isConstantArray(c.right) {
            return members.contains { matches(left, .equal, $0, c.options) }
        }
        if case .many(let members) = left {
            switch c.quantifier {
            case .direct, .any: return members.contains { matches($0, c.op, right, c.options) }
            case .all: return members.allSatisfy { matches($0, c.op, right, c.options) }
            case .none: return !members.contains { matches($0, c.op, right, c.options) }
            }
        }
        return matches(left, c.op, right, c.options)
    }

    private func isConstantArray(_ e: ObjectExpression) -> Bool {
        if case .constant(.array) = e { return true }
        if case .aggregate = e { return true }
        return false
    }

    /// One comparison of single values (objects compare by ID).
    private func matches(_ left: Value, _ op: ComparisonOperator, _ right: Value, _ options: StringOptions) -> Bool {
        let l = left.predicateValue
        let foldFlags = options.contains(.normalized) ? 0 : (options.contains(.caseInsensitive) ? 1 : 0) | (options.contains(.diacriticInsensitive) ? 2 : 0)
        switch op {
        case .in:
            guard case .many(let items) = right else {
                if case .scalar(.string(let haystack)) = right, case .string(let needle) = l { return Self.fold(haystack, foldFlags).utf8.contains(sequence: Self.fold(needle, foldFlags).utf8) }
                return matches(left, .equal, right, options)
            }
            return items.contains { matches(left, .equal, $0, options) }
        case .between:
            guard case .many(let bounds) = right, bounds.count == 2 else { return false }
            return matches(left, .greaterThanOrEqual, bounds[0], options) && matches(left, .lessThanOrEqual, bounds[1], options)
        default:
            break
        }
        let r = right.predicateValue
        switch op {
        case .equal:
            if l.isNull || r.isNull { return l.isNull && r.isNull }
            return Self.order(l, r, folding: foldFlags) == .orderedSame
        case .notEqual:
            // As NSPredicate in memory: nil differs from every value (SQL's NULL <> 2 is not true: the stores'
            // answer differs, which the optional-not-equal finding is about).
            if l.isNull || r.isNull { return l.isNull != r.isNull }
            return Self.order(l, r, folding: foldFlags).map { $0 != .orderedSame } ?? false
        case .lessThan: return Self.order(l, r, folding: foldFlags) == .orderedAscending
        case .lessThanOrEqual: return Self.order(l, r, folding: foldFlags).map { $0 != .orderedDescending } ?? false
        case .greaterThan: return Self.order(l, r, folding: foldFlags) == .orderedDescending
        case .greaterThanOrEqual: return Self.order(l, r, folding: foldFlags).map { $0 != .orderedAscending } ?? false
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard case .string(let s) = l, case .string(let t) = r else { return false }
            let subject = Self.fold(s, foldFlags), pattern = Self.fold(t, foldFlags)
            switch op {
            case .beginsWith: return subject.utf8.starts(with: pattern.utf8)
            case .endsWith: return subject.utf8.reversed().starts(with: pattern.utf8.reversed())
            case .contains: return subject.utf8.contains(sequence: pattern.utf8)
            case .like: return Self.like(Array(subject.unicodeScalars)[...], Array(pattern.unicodeScalars)[...])
            default: return SQLFunctions.matches(s, pattern: t, flags: foldFlags)
            }
        default:
            return false
        }
    }

    static func fold(_ s: String, _ flags: Int) -> String { flags == 0 ? s : SQLFunctions.fold(s, flags: flags) }

    static func number(_ v: PredicateValue) -> Double? {
        switch v {
        case .integer(let n): return Double(n)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        case .date(let d): return d.timeIntervalSinceReferenceDate
        default: return nil
        }
    }

    /// SQLite's ordering of two non-nil values: numbers numerically, strings by UTF-8 bytes, blobs by bytes;
    /// nil when they do not compare.
    static func order(_ a: PredicateValue, _ b: PredicateValue, folding flags: Int) -> ComparisonResult? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.string(let x), .string(let y)):
            let fx = fold(x, flags), fy = fold(y, flags)
            return fx.utf8.lexicographicallyPrecedes(fy.utf8) ? .orderedAscending : fy.utf8.lexicographicallyPrecedes(fx.utf8) ? .orderedDescending : .orderedSame
        case (.data(let x), .data(let y)):
            return x.lexicographicallyPrecedes(y) ? .orderedAscending : y.lexicographicallyPrecedes(x) ? .orderedDescending : .orderedSame
        case (.uuid(let x), .uuid(let y)): return order(.string(x.uuidString), .string(y.uuidString), folding: 0)
        case (.objectID(let x), .objectID(let y)): return x == y ? .orderedSame : nil
        default:
            guard let x = number(a), let y = number(b) else { return nil }
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
    }

    /// NSPredicate LIKE: `*` any run, `?` one character, `\` escapes. Iterative (a long value or pattern cannot
    /// overflow the stack) and backtracking only to the last `*` (no exponential time on patterns of many stars).
    static func like(_ s: ArraySlice<Unicode.Scalar>, _ p: ArraySlice<Unicode.Scalar>) -> Bool {
        let s = Array(s), p = Array(p)
        var si = 0, pi = 0
        var star: (pattern: Int, subject: Int)?
        while si < s.count {
            if pi < p.count {
                switch p[pi] {
                case "*":
                    star = (pi, si)
                    pi += 1
                    continue
                case "?":
                    si += 1
                    pi += 1
                    continue
                case "\\" where pi + 1 < p.count:
                    if s[si] == p[pi + 1] {
                        si += 1
                        pi += 2
                        continue
                    }
                default:
                    if s[si] == p[pi] {
                        si += 1
                        pi += 1
                        continue
                    }
                }
            }
            // A mismatch: let the last `*` take one more character, or fail when there is none.
            guard let last = star else { return false }
            star = (last.pattern, last.subject + 1)
            pi = last.pattern + 1
            si = last.subject + 1
        }
        while pi < p.count && p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

extension PredicateEvaluator.Value {
    var predicateValue: PredicateValue {
        switch self {
        case .scalar(let v): return v
        case .object(let o): return .objectID(o.objectID)
        case .many(let items): return .array(items.map(\.predicateValue))
        }
    }
}

extension Sequence where Element: Equatable {
    /// True when `sequence` occurs contiguously in `self`.
    func contains<S: Sequence>(sequence: S) -> Bool where S.Element == Element {
        let needle = Array(sequence)
        guard !needle.isEmpty else { return true }
        let haystack = Array(self)
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
