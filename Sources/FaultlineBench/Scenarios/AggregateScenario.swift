import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-AGG: average salary by employee type, in SQL versus in memory, with peers running the same SQL.
    static var aggregate: BenchScenario {
        BenchScenario(
            id: "aggregate", title: "Average salary by type: in SQL versus in memory, with peers",
            claim: "An aggregate computed by SQLite (a dictionary fetch with an expression, grouped) is much faster than loading every object and summing in memory.",
            theme: .fetchShape, sources: [ClaimSource.objcio("Accessing Data", "Fetch Requests", "P-72", "B-AGG")],
            ratios: [RatioSpec("engine, in memory", over: "engine, in SQL"),
                     RatioSpec("engine, in SQL", over: "raw SQLite"), RatioSpec("engine, in SQL", over: "GRDB")],
            variants: { setup in
                let model = try EmployeeWorkload.model()
                let store = try setup.data.employees(setup.scale.part(2, minimum: 1_000))
                let sql = "SELECT ZTYPE, AVG(ZSALARY) FROM ZEMPLOYEE GROUP BY ZTYPE"
                let path = store.path
                return [
                    .engine("engine, in SQL", model: model, store: store) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "Employee")
                        request.propertiesToFetch = [PropertyToFetch("type"), PropertyToFetch(.avg, "salary", as: "average")]
                        request.propertiesToGroupBy = ["type"]
                        let rows = try context.fetchDictionaries(request)
                        Bench.sink(Int64(rows.reduce(0.0) { $0 + (($1["average"] as? Double) ?? 0) }))
                    },
                    .engine("engine, in memory", model: model, store: store) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "Employee")
                        request.returnsObjectsAsFaults = false
                        var sums = [Double](repeating: 0, count: EmployeeWorkload.types), counts = [Int](repeating: 0, count: EmployeeWorkload.types)
                        for employee in try context.fetch(request) {
                            let type = Int(employee[EmployeeWorkload.type])
                            sums[type] += employee[EmployeeWorkload.salary]
                            counts[type] += 1
                        }
                        Bench.sink(Int64(zip(sums, counts).reduce(0.0) { $0 + ($1.1 > 0 ? $1.0 / Double($1.1) : 0) }))
                    },
                    .raw(path: path) { Bench.sink(Int64(try RawSQLite.aggregate($0, sql: sql).reduce(0.0) { $0 + $1.1 })) },
                    .grdb("GRDB", path: path) { Bench.sink(Int64(try GRDBPeer.aggregate($0, sql: sql).reduce(0.0) { $0 + $1.1 })) },
                ]
            },
            judge: { m in
                guard let ratio = m.ratio("engine, in memory", "engine, in SQL") else { return Verdict(held: nil, "not measured") }
                return Verdict(held: ratio >= 3, "in SQL \(BenchFormat.ratio(ratio)) faster than in memory; \(BenchFormat.ratio(m.ratio("engine, in SQL", "raw SQLite") ?? .nan)) raw SQLite")
            })
    }
}
