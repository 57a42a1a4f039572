import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B2: the same two clauses in either order — a cheap, restrictive comparison and a case-insensitive text match.
    static var predicateOrder: BenchScenario {
        let cheapFirst = "salary > %@ AND name LIKE[c] %@", textFirst = "name LIKE[c] %@ AND salary > %@"
        return BenchScenario(
            id: "predicate-order", title: "Clause order: a restrictive number comparison before or after a case-insensitive text match",
            claim: "Put the most restrictive, cheapest clause first, above all before text matching: SQLite evaluates the clauses in order and skips the rest of a row once one fails, so the text match runs on far fewer rows.",
            theme: .predicates,
            sources: [.apple("Performance", "Fetch Predicates", "perf-5", "B2"), ClaimSource(.studyNotes, "Advanced", "Predicates", keys: ["W-004-2", "K1"])],
            ratios: [RatioSpec(cheapFirst, over: textFirst)],
            alternatesOrder: true,
            variants: { setup in
                let model = try EmployeeWorkload.model()
                let employees = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.employees(employees)
                // About 1% earn more than 98,000 (the top type's salaries reach 101,000).
                let salary = 98_000.0, pattern = "*EMPLOYEE 1*"
                return [
                    .engine(cheapFirst, model: model, store: store) { context in
                        Bench.sink(Int64(try context.fetch(try Bench.request("Employee", cheapFirst, salary, pattern)).count))
                    },
                    .engine(textFirst, model: model, store: store) { context in
                        Bench.sink(Int64(try context.fetch(try Bench.request("Employee", textFirst, pattern, salary)).count))
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(cheapFirst), let b = m.counters(textFirst), let ratio = m.ratio(cheapFirst, textFirst) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.rows == b.rows && ratio <= 0.95,
                               "both return \(a.rows) rows in \(a.statements) statement, scanning every employee; the number first takes \(BenchFormat.ratio(ratio)) the time of the text first")
            })
    }
}

extension ScenarioCatalogue {
    /// perf-24: an unselective range on an indexed attribute, through the index or with `noindex:` ruling it out.
    static var noIndex: BenchScenario {
        let indexed = "population > %@ (through the index)", ruledOut = "noindex:(population) > %@ (a scan)"
        return BenchScenario(
            id: "noindex", title: "A range that matches most cities, through the population index or with noindex:",
            claim: "SQLite uses a limited number of indexes per query and may pick one that does not help; noindex: in the predicate rules an index out — for a range that matches most rows, a plain scan beats walking the index.",
            theme: .predicates,
            sources: [.apple("Persistent Store Types and Behaviors", nil, "perf-24")],
            ratios: [RatioSpec(ruledOut, over: indexed)],
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let cities = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.cities(cities, indexedPopulation: true, residents: false)
                // Nearly every city has more than 100 inhabitants.
                return [(indexed, "population > %@"), (ruledOut, "noindex:(population) > %@")].map { name, format in
                    .engine(name, model: model, store: store, operations: cities) { context in
                        Bench.sink(Int64(try context.count(for: try Bench.request("City", format, Int64(100)))))
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(indexed), let b = m.counters(ruledOut), let ratio = m.ratio(ruledOut, indexed) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.fullScanStatements == 0 && b.fullScanStatements == 1 && ratio < 1,
                               "through the index: \(a.fullScanStatements) scans; with noindex: \(b.fullScanStatements) scan, \(BenchFormat.ratio(ratio)) the time of the index walk")
            })
    }
}
