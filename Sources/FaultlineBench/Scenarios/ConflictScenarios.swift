import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B6: deleting a department of K employees under each delete rule.
    static var deleteRules: BenchScenario {
        let rules: [DeleteRule] = [.cascade, .nullify, .deny]
        func name(_ rule: DeleteRule) -> String { "\(rule.rawValue)" }
        final class Outcomes: @unchecked Sendable { var failed: [String: Bool] = [:]; var employeesLeft: [String: Int] = [:] }
        let outcomes = Outcomes()
        return BenchScenario(
            id: "delete-rules", title: "Deleting departments of K employees: cascade, nullify, deny",
            claim: "Delete rules cost in proportion to what they touch: cascade deletes every employee's row, nullify updates every employee's row, deny refuses the save and writes nothing.",
            theme: .conflicts,
            sources: [.apple("Creating Managed Object Relationships", "Relationship Delete Rules", "B6"),
                      ClaimSource(.studyNotes, "Understanding", "Relationships", keys: ["W-004-8"])],
            ratios: [RatioSpec(name(.cascade), over: name(.nullify))],
            variants: { setup in
                let departments = 10, perDepartment = setup.scale.part(200, minimum: 20)
                return try rules.map { rule in
                    let model = try ManagedObjectModel(entities: [
                        EntityDescription(name: "Department", properties: [AttributeDescription(name: "name", type: .string),
                                                                            RelationshipDescription(name: "employees", destination: "Employee", inverse: "department", isToMany: true, deleteRule: rule)]),
                        EntityDescription(name: "Employee", properties: [AttributeDescription(name: "name", type: .string),
                                                                          RelationshipDescription(name: "department", destination: "Department", inverse: "employees")]),
                    ])
                    let template = try ScenarioStore.make(setup.folder, "delete-rules-\(rule.rawValue)", model: model) { context in
                        for d in 0..<departments {
                            let department = ManagedObject(entity: model.entity(named: "Department")!, insertInto: context)
                            try department.setValue("department \(d)", forKey: "name")
                            for e in 0..<perDepartment {
                                let employee = ManagedObject(entity: model.entity(named: "Employee")!, insertInto: context)
                                try employee.setValue("employee \(d).\(e)", forKey: "name")
                                try employee.setValue(department, forKey: "department")
                            }
                        }
                    }
                    let url = setup.folder.appendingPathComponent("delete-rules-\(rule.rawValue)-run.sqlite")
                    return BenchVariant(name(rule), operations: departments) { probes in
                        let coordinator = try ScenarioStore.open(url, from: template, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let doomed = try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")) }
                        return {
                            try context.performAndWait {
                                for department in doomed { context.delete(department) }
                                do {
                                    try context.save()
                                    outcomes.failed[name(rule)] = false
                                } catch {
                                    outcomes.failed[name(rule)] = true
                                    context.rollback()
                                }
                                outcomes.employeesLeft[name(rule)] = try context.count(for: FetchRequest<ManagedObject>(entityName: "Employee"))
                            }
                        }
                    }
                }
            },
            judge: { m in
                let counts = rules.compactMap { m.counters(name($0))?.statements }
                guard counts.count == 3, let ratio = m.ratio(name(.cascade), name(.nullify)),
                      let denied = outcomes.failed[name(.deny)], let cascaded = outcomes.employeesLeft[name(.cascade)],
                      let nullified = outcomes.employeesLeft[name(.nullify)] else { return Verdict(held: nil, "not measured") }
                let held = denied && cascaded == 0 && nullified > 0 && counts[2] < counts[1] && counts[2] < counts[0]
                return Verdict(held: held, "statements: cascade \(counts[0]) (\(cascaded) employees left), nullify \(counts[1]) (\(nullified) left), deny \(counts[2]) (\(denied ? "the save refused" : "saved")); cascade takes \(BenchFormat.ratio(ratio)) nullify's time")
            })
    }

    /// B10: two contexts change the same rows (one the salary, the other the name); the second saves under each
    /// merge policy.
    static var mergePolicies: BenchScenario {
        let policies: [(String, MergePolicy)] = [("error", .error), ("mergeByPropertyStoreTrump", .mergeByPropertyStoreTrump),
                                                  ("mergeByPropertyObjectTrump", .mergeByPropertyObjectTrump), ("overwrite", .overwrite), ("rollback", .rollback)]
        final class Outcomes: @unchecked Sendable { var rows: [String: (name: String, salary: Int64, failed: Bool)] = [:] }
        let outcomes = Outcomes()
        return BenchScenario(
            id: "merge-policies", title: "A save that conflicts on every row it changed, under each merge policy",
            claim: "The merge policies resolve one conflict differently — error refuses the save, the property-by-property policies keep both contexts' changes, overwrite writes the saving context's whole snapshot, rollback keeps the store's — each at a cost per conflicting object.",
            theme: .conflicts,
            sources: [.apple("Change Management", "Choosing a Merge Policy", "B10"), ClaimSource(.studyNotes, "Advanced", "Conflicts", keys: ["W-004-13"])],
            ratios: [],
            variants: { setup in
                let rows = setup.scale.part(100, minimum: 50)
                let model = try ManagedObjectModel(entities: [EntityDescription(name: "Employee", properties: [
                    AttributeDescription(name: "name", type: .string), AttributeDescription(name: "salary", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                ])])
                let template = try ScenarioStore.make(setup.folder, "merge-policies", model: model) { context in
                    for i in 0..<rows {
                        let employee = ManagedObject(entity: model.entity(named: "Employee")!, insertInto: context)
                        try employee.setValue("Lau \(i)", forKey: "name")
                        try employee.setValue(Int64(1_000), forKey: "salary")
                    }
                }
                return policies.map { policyName, policy in
                    let url = setup.folder.appendingPathComponent("merge-policies-\(policyName).sqlite")
                    return BenchVariant(policyName, operations: rows) { probes in
                        let coordinator = try ScenarioStore.open(url, from: template, model: model, probes: probes)
                        let first = ManagedObjectContext(.privateQueue, coordinator: coordinator), second = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let all = FetchRequest<ManagedObject>(entityName: "Employee", sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
                        let mine = try second.performAndWait { () -> [ManagedObject] in
                            second.mergePolicy = policy
                            let request = all.copy()
                            request.returnsObjectsAsFaults = false
                            return try second.fetch(request)
                        }
                        // The first context changes every salary and saves: each of the second's objects is now stale.
                        try first.performAndWait {
                            for employee in try first.fetch(all) { try employee.setValue(Int64(2_000), forKey: "salary") }
                            try first.save()
                        }
                        return {
                            try second.performAndWait {
                                for employee in mine { try employee.setValue("Weiss", forKey: "name") }
                                var failed = false
                                do { try second.save() } catch { failed = true; second.rollback() }
                                let check = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                                let row = try check.performAndWait { try check.fetch(all).first }
                                outcomes.rows[policyName] = (row?.value(forKey: "name") as? String ?? "?", row?.value(forKey: "salary") as? Int64 ?? -1, failed)
                            }
                        }
                    }
                }
            },
            judge: { m in
                let expected: [String: (name: String, salary: Int64, failed: Bool)] = [
                    "error": ("Lau 0", 2_000, true), "mergeByPropertyStoreTrump": ("Weiss", 2_000, false), "mergeByPropertyObjectTrump": ("Weiss", 2_000, false),
                    "overwrite": ("Weiss", 1_000, false), "rollback": ("Lau 0", 2_000, false),
                ]
                var parts: [String] = [], held = true
                for (policyName, _) in policies {
                    guard let row = outcomes.rows[policyName], let time = m.median(policyName), let counters = m.counters(policyName) else { return Verdict(held: nil, "not measured") }
                    let want = expected[policyName]!
                    if row.name != want.name || row.salary != want.salary || row.failed != want.failed { held = false }
                    parts.append("\(policyName): \(row.failed ? "refused" : "saved") → \(row.name), \(row.salary) (\(counters.statements) statements, \(BenchFormat.seconds(time)) a row)")
                }
                return Verdict(held: held, parts.joined(separator: "; "))
            })
    }
}
