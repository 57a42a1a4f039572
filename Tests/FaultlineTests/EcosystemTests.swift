import Foundation
import InMemoryTracing
import Logging
import MetricsTestKit
import Synchronization
import Tracing
import XCTest
@testable import Faultline

/// The probes through swift-distributed-tracing, swift-metrics and swift-log, with the packages' own test backends.
final class EcosystemTests: XCTestCase {
    /// An in-memory container with Dogs and their Walks, traced by `recorders`.
    private func kennel(_ recorders: [ProbeRecorder], dogs: Int = 3, walks: Int = 2) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: Probes(recorders: recorders))
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<dogs {
                let dog = try context.insertNewObject(forEntityName: "Dog")
                try dog.setValue("dog \(i)", forKey: "name")
                for _ in 0..<walks { try dog.addObject(try context.insertNewObject(forEntityName: "Walk"), toRelationship: "walks") }
            }
            try context.save()
        }
        return container
    }

    private func spans(_ tracer: InMemoryTracer, named name: String) -> [FinishedInMemorySpan] {
        tracer.finishedSpans.filter { $0.operationName == name }
    }

    func testAFetchInsideARequestSpanIsItsChildWithItsStatements() async throws {
        let tracer = InMemoryTracer()
        let container = try kennel([TracingProbeRecorder(tracer: tracer)])
        let saves = spans(tracer, named: "save")
        XCTAssertEqual(saves.count, 1)
        XCTAssertEqual(saves.first?.attributes["faultline.inserted"]?.toSpanAttribute(), .int64(9))
        tracer.clearFinishedSpans()

        let context = container.newBackgroundContext()
        let names = try await tracer.withSpan("GET /dogs", ofKind: .server) { _ in
            try await context.perform {
                let request = FetchRequest<ManagedObject>(entityName: "Dog")
                request.predicate = try ObjectPredicate(parsing: "name CONTAINS %@", "og")
                return try context.fetch(request).map { $0.value(forKey: "name") as? String ?? "" }
            }
        }
        XCTAssertEqual(names.count, 3)
        let request = try XCTUnwrap(spans(tracer, named: "GET /dogs").first)
        let fetch = try XCTUnwrap(spans(tracer, named: "fetch Dog").first, "\(tracer.finishedSpans.map(\.operationName))")
        XCTAssertEqual(fetch.traceID, request.traceID, "the fetch is in the request's trace")
        XCTAssertEqual(fetch.parentSpanID, request.spanID, "the fetch is the request's child")
        XCTAssertEqual(fetch.attributes["faultline.entity"]?.toSpanAttribute(), "Dog")
        XCTAssertEqual(fetch.attributes["faultline.rows"]?.toSpanAttribute(), .int64(3))
        XCTAssertEqual(fetch.attributes["faultline.statements"]?.toSpanAttribute(), .int64(1))
        XCTAssertEqual(fetch.attributes["faultline.predicate"]?.toSpanAttribute(), #"name CONTAINS "og""#)
        XCTAssertTrue(fetch.attributes["code.filepath"].map { "\($0)".contains("EcosystemTests.swift") } ?? false)
        let select = try XCTUnwrap(tracer.finishedSpans.first { $0.parentSpanID == fetch.spanID }, "a statement child span")
        XCTAssertEqual(select.operationName, "SELECT")
        XCTAssertEqual(select.attributes["db.system.name"]?.toSpanAttribute(), "sqlite")
        XCTAssertTrue(select.attributes["db.query.text"].map { "\($0)".contains("FROM ZDOG") } ?? false)
        XCTAssertEqual(select.attributes["faultline.plan"]?.toSpanAttribute(), "full scan", "CONTAINS reads every row")
        XCTAssertLessThanOrEqual(fetch.startInstant.nanosecondsSinceEpoch, select.startInstant.nanosecondsSinceEpoch)
        XCTAssertLessThanOrEqual(select.endInstant.nanosecondsSinceEpoch, fetch.endInstant.nanosecondsSinceEpoch)
        XCTAssertLessThanOrEqual(request.startInstant.nanosecondsSinceEpoch, fetch.startInstant.nanosecondsSinceEpoch)
    }

    func testFaultsAreEventsOnTheirOperationOrSpansOfTheirOwn() async throws {
        let tracer = InMemoryTracer()
        let container = try kennel([TracingProbeRecorder(tracer: tracer)], dogs: 2, walks: 3)
        tracer.clearFinishedSpans()
        let context = container.newBackgroundContext()
        // Blocking performAndWait from a task carries the request's context too.
        let walks = try await tracer.withSpan("GET /walks") { _ in
            try context.performAndWait {
                let dogs = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
                return dogs.map { ($0.value(forKey: "walks") as? [ManagedObject] ?? []).count }
            }
        }
        XCTAssertEqual(walks, [3, 3])
        let request = try XCTUnwrap(spans(tracer, named: "GET /walks").first)
        let faults = spans(tracer, named: "fault Dog.walks")
        XCTAssertEqual(faults.count, 2, "\(tracer.finishedSpans.map(\.operationName))")
        XCTAssertTrue(faults.allSatisfy { $0.parentSpanID == request.spanID && $0.traceID == request.traceID })
        XCTAssertEqual(faults.first?.attributes["faultline.count"]?.toSpanAttribute(), .int64(3))
        XCTAssertEqual(faults.first?.attributes["faultline.source"]?.toSpanAttribute(), "database")
        // The call site is the caller's line, not a frame of the tracing package that carried the request's context.
        XCTAssertEqual(faults.first?.attributes["code.filepath"]?.toSpanAttribute(), "FaultlineTests/EcosystemTests.swift")

        // A fault fired inside an operation (a custom class's `awakeFromFetch` touching another object, a
        // validation reading a relationship) is an event on the operation's span, counted in `faultline.faults`.
        let id = try context.performAndWait { try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "Dog"))[0] }
        tracer.clearFinishedSpans()
        let recorder = try XCTUnwrap(container.persistentStoreCoordinator.probes.recorders.first as? TracingProbeRecorder)
        try await tracer.withSpan("GET /dog") { _ in
            recorder.begin(.fetch)
            recorder.record(.fault(FaultEvent(kind: .object, objectID: id, relationship: nil, source: .rowCache, count: nil, duration: 0.000_01,
                                              values: nil, batch: nil, stack: nil, context: 1)), at: ProbeClock.now())
            recorder.record(.fetch(FetchEvent(entity: "Dog", predicate: nil, sort: [], limit: 0, offset: 0, batchSize: 0, prefetch: [],
                                              resultType: .objects, statements: 1, rows: 2, results: 2, registered: 0, sqlTime: 0, totalTime: 0.001,
                                              callSite: nil, values: nil, context: 1)), at: ProbeClock.now())
            recorder.end()
        }
        let fetch = try XCTUnwrap(spans(tracer, named: "fetch Dog").first)
        XCTAssertEqual(fetch.events.map(\.name), ["fault Dog"])
        XCTAssertEqual(fetch.events.first?.attributes["faultline.source"]?.toSpanAttribute(), "rowCache")
        XCTAssertEqual(fetch.attributes["faultline.faults"]?.toSpanAttribute(), .int64(1))
        XCTAssertNil(fetch.status)
        XCTAssertEqual(tracer.finishedSpans.count, 2, "the request and the fetch: the fault is no span of its own")
    }

    /// A fault inside `performBackgroundTask`'s body, awaited from a request's span: its call site is the body's line
    /// (a deep stack: the context's queue, the request's context carried through the tracing package's task local).
    func testAFaultsCallSiteInAnAwaitedBackgroundTaskIsTheCallersLine() async throws {
        let tracer = InMemoryTracer()
        let container = try kennel([TracingProbeRecorder(tracer: tracer)], dogs: 2, walks: 2)
        tracer.clearFinishedSpans()
        let line = #line + 3
        let walks = try await tracer.withSpan("GET /walks") { _ in
            try await container.performBackgroundTask { context in
                try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).map { ($0.value(forKey: "walks") as? [ManagedObject] ?? []).count }
            }
        }
        XCTAssertEqual(walks, [2, 2])
        let faults = spans(tracer, named: "fault Dog.walks")
        XCTAssertEqual(faults.count, 2)
        for fault in faults {
            XCTAssertEqual(fault.attributes["code.filepath"]?.toSpanAttribute(), "FaultlineTests/EcosystemTests.swift")
            XCTAssertEqual(fault.attributes["code.lineno"]?.toSpanAttribute(), .int64(Int64(line)))
        }
    }

    func testAFailedSaveAndAFailedFetchAreErrorSpans() throws {
        let tracer = InMemoryTracer()
        let container = try kennel([TracingProbeRecorder(tracer: tracer)], dogs: 1, walks: 0)
        tracer.clearFinishedSpans()
        let context = container.newBackgroundContext()
        XCTAssertThrowsError(try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog", predicate: try ObjectPredicate(parsing: "colour == %@", "red")))
        })
        XCTAssertThrowsError(try context.performAndWait {
            _ = try context.insertNewObject(forEntityName: "Person")   // `name` is required
            try context.save()
        })
        let statuses = tracer.finishedSpans.filter { $0.operationName == "fetch" || $0.operationName == "save" }.map { "\($0.operationName): \($0.status?.code == .error)" }
        XCTAssertEqual(statuses, ["fetch: true", "save: true"], "\(tracer.finishedSpans.map(\.operationName))")
    }

    func testMetricsCountFetchesStatementsFaultsAndSaves() throws {
        let metrics = TestMetrics()
        let container = try kennel([MetricsProbeRecorder(factory: metrics)], dogs: 2, walks: 1)
        let context = container.newBackgroundContext()
        context.name = "api"
        func statementsCounted() -> Int { Int(metrics.counters.filter { $0.label == "faultline_statements" }.reduce(Int64(0)) { $0 + $1.totalValue }) }
        let (countedBefore, executedBefore) = (statementsCounted(), container.persistentStoreCoordinator.statistics.statementsExecuted)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog")
            request.returnsObjectsAsFaults = true
            let dogs = try context.fetch(request)
            for dog in dogs { _ = dog.value(forKey: "name") }       // two row-cache faults
            _ = dogs[0].value(forKey: "walks")                       // one relationship fault from the store
            try dogs[0].setValue("Rex", forKey: "name")
            try context.save()
        }
        XCTAssertEqual(try metrics.expectCounter("faultline_fetches", [("entity", "Dog"), ("result", "faults"), ("context", "api")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectTimer("faultline_fetch_duration", [("entity", "Dog"), ("context", "api")]).values.count, 1)
        XCTAssertEqual(try metrics.expectCounter("faultline_fetched_rows", [("entity", "Dog")]).totalValue, 2)
        XCTAssertEqual(try metrics.expectCounter("faultline_row_cache_hits", [("entity", "Dog")]).totalValue, 2)
        XCTAssertEqual(try metrics.expectCounter("faultline_faults", [("entity", "Dog"), ("kind", "relationship"), ("source", "database")]).totalValue, 1)
        XCTAssertEqual(try metrics.expectCounter("faultline_saves", [("outcome", "saved"), ("context", "api")]).totalValue, 1)
        // The setup's save came from an unnamed context.
        XCTAssertEqual(try metrics.expectCounter("faultline_saves", [("outcome", "saved"), ("context", "unnamed")]).totalValue, 1)
        XCTAssertEqual(statementsCounted() - countedBefore, container.persistentStoreCoordinator.statistics.statementsExecuted - executedBefore,
                       "every statement counted once")
    }

    func testLogLinesAreCoreDatasWithMetadata() throws {
        let lines = RecordedLog()
        let logger = Logger(label: "faultline.sql") { _ in lines.handler() }
        let container = try kennel([LoggingProbeRecorder(logger: logger, level: 2)], dogs: 1, walks: 0)
        lines.clear()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog", predicate: try ObjectPredicate(parsing: "name == %@", "dog 0"))
            _ = try context.fetch(request)
        }
        let recorded = lines.entries
        let sql = try XCTUnwrap(recorded.first { $0.metadata["faultline.category"] == "sql" })
        XCTAssertTrue(sql.message.hasPrefix("SELECT"), sql.message)
        XCTAssertEqual(sql.metadata["faultline.purpose"], "fetch")
        XCTAssertEqual(sql.metadata["faultline.plan"], "no scan", "name is indexed")
        XCTAssertEqual(sql.level, .debug)
        XCTAssertTrue(recorded.contains { $0.message == #"SQLite bind[0] = "dog 0""# }, "level 2: bind values \(recorded.map(\.message))")
        let total = try XCTUnwrap(recorded.first { $0.message.hasPrefix("total fetch execution time:") })
        XCTAssertEqual(total.metadata["faultline.entity"], "Dog")
        XCTAssertEqual(total.metadata["faultline.rows"], "1")
        XCTAssertNotNil(total.metadata["faultline.duration"])
        // A logger above debug gets nothing, and the engine formats nothing for it.
        let quiet = RecordedLog()
        var info = Logger(label: "faultline.sql") { _ in quiet.handler() }
        info.logLevel = .info
        let quietContainer = try kennel([LoggingProbeRecorder(logger: info)], dogs: 1, walks: 0)
        XCTAssertEqual(quietContainer.persistentStoreCoordinator.storeType, .inMemory)
        XCTAssertTrue(quiet.entries.isEmpty)
    }

    func testOffCostsNothingAndCarriesNoContext() throws {
        XCTAssertFalse(Probes.disabled.tracesOperations)
        XCTAssertFalse(Probes(recorders: [MetricsProbeRecorder(factory: TestMetrics())]).tracesOperations)
        XCTAssertTrue(Probes(recorders: [TracingProbeRecorder(tracer: InMemoryTracer())]).tracesOperations)
    }
}

/// A swift-log handler keeping every entry, shared by the loggers it makes.
final class RecordedLog: @unchecked Sendable {
    struct Entry {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }
    private let lock = NSLock()
    private var stored: [Entry] = []

    var entries: [Entry] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    func clear() {
        lock.lock()
        stored.removeAll()
        lock.unlock()
    }
    func append(_ entry: Entry) {
        lock.lock()
        stored.append(entry)
        lock.unlock()
    }

    func handler() -> some LogHandler { Handler(log: self) }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
