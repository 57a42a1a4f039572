/// `!=` against an optional attribute: SQL leaves out the rows where the attribute is NULL (NULL <> x is not true),
/// while Core Data's NSPredicate `!=` in memory keeps the objects whose value is nil — the same predicate, two answers
/// (pending changes are matched in memory). Faultline applies SQL's rule in both places (docs/predicates.md), which is
/// still not what a reader of `x != 5` may expect. A predicate that also compares the key path with nil says what it
/// means.
enum OptionalInequality {
    /// The key paths of optional attributes of `entity` that `predicate` compares with `!=` to a value, and nowhere
    /// with nil.
    /// The entity is looked up by name only when a `!=` is met: a traced fetch runs this, and most predicates have
    /// none (then nothing is allocated or hashed).
    static func keyPaths(in predicate: ObjectPredicate, model: ManagedObjectModel, entityName: String) -> [String] {
        var unequal: [String] = [], withNil: [String] = []
        visit(predicate, { model.entity(named: entityName) }, &unequal, &withNil)
        return withNil.isEmpty ? unequal : unequal.filter { !withNil.contains($0) }
    }

    private static func visit(_ p: ObjectPredicate, _ entity: () -> EntityDescription?, _ unequal: inout [String], _ withNil: inout [String]) {
        switch p {
        case .constant: break
        case .and(let items), .or(let items): for item in items { visit(item, entity, &unequal, &withNil) }
        case .not(let inner): visit(inner, entity, &unequal, &withNil)
        case .comparison(let c):
            guard c.quantifier == .direct, case .keyPath(nil, let components) = c.left else { return }
            if case .constant(.null) = c.right {
                withNil.append(components.joined(separator: "."))
            } else if c.op == .notEqual, case .constant = c.right, let entity = entity(), isOptionalAttribute(components, of: entity) {
                let path = components.joined(separator: ".")
                if !unequal.contains(path) { unequal.append(path) }
            }
        }
    }

    /// Whether `components` name an optional stored attribute through to-one relationships from `entity`.
    private static func isOptionalAttribute(_ components: [String], of entity: EntityDescription) -> Bool {
        var current = entity
        for (i, name) in components.enumerated() {
            if i == components.count - 1 {
                guard let attribute = current.attribute(named: name) else { return false }
                return attribute.isOptional && !attribute.isTransient
            }
            guard let relationship = current.relationship(named: name), !relationship.isToMany, let destination = relationship.destination else { return false }
            current = destination
        }
        return false
    }
}
