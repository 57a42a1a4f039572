import Faultline
import Hummingbird
import OTel

// swift-otel's backends for swift-log, swift-metrics and swift-distributed-tracing, configured by the standard
// OTEL_* environment variables (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_ENDPOINT…).
let observability = try OTel.bootstrap()

let model = try ManagedObjectModel(entities: [
    EntityDescription(name: "Department", properties: [
        AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
        RelationshipDescription(name: "employees", destination: "Employee", inverse: "department", isToMany: true),
    ]),
    EntityDescription(name: "Employee", properties: [
        AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
        RelationshipDescription(name: "department", destination: "Department", inverse: "employees"),
    ]),
])
// Every fetch, save and statement a span in the request's trace; counters and timers; the SQL debug lines as logs.
let probes = Probes(recorders: [TracingProbeRecorder(), MetricsProbeRecorder(), LoggingProbeRecorder()])
let container = PersistentContainer(name: "Company", managedObjectModel: model, probes: probes)
container.persistentStoreDescriptions[0].type = .inMemory
try container.loadPersistentStores()
try await container.performBackgroundTask { context in
    for d in 0..<20 {
        let department = try context.insertNewObject(forEntityName: "Department")
        try department.setValue("Department \(d)", forKey: "name")
        for e in 0..<10 {
            let employee = try context.insertNewObject(forEntityName: "Employee")
            try employee.setValue("Employee \(d)-\(e)", forKey: "name")
            try employee.setValue(department, forKey: "department")
        }
    }
    try context.save()
}

let router = Router()
router.middlewares.add(TracingMiddleware())
router.middlewares.add(MetricsMiddleware())
router.middlewares.add(LogRequestsMiddleware(.info))
// A planted N+1: each department's employees are faulted one relationship at a time. `faultline report` on the
// collector's spans finds it, as it would in a trace.
router.get("departments") { _, _ -> String in
    try await container.performBackgroundTask { context in
        try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")).map { department in
            "\(department.value(forKey: "name") as? String ?? ""): \((department.value(forKey: "employees") as? [ManagedObject])?.count ?? 0)"
        }.joined(separator: "\n") + "\n"
    }
}
var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
app.addServices(observability)
try await app.runService()
