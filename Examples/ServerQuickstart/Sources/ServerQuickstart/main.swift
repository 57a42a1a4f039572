import Faultline
import Foundation
import InMemoryTracing
import Tracing

// The tracer a server would bootstrap (swift-otel's, in production); an in-memory one here, to look at the spans.
let tracer = InMemoryTracer()
InstrumentationSystem.bootstrap(tracer)

let model = try ManagedObjectModel(entities: [
    EntityDescription(name: "Department", properties: [
        AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
    ]),
])
// No probes wired: the container's coordinator follows the tracer bootstrapped above (Probes.shared).
let container = PersistentContainer(name: "Company", managedObjectModel: model)
let description = PersistentStoreDescription()
description.type = .inMemory
container.persistentStoreDescriptions = [description]
try container.loadPersistentStores()

// A background context inserts and saves.
try await container.performBackgroundTask { context in
    for name in ["Sales", "Research", "Support"] {
        try context.insertNewObject(forEntityName: "Department").setValue(name, forKey: "name")
    }
    try context.save()
}

// Eight tasks, each awaiting `perform` on a background context of its own.
let counts = try await withThrowingTaskGroup(of: Int.self) { group in
    for _ in 0..<8 {
        group.addTask {
            let context = container.newBackgroundContext()
            return try await context.perform { try context.count(for: FetchRequest<ManagedObject>(entityName: "Department")) }
        }
    }
    var counts: [Int] = []
    for try await count in group { counts.append(count) }
    return counts
}

// A fetch inside the request that caused it.
let names = try await withSpan("GET /departments", ofKind: .server) { _ in
    try await container.performBackgroundTask { context in
        try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")).map { $0.value(forKey: "name") as? String ?? "" }
    }
}

let spans = tracer.finishedSpans
guard counts == Array(repeating: 3, count: 8), names.sorted() == ["Research", "Sales", "Support"],
      let request = spans.first(where: { $0.operationName == "GET /departments" }),
      let fetch = spans.first(where: { $0.operationName == "fetch Department" && $0.traceID == request.traceID }),
      fetch.parentSpanID == request.spanID,
      let select = spans.first(where: { $0.parentSpanID == fetch.spanID && $0.operationName == "SELECT" }) else {
    print("FAILED: counts \(counts), names \(names), spans \(spans.map(\.operationName))")
    exit(1)
}
print("8 tasks counted \(counts[0]) departments each; fetched \(names.sorted().joined(separator: ", "))")
let rows: String
if case .int64(let n)? = fetch.attributes["faultline.rows"]?.toSpanAttribute() { rows = "\(n)" } else { rows = "?" }
print("trace \(request.traceID): \(request.operationName) → \(fetch.operationName) (\(rows) rows) → \(select.operationName)")
