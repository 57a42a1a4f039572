import Faultline
import Foundation
import InMemoryTracing
import Tracing
import XCTest
@testable import FaultlineReport

/// The report's analyzers on spans, as an OpenTelemetry collector's file exporter writes them (OTLP JSON): the same
/// findings as the JSON Lines trace of the same run.
final class OTLPTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-otlp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    /// A run with a planted N+1 (each city's mayor faulted one by one), traced both ways at once: the JSON Lines
    /// trace and the spans, written as OTLP JSON in `lines` export requests.
    func plantedNPlusOne(cities: Int = 30, lines: Int = 2, service: String = "cities-api", pid: Int = 4242) throws -> (trace: String, otlp: String) {
        let model = try CityStore.model(indexedPopulation: false)
        let store = dir.appendingPathComponent("store-\(UUID().uuidString).sqlite")
        try CityStore.write(cities: cities, model: model, to: store)
        let trace = dir.appendingPathComponent("trace-\(UUID().uuidString).jsonl").path
        let tracer = InMemoryTracer()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(tracePath: trace),
                                                                                              recorders: [TracingProbeRecorder(tracer: tracer)]))
        try coordinator.addPersistentStore(at: store)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        tracer.withSpan("GET /cities", ofKind: .server) { _ in
            try? context.performAndWait {
                let request = FetchRequest<ManagedObject>(entityName: "City")
                request.returnsObjectsAsFaults = false
                for city in try context.fetch(request) { _ = (city.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
            }
        }
        coordinator.probes.flush()
        let otlp = dir.appendingPathComponent("spans-\(UUID().uuidString).json").path
        try OTLPExport.write(tracer.finishedSpans, lines: lines, resource: ["service.name": service, "host.name": "host-a", "process.pid": "\(pid)"], to: otlp)
        return (trace, otlp)
    }

    func testAnNPlusOneInSpansIsTheSameFindingAsInTheTrace() throws {
        let (trace, otlp) = try plantedNPlusOne()
        let fromTrace = Analyzers().findings(in: try TraceFile(path: trace))
        let spans = try TraceFile(path: otlp)
        XCTAssertEqual(spans.source, .otlp)
        XCTAssertEqual(spans.header["processes"], "cities-api@host-a/4242")
        let fromSpans = Analyzers().findings(in: spans)
        let a = try XCTUnwrap(fromTrace.first { $0.kind == .nPlusOne }, "\(fromTrace)")
        let b = try XCTUnwrap(fromSpans.first { $0.kind == .nPlusOne }, "\(fromSpans.map(\.evidence))")
        XCTAssertEqual(b.count, a.count)
        XCTAssertEqual(b.count, 30)
        XCTAssertEqual(b.callSite, a.callSite)
        XCTAssertTrue(b.callSite?.hasPrefix("FaultlineReportTests/OTLPTests.swift:") == true, b.callSite ?? "no call site")
        XCTAssertEqual(b.evidence.prefix(while: { $0 != ":" }), a.evidence.prefix(while: { $0 != ":" }))
        XCTAssertEqual(b.fix, a.fix)
        XCTAssertEqual(Set(fromSpans.map(\.kind)), Set(fromTrace.map(\.kind)), "the same kinds of finding both ways")
        // Every statement is a span, but a store's schema statements when it opens (not traced as spans).
        func statements(_ file: TraceFile) -> Int { file.events.filter { $0.kind == .statement && $0.purpose != "schema" }.count }
        XCTAssertEqual(statements(spans), statements(try TraceFile(path: trace)))
        XCTAssertGreaterThan(statements(spans), 30)
    }

    /// Spans as swift-otel's OTLP/HTTP exporter sent them (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) from
    /// Examples/HummingbirdOTel, two requests captured byte for byte: IDs in base64 (SwiftProtobuf's JSON, where a
    /// collector writes hex), enums as numbers, 64-bit integers as strings, no host or process attributes.
    func testSwiftOTelsOwnExportGivesTheExamplesFinding() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Inputs/swift-otel-departments.json").path
        let spans = try TraceFile(path: path)
        XCTAssertEqual(spans.source, .otlp)
        XCTAssertEqual(spans.events.filter { $0.kind == .statement }.count, 42)
        XCTAssertEqual(spans.events.filter { $0.kind == .cacheMiss }.count, 40, "\(Dictionary(grouping: spans.events, by: \.kind).mapValues(\.count))")
        XCTAssertEqual(spans.events.filter { $0.kind == .fetch }.count, 2)
        let findings = Analyzers().findings(in: spans)
        let storm = try XCTUnwrap(findings.first { $0.kind == .relationshipFaultStorm }, "\(findings.map(\.evidence))")
        XCTAssertEqual(storm.count, 40)
        XCTAssertEqual(storm.callSite, "HummingbirdOTel/main.swift:46", "the line that reads department.employees")
        XCTAssertTrue(storm.fix.contains("relationshipKeyPathsForPrefetching = [\"employees\"]"), storm.fix)

        // A collector whose pipelines share one file exporter writes logs and metrics among the spans, first too.
        let logs = #"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"departments"}}]},"scopeLogs":[{"scope":{"name":"swift-otel"},"logRecords":[{"timeUnixNano":"1795885740575598259","severityNumber":9,"body":{"stringValue":"Server started"}}]}]}]}"#
        let mixed = dir.appendingPathComponent("mixed.json").path, logsOnly = dir.appendingPathComponent("logs.json").path
        try (logs + "\n" + String(contentsOfFile: path, encoding: .utf8)).write(toFile: mixed, atomically: true, encoding: .utf8)
        try (logs + "\n").write(toFile: logsOnly, atomically: true, encoding: .utf8)
        let both = try TraceFile(path: mixed)
        XCTAssertEqual(both.source, .otlp)
        XCTAssertEqual(both.events.filter { $0.kind == .statement }.count, 42)
        let none = try TraceFile(path: logsOnly)
        XCTAssertEqual(none.events.count, 0)
        XCTAssertEqual(none.warnings, ["no spans: its export requests hold only logs or metrics"])
    }

    func testAFleetCountsTheProcessesThatShowedAProblem() throws {
        var fleet = FleetAnalysis(analyzers: Analyzers())
        let first = try plantedNPlusOne(service: "cities-api", pid: 1)
        let second = try plantedNPlusOne(service: "cities-api", pid: 2)
        for path in [first.otlp, second.otlp, first.trace] { fleet.add(path: path) }
        let broken = dir.appendingPathComponent("broken.json").path
        try Data(#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"fetch City","startTimeUnixNano":"later"}]}]}]}"#.utf8).write(to: URL(fileURLWithPath: broken))
        fleet.add(path: broken)
        XCTAssertEqual(fleet.files.count, 3)
        XCTAssertEqual(fleet.unreadable.map(\.path), [broken])
        XCTAssertTrue(fleet.unreadable[0].error.contains("broken.json:1:") && fleet.unreadable[0].error.contains("startTimeUnixNano"), fleet.unreadable[0].error)
        XCTAssertEqual(fleet.processes.count, 3, "\(fleet.processes)")
        let findings = fleet.input.findings.filter { $0.kind == .nPlusOne }
        XCTAssertEqual(findings.count, 1, "one finding per problem across the fleet: \(findings.map(\.evidence))")
        XCTAssertEqual(FleetAnalysis.processes(of: findings[0]).count, 3)
        XCTAssertEqual(findings[0].count, 90)
    }
}

/// Spans as OTLP JSON (the protobuf JSON mapping a collector's file exporter writes: one `ExportTraceServiceRequest`
/// a line; ids in hex, times as strings of Unix nanoseconds, 64-bit integers as strings).
enum OTLPExport {
    static func write(_ spans: [FinishedInMemorySpan], lines: Int, resource: [String: String], to path: String) throws {
        let resourceAttributes = resource.sorted { $0.key < $1.key }.map { ["key": $0.key, "value": ["stringValue": $0.value]] }
        let chunk = max(1, (spans.count + lines - 1) / max(lines, 1))
        var text = ""
        for start in stride(from: 0, to: spans.count, by: chunk) {
            let json: [String: Any] = ["resourceSpans": [[
                "resource": ["attributes": resourceAttributes],
                "scopeSpans": [["scope": ["name": "faultline"], "spans": spans[start..<min(start + chunk, spans.count)].map(span)]],
            ]]]
            text += String(decoding: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), as: UTF8.self) + "\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private static func span(_ span: FinishedInMemorySpan) -> [String: Any] {
        var object: [String: Any] = [
            "traceId": span.traceID, "spanId": span.spanID, "name": span.operationName, "kind": 3,
            "startTimeUnixNano": String(span.startInstant.nanosecondsSinceEpoch), "endTimeUnixNano": String(span.endInstant.nanosecondsSinceEpoch),
            "attributes": attributes(span.attributes),
            "events": span.events.map { ["name": $0.name, "timeUnixNano": String($0.nanosecondsSinceEpoch), "attributes": attributes($0.attributes)] as [String: Any] },
        ]
        if let parent = span.parentSpanID { object["parentSpanId"] = parent }
        if span.status?.code == .error { object["status"] = ["code": 2, "message": span.status?.message ?? ""] }
        return object
    }

    private static func attributes(_ attributes: SpanAttributes) -> [[String: Any]] {
        var list: [[String: Any]] = []
        attributes.forEach { key, attribute in list.append(["key": key, "value": value(attribute)]) }
        return list.sorted { ($0["key"] as? String ?? "") < ($1["key"] as? String ?? "") }
    }

    private static func value(_ attribute: SpanAttribute) -> [String: Any] {
        switch attribute {
        case .int32(let n): return ["intValue": String(n)]
        case .int64(let n): return ["intValue": String(n)]
        case .double(let d): return ["doubleValue": d]
        case .bool(let b): return ["boolValue": b]
        case .string(let s): return ["stringValue": s]
        case .stringArray(let items): return ["arrayValue": ["values": items.map { ["stringValue": $0] }]]
        default: return ["stringValue": "\(attribute)"]
        }
    }
}
