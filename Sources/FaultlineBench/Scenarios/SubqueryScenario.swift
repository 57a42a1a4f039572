import Faultline
import Foundation

extension ScenarioCatalogue {
    /// leiiwang's notes (004, perf-25): the departments with a top earner of the top type — one fetch with a SUBQUERY,
    /// or the employees fetched and their departments collected.
    static var subquery: BenchScenario {
        let subquery = "Department: SUBQUERY(employees, $e, …).@count > 0", collect = "Employee fetch, then each one's department"
        return BenchScenario(
            id: "subquery", title: "Departments with an employee matching two conditions: a SUBQUERY, or the employees fetched and their departments collected",
            claim: "A SUBQUERY puts a condition on the members of a to-many inside one fetch: the departments come back in one statement, where fetching the matching employees and collecting their departments costs a fault per department.",
            theme: .predicates,
            sources: [ClaimSource(.studyNotes, "Advanced", "Predicates", keys: ["perf-25"])],
            ratios: [RatioSpec(subquery, over: collect)],
            alternatesOrder: true,
            variants: { setup in
                let model = try EmployeeWorkload.model()
                let employees = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.employees(employees)
                // Type 7 earns about 96,000 ± 5,000: a few of them more than 99,000.
                let salary = 99_000.0, type = Int64(7)
                return [
                    .engine(subquery, model: model, store: store) { context in
                        let request = try Bench.request("Department", "SUBQUERY(employees, $e, $e.salary > %@ AND $e.type == %@).@count > 0", salary, type)
                        let names = Set(try context.fetch(request).map { $0[EmployeeWorkload.departmentName] })
                        Bench.sink(Int64(names.count))
                    },
                    .engine(collect, model: model, store: store) { context in
                        let matching = try context.fetch(try Bench.request("Employee", "salary > %@ AND type == %@", salary, type))
                        let names = Set(matching.compactMap { ($0.value(forKey: "department") as? ManagedObject)?[EmployeeWorkload.departmentName] })
                        Bench.sink(Int64(names.count))
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(subquery), let b = m.counters(collect), let ratio = m.ratio(subquery, collect) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.statements == 1 && b.statements > 1 && a.fetchedObjects == b.cacheMisses && ratio < 1,
                               "\(a.fetchedObjects) departments in \(a.statements) statement with the SUBQUERY; collected from \(b.fetchedObjects) employees, \(b.statements) statements (\(b.cacheMisses) department faults); the SUBQUERY takes \(BenchFormat.ratio(ratio)) the time")
            })
    }
}
