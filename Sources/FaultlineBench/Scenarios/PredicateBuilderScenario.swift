import Faultline
import Foundation

extension ScenarioCatalogue {
    /// leiiwang's notes (004, W-004-7): `name BEGINSWITH … AND type BETWEEN {…}` from a format string, parsed at each
    /// fetch, and the same built in code.
    static var predicateBuilder: BenchScenario {
        let format = "from a format string, parsed at each fetch", code = "built in code (ObjectExpression)"
        /// Whether the two predicates are the same one (their canonical formats), found when the variants are made.
        final class Same { var formats: (String, String)? }
        let same = Same()
        return BenchScenario(
            id: "predicate-builder", title: "A predicate from a format string or built in code: K fetches of employees by name prefix and type range",
            claim: "A predicate built in code and the same predicate from a format string run the same SQL and return the same objects; the format string adds its parse to each fetch that makes it anew.",
            theme: .predicates,
            sources: [ClaimSource(.studyNotes, "Advanced", "Predicates", keys: ["W-004-7"])],
            ratios: [RatioSpec(format, over: code)],
            alternatesOrder: true,
            variants: { setup in
                let model = try EmployeeWorkload.model()
                let employees = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.employees(employees)
                let fetches = 100
                func parsed() throws -> ObjectPredicate {
                    try ObjectPredicate(parsing: "name BEGINSWITH %@ AND type BETWEEN {%@, %@}", argumentArray: ["Employee 1", Int64(2), Int64(5)])
                }
                func built() -> ObjectPredicate {
                    ObjectExpression.key("name").beginsWith(.value("Employee 1")) && ObjectExpression.key("type").isBetween(.value(Int64(2)), .value(Int64(5)))
                }
                same.formats = (try parsed().predicateFormat, built().predicateFormat)
                func run(_ context: ManagedObjectContext, _ predicate: () throws -> ObjectPredicate) throws {
                    var found = 0
                    for _ in 0..<fetches {
                        found += try context.fetch(FetchRequest<ManagedObject>(entityName: "Employee", predicate: try predicate())).count
                    }
                    Bench.sink(Int64(found))
                }
                return [
                    .engine(format, model: model, store: store, operations: fetches) { try run($0, parsed) },
                    .engine(code, model: model, store: store, operations: fetches) { try run($0, built) },
                ]
            },
            judge: { m in
                guard let a = m.counters(format), let b = m.counters(code), let ratio = m.ratio(format, code), let formats = same.formats else {
                    return Verdict(held: nil, "not measured")
                }
                let held = formats.0 == formats.1 && a.statements == b.statements && a.rows == b.rows
                return Verdict(held: held, "the same predicate (\(formats.0 == formats.1 ? formats.0 : "\(formats.0) against \(formats.1)")): \(a.statements) statements and \(a.rows) rows either way; "
                               + "the format string takes \(BenchFormat.ratio(ratio)) the time of the predicate built in code")
            })
    }
}
