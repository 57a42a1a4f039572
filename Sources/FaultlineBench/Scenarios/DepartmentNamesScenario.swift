import Faultline
import Foundation

extension ScenarioCatalogue {
    /// Apple's guide's N+1: each employee's name and its department's name, naively, with prefetching, with batch
    /// faulting, and in one dictionary fetch across the relationship.
    static var departmentNames: BenchScenario {
        let plain = "N+1", prefetch = "prefetch department", batch = "batch faulting", join = "dictionary fetch (a join)"
        let six = " (the guide's six employees)"
        return BenchScenario(
            id: "department-names", title: "Employees' names and their departments' names: N+1, prefetching, batch faulting, a join",
            claim: "Printing six employees and their departments (Sales, Marketing, Engineering) takes four round trips naively — one fetch and a fault per department, the repeated ones served by uniquing — and two, the minimum, with prefetching or batch faulting; a dictionary fetch across the relationship takes one.",
            theme: .nPlusOne,
            sources: [.apple("Performance", "Decreasing Fault Overhead", "perf-9", "perf-10", "perf-11", "B1"), ClaimSource(.appleGuideClassic, "Technology Overview", "Employee and Department", keys: ["W-003-1"]),
                      ClaimSource(.studyNotes, "Advanced", "Batch faulting", keys: ["W-004-4"])],
            ratios: [RatioSpec(prefetch, over: plain), RatioSpec(batch, over: plain), RatioSpec(join, over: plain)],
            model: { try EmployeeWorkload.model() },
            variants: { setup in
                let model = try EmployeeWorkload.model()
                let golden = setup.folder.appendingPathComponent("department-names-six.sqlite")
                RowWorkload.removeStore(at: golden)
                try DepartmentNames.writeTheGuidesSix(model: model, to: golden)
                let employees = min(5_000, setup.scale.part(4, minimum: 300))
                let store = try setup.data.employees(employees)
                var variants: [BenchVariant] = []
                for (suffix, url, count) in [(six, golden, 6), ("", store, employees)] {
                    variants += [
                        .engine(plain + suffix, model: model, store: url, operations: count) { try DepartmentNames.print($0, limit: count) },
                        .engine(prefetch + suffix, model: model, store: url, operations: count) { try DepartmentNames.print($0, limit: count, prefetching: true) },
                        .engine(batch + suffix, model: model, store: url, operations: count) { try DepartmentNames.print($0, limit: count, batchFaulting: true) },
                        .engine(join + suffix, model: model, store: url, operations: count) { try DepartmentNames.printJoined($0, limit: count) },
                    ]
                }
                return variants
            },
            judge: { m in
                let names = [plain, prefetch, batch, join]
                let golden = names.compactMap { m.counters($0 + six)?.statements }
                let scaled = names.compactMap { m.counters($0)?.statements }
                guard golden.count == 4, scaled.count == 4, let prefetchTime = m.ratio(prefetch, plain), let batchTime = m.ratio(batch, plain),
                      let joinTime = m.ratio(join, plain) else { return Verdict(held: nil, "not measured") }
                // The claim is the round trips' (exact); the times say what they are worth on a local file.
                let held = golden == [4, 2, 2, 1] && scaled[1] == 2 && scaled[2] == 2 && scaled[3] == 1
                return Verdict(held: held, "six employees: \(golden[0]) round trips naively, \(golden[1]) prefetching, \(golden[2]) batch faulting, \(golden[3]) as a dictionary fetch; "
                               + "\(m[plain]?.operations ?? 0) employees: \(scaled[0]), \(scaled[1]), \(scaled[2]), \(scaled[3]) statements; "
                               + "time against N+1: prefetching \(BenchFormat.ratio(prefetchTime)), batch faulting \(BenchFormat.ratio(batchTime)), the join \(BenchFormat.ratio(joinTime)) "
                               + "(a round trip to a local file costs microseconds: the objects, not the faults, take the time)")
            })
    }
}

/// The workload of `department-names`.
enum DepartmentNames {
    /// The guide's example: Jack and Benjy and Gillian in Sales, Jill and Michelle in Marketing, Hector in Engineering.
    static func writeTheGuidesSix(model: ManagedObjectModel, to url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            var departments: [String: ManagedObject] = [:]
            for name in ["Sales", "Marketing", "Engineering"] {
                let department = ManagedObject(entity: model.entity(named: "Department")!, insertInto: context)
                department[EmployeeWorkload.departmentName] = name
                departments[name] = department
            }
            for (name, department) in [("Jack", "Sales"), ("Jill", "Marketing"), ("Benjy", "Sales"), ("Gillian", "Sales"), ("Hector", "Engineering"), ("Michelle", "Marketing")] {
                let employee = ManagedObject(entity: model.entity(named: "Employee")!, insertInto: context)
                employee[EmployeeWorkload.name] = name
                employee[EmployeeWorkload.department] = departments[department]
            }
            try context.save()
        }
    }

    /// Fetches the first `limit` employees (in key order) and reads each one's name and its department's name.
    static func print(_ context: ManagedObjectContext, limit: Int, prefetching: Bool = false, batchFaulting: Bool = false) throws {
        let request = FetchRequest<ManagedObject>(entityName: "Employee", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
        request.fetchLimit = limit
        if prefetching { request.relationshipKeyPathsForPrefetching = ["department"] }
        let employees = try context.fetch(request)
        if batchFaulting {
            // The guide's batch faulting: the departments' faults fulfilled with one fetch.
            try context.fulfillFaults(for: employees.compactMap { $0[EmployeeWorkload.department] })
        }
        var length = 0
        for employee in employees { length += employee[EmployeeWorkload.name].count + (employee[EmployeeWorkload.department]?[EmployeeWorkload.departmentName].count ?? 0) }
        Bench.sink(Int64(length))
    }

    /// The same names as dictionaries: one SELECT joining the department.
    static func printJoined(_ context: ManagedObjectContext, limit: Int) throws {
        let request = FetchRequest<ManagedObject>(entityName: "Employee", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
        request.fetchLimit = limit
        request.propertiesToFetch = [PropertyToFetch("name"), PropertyToFetch("department.name")]
        var length = 0
        for row in try context.fetchDictionaries(request) {
            length += (row["name"] as? String)?.count ?? 0
            length += (row["department.name"] as? String)?.count ?? 0
        }
        Bench.sink(Int64(length))
    }
}
