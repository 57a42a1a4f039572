import Foundation
import InMemoryTracing
import Tracing
import XCTest
@testable import Faultline

/// Spans without wiring: the process's probes follow a tracer the program bootstrapped, as server libraries do;
/// without one (the no-op tracer) they stay off, and `FAULTLINE_TRACING=0` turns the following off. (The process's
/// own `Probes.shared` is made once; these tests make the same probes from a given tracer.)
final class BootstrappedTracerTests: XCTestCase {
    func testTheProcessProbesFollowABootstrappedTracer() async throws {
        let tracer = InMemoryTracer()
        let probes = Probes.forProcess(configuration: ProbeConfiguration(environment: [:], arguments: []), tracer: tracer)
        XCTAssertTrue(probes.isEnabled)
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: probes)
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        let count = try await tracer.withSpan("GET /dogs", ofKind: .server) { _ in
            try await context.perform { try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).count }
        }
        XCTAssertEqual(count, 0)
        let request = try XCTUnwrap(tracer.finishedSpans.first { $0.operationName == "GET /dogs" })
        let fetch = try XCTUnwrap(tracer.finishedSpans.first { $0.operationName == "fetch Dog" }, "\(tracer.finishedSpans.map(\.operationName))")
        XCTAssertEqual(fetch.parentSpanID, request.spanID, "the fetch is the request's child")
    }

    func testNoTracerOrTheSwitchLeavesTheProbesOff() {
        XCTAssertFalse(Probes.forProcess(configuration: ProbeConfiguration(environment: [:], arguments: []), tracer: NoOpTracer()).isEnabled)
        let off = ProbeConfiguration(environment: ["FAULTLINE_TRACING": "0"], arguments: [])
        XCTAssertFalse(off.followsBootstrappedTracer)
        XCTAssertFalse(Probes.forProcess(configuration: off, tracer: InMemoryTracer()).isEnabled)
    }
}
