import Faultline
import Foundation

/// Apple's Employee/Department example (seed 000) with the seed's salary-by-type aggregate (seed 001 L2000–L2030):
/// departments of about 50 employees; each employee has a `type` (0–7), a salary drawn around its type's mean,
/// and a department (to-one, inverse `employees`).
public enum EmployeeWorkload {
    public static let name = Attribute<String>("name")
    public static let type = Attribute<Int16>("type")
    public static let salary = Attribute<Double>("salary")
    public static let department = ToOne<ManagedObject>("department")
    public static let employees = ToMany<ManagedObject>("employees")
    public static let departmentName = Attribute<String>("name")

    public static let employeesPerDepartment = 50
    public static let types = 8

    /// `indexedSalary`: `salary` indexed (the predicate-order scenario's variant).
    public static func model(indexedSalary: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Department", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                RelationshipDescription(name: "employees", destination: "Employee", inverse: "department", isToMany: true),
            ]),
            EntityDescription(name: "Employee", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                AttributeDescription(name: "type", type: .integer16, isOptional: false, defaultValue: Int16(0)),
                AttributeDescription(name: "salary", type: .double, isOptional: false, defaultValue: 0.0, isIndexed: indexedSalary),
                RelationshipDescription(name: "department", destination: "Department", inverse: "employees"),
            ]),
        ])
    }

    public static func generate(employees: Int, into url: URL, seed: UInt64 = 2_000, indexedSalary: Bool = false) throws {
        let model = try model(indexedSalary: indexedSalary)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        var random = SeededGenerator(seed: seed)
        try context.performAndWait {
            let departmentEntity = model.entity(named: "Department")!, employeeEntity = model.entity(named: "Employee")!
            var current: ManagedObject?
            for i in 0..<employees {
                if i % employeesPerDepartment == 0 {
                    if i % 10_000 == 0 && i > 0 { try context.save(); context.reset() }
                    let department = ManagedObject(entity: departmentEntity, insertInto: context)
                    department[departmentName] = "Department \(i / employeesPerDepartment)"
                    current = department
                }
                let employee = ManagedObject(entity: employeeEntity, insertInto: context)
                let kind = Int16(Int.random(in: 0..<types, using: &random))
                employee[name] = "Employee \(i)"
                employee[type] = kind
                employee[salary] = (40_000 + Double(kind) * 8_000 + Double.random(in: -5_000...5_000, using: &random)).rounded()
                employee[department] = current
            }
            try context.save()
        }
    }
}
