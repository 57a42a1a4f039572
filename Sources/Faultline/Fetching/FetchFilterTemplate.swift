/// A fetch filter compiled for every predicate of one shape (`PredicateShape`): the SQL, and how each bound
/// parameter's value comes from the predicate's constants. Fetching `SELF == %@` for a thousand objects compiles
/// once. (A class: a fetch takes it from the cache with one reference, not one for each of its parts.)
final class FetchFilterTemplate {
    let joins: String
    let condition: String?
    let orderBy: [String]
    let parameters: [BoundParameter]
    /// The shape's predicate text for a trace that records fetches by their shape, with a hole for each constant.
    let text: PredicateTextShape?

    /// The template of `filter`, compiled with `parameters` from a predicate whose constants are `constants`; nil
    /// when a parameter does not come from the constants alone, or when rebuilding the filter's bindings from
    /// `constants` does not give them back (a check made once per shape). `textOf`: the predicate, when the
    /// template should keep its text for the trace.
    init?(_ filter: FetchFilter, parameters: [BoundParameter], constants: [PredicateValue], textOf predicate: ObjectPredicate?) {
        guard parameters.count == filter.bindings.count, let rebuilt = try? Self.bindings(parameters, constants),
              zip(rebuilt, filter.bindings).allSatisfy(ManagedObjectContext.sameStoredValue) else { return nil }
        joins = filter.joins
        condition = filter.condition
        orderBy = filter.orderBy
        self.parameters = parameters
        text = predicate.flatMap { PredicateTextShape($0, constants: constants.count) }
    }

    /// The filter for a predicate of this shape whose constants are `constants`. Throws what compiling it would
    /// (a string that is no UUID, a value a transformer rejects).
    func filter(constants: [PredicateValue]) throws -> FetchFilter {
        FetchFilter(joins: joins, condition: condition, orderBy: orderBy, bindings: try Self.bindings(parameters, constants))
    }

    private static func bindings(_ parameters: [BoundParameter], _ constants: [PredicateValue]) throws -> [Slot] {
        var slots: [Slot] = []
        slots.reserveCapacity(parameters.count)
        for parameter in parameters {
            guard let value = parameter.source.value(in: constants) else { throw ObjectPredicateError(.unsupported, "a template's constant is missing") }
            slots.append(try parameter.derivation.slot(value))
        }
        return slots
    }
}

/// One bound parameter of compiled SQL: which constant of the predicate gives its value, and how.
struct BoundParameter {
    enum Derivation {
        /// The constant in the stored form of what it is compared with.
        case value(PredicateCompiler.Kind)
        /// The string constant case- or diacritic-folded (the flags of `FL_FOLD`), then stored as `value`.
        case folded(PredicateCompiler.Kind, Int)
        /// The GLOB pattern for a `BEGINSWITH`, `ENDSWITH` or `LIKE` string, folded first when flags are given.
        case glob(ComparisonOperator, folding: Int?)

        func slot(_ value: PredicateValue) throws -> Slot {
            switch self {
            case .value(let kind):
                return try PredicateCompiler.slot(value, as: kind)
            case .folded(let kind, let flags):
                guard case .string(let s) = value else { return try PredicateCompiler.slot(value, as: kind) }
                return try PredicateCompiler.slot(.string(SQLFunctions.fold(s, flags: flags)), as: kind)
            case .glob(let op, let folding):
                guard case .string(let pattern) = value else { throw ObjectPredicateError(.unsupported, "a pattern must be a string") }
                return .text(PredicateCompiler.glob(op, pattern, folding: folding))
            }
        }
    }

    let source: ConstantSource
    let derivation: Derivation
}

/// Where a bound value comes from: one of the predicate's constants (numbered in the order `PredicateShape`
/// lists them), an element of one, or a collection written as an aggregate of constants (`{1, 2}`).
indirect enum ConstantSource {
    case constant(Int)
    case element(ConstantSource, Int)
    case items([ConstantSource])
    /// Not from the predicate's constants (an object ID written as `CAST("<URI>", "NSManagedObjectID")`): such a
    /// filter has no template.
    case unavailable

    /// The source of element `index` of this collection.
    func element(_ index: Int) -> ConstantSource {
        if case .items(let items) = self { return items[index] }
        return .element(self, index)
    }

    /// The value this source names among `constants`; nil when it names none.
    func value(in constants: [PredicateValue]) -> PredicateValue? {
        switch self {
        case .constant(let index):
            return constants.indices.contains(index) ? constants[index] : nil
        case .element(let collection, let index):
            guard case .array(let items)? = collection.value(in: constants), items.indices.contains(index) else { return nil }
            return items[index]
        case .items(let sources):
            var items: [PredicateValue] = []
            for source in sources {
                guard let value = source.value(in: constants) else { return nil }
                items.append(value)
            }
            return .array(items)
        case .unavailable:
            return nil
        }
    }
}
