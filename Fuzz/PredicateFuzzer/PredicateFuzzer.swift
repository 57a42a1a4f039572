import Faultline
import Foundation
import FuzzSupport

/// The predicate parser, formatter, SQL compiler and in-memory evaluator on arbitrary text: a predicate that parses
/// must print a format that parses back to itself, and must fetch (or fail with an error) and evaluate in memory
/// without trapping.
enum PredicateFuzzer {
    static let context: ManagedObjectContext = {
        let model = try! ManagedObjectModel(jsonData: Data(FuzzTarget.companyModelJSON.utf8))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try! coordinator.addPersistentStore(at: FuzzTarget.scratchFolder("predicate").appendingPathComponent("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try! context.performAndWait {
            let department = try context.insertNewObject(forEntityName: "Department")
            try department.setValue("Sales", forKey: "name")
            let project = try context.insertNewObject(forEntityName: "Project")
            try project.setValue("Apollo", forKey: "title")
            var previous: ManagedObject?
            for i in 0..<4 {
                let employee = try context.insertNewObject(forEntityName: "Employee")
                try employee.setValue("E\(i) é", forKey: "name")
                try employee.setValue(Int64(i) * 1_000 - 1, forKey: "salary")
                try employee.setValue(Int16(20 + i), forKey: "age")
                try employee.setValue(Double(i) / 3, forKey: "rating")
                try employee.setValue(i % 2 == 0, forKey: "active")
                try employee.setValue(Date(timeIntervalSinceReferenceDate: Double(i) * 86_400), forKey: "hired")
                try employee.setValue(department, forKey: "department")
                try employee.setValue(i % 2 == 0 ? [project] : [], forKey: "projects")
                try employee.setValue(previous, forKey: "manager")
                previous = employee
            }
            try context.save()
        }
        return context
    }()

    static func run(_ data: Data) {
        guard let text = String(data: data, encoding: .utf8), text.utf8.count <= 4_096 else { return }
        _ = try? ObjectPredicate(parsing: text, argumentArray: ["name", 1, nil, "x", 2.5])
        guard let predicate = try? ObjectPredicate(unboundFormat: text) else { return }
        let canonical = predicate.predicateFormat
        let again: ObjectPredicate
        do {
            again = try ObjectPredicate(unboundFormat: canonical)
        } catch let error as ObjectPredicateError where error.kind == .limit {
            return // the canonical form's parentheses may take a predicate at the nesting limit just past it
        } catch {
            fatalError("the canonical form does not parse: \(text.debugDescription) → \(canonical.debugDescription): \(error)")
        }
        guard again == predicate else {
            fatalError("the canonical form parses to another predicate: \(text.debugDescription) → \(canonical.debugDescription)")
        }
        context.performAndWait {
            for entity in ["Employee", "Department", "Project"] {
                let request = FetchRequest<ManagedObject>(entityName: entity, predicate: predicate)
                _ = try? context.count(for: request)
                _ = try? context.fetch(request)
                for object in context.registeredObjects where object.entity.name == entity {
                    _ = try? predicate.matches(object)
                }
            }
        }
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicate(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    PredicateFuzzer.run(Data(bytes: bytes, count: count))
    return 0
}
#else
@main struct PredicateReplay {
    static func main() { FuzzTarget.replay(Array(CommandLine.arguments.dropFirst()), PredicateFuzzer.run) }
}
#endif
