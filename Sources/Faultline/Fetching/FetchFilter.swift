/// A fetch request's predicate and order, compiled to SQL for one entity's table (alias `t0`).
struct FetchFilter: Sendable {
    /// `LEFT OUTER JOIN …` clauses for to-one key paths.
    var joins: String
    /// The WHERE condition, nil for all rows.
    var condition: String?
    /// ORDER BY terms.
    var orderBy: [String]
    /// Values for the condition's parameters, in order.
    var bindings: [Slot]

    /// Compiles `predicate` and the SQL-expressible `sortDescriptors` for `entity`.
    static func compile(predicate: ObjectPredicate?, sortDescriptors: [FetchSortDescriptor], entity: EntityDescription,
                        storeIdentifier: String?) throws -> FetchFilter {
        try compileWithParameters(predicate: predicate, sortDescriptors: sortDescriptors, entity: entity, storeIdentifier: storeIdentifier).filter
    }

    /// `compile`, with where each binding comes from (for a `FetchFilterTemplate`).
    static func compileWithParameters(predicate: ObjectPredicate?, sortDescriptors: [FetchSortDescriptor], entity: EntityDescription,
                                      storeIdentifier: String?) throws -> (filter: FetchFilter, parameters: [BoundParameter]) {
        var compiler = PredicateCompiler(model: entity.model, storeIdentifier: storeIdentifier)
        let scope = PredicateCompiler.Scope(alias: "t0", entity: entity)
        var condition: String?
        if let predicate, predicate != .constant(true) { condition = try compiler.condition(predicate, in: scope) }
        var orderBy: [String] = []
        for descriptor in sortDescriptors where descriptor.comparison != .localized {
            orderBy.append(try compiler.orderTerm(descriptor, in: scope))
        }
        return (FetchFilter(joins: scope.joinSQL, condition: condition, orderBy: orderBy, bindings: compiler.bindings), compiler.parameters)
    }
}

/// What a compiled filter depends on: repeated fetches of the same request reuse its SQL.
struct FetchFilterKey: Hashable, Sendable {
    let entity: Int
    let predicate: ObjectPredicate?
    let sortDescriptors: [FetchSortDescriptor]
}
