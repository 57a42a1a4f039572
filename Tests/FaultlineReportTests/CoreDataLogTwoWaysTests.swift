import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// One workload on the engine, recorded two ways at once — Faultline's trace and its Core Data–shaped SQL debug
/// lines (level 4) — gives the same findings from each: same kind, entity, relationship and count. What a log
/// cannot say is left out of the comparison and named: call sites, whether fetched objects were registered already
/// (avoidable fetches) and whether prefetched objects were used (unused prefetches); without call sites a log's
/// findings of one kind and entity are one group where a trace has one per call site.
final class CoreDataLogTwoWaysTests: XCTestCase {
    func testTheSameRunGivesTheSameFindingsFromItsTraceAndItsLog() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-twoways-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try CityStore.model()
        let store = dir.appendingPathComponent("cities.sqlite")
        try CityStore.write(cities: 40, model: model, to: store)
        let tracePath = dir.appendingPathComponent("run.jsonl").path
        let lines = LineCollector()
        do {
            let probes = Probes(configuration: ProbeConfiguration(), recorders: [try TraceWriter(path: tracePath), SQLDebugLogger(level: 4) { lines.append($0) }])
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
            try coordinator.addPersistentStore(at: store)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                let all = FetchRequest<ManagedObject>(entityName: "City")
                all.returnsObjectsAsFaults = false
                // N+1: each city's mayor faulted one by one.
                for city in try context.fetch(all) { _ = (city.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
                // Relationship faults one by one.
                for city in try context.fetch(all) { _ = city.objects(forRelationship: "residents").count }
                // The same selective filtered (scanning) fetch six times: 3 cities of 40.
                let big = FetchRequest<ManagedObject>(entityName: "City", predicate: try ObjectPredicate(parsing: "population < 3000"))
                for _ in 0..<6 { context.reset(); _ = try context.fetch(big) }
                // Twenty-five saves of one object each.
                for i in 0..<25 {
                    let person = try context.insertNewObject(forEntityName: "Person")
                    try person.setValue("Visitor \(i)", forKey: "name")
                    try context.save()
                }
            }
            probes.flush()
        }
        let logPath = dir.appendingPathComponent("console.txt").path
        try Data(lines.text.utf8).write(to: URL(fileURLWithPath: logPath))

        var thresholds = AnalyzerThresholds()
        thresholds.largeFetch = 30
        thresholds.smallTable = 10
        let analyzers = Analyzers(thresholds: thresholds)
        let trace = try TraceFile(path: tracePath)
        let log = try TraceFile(path: logPath, model: model)
        XCTAssertEqual(log.source, .coreDataLog)
        XCTAssertEqual(log.logStatistics?.notUnderstood, 0, "every line Faultline writes is understood: \(log.warnings)")
        let notInLogs: Set<Finding.Kind> = [.avoidableFetch, .unusedPrefetch]
        // A trace groups findings by call site too (the two fetches of every city are two large-fetch findings there,
        // one in the log): counts are compared per kind, entity and relationship.
        func comparable(_ findings: [Finding]) -> [String] {
            var counts: [String: Int] = [:]
            for finding in findings where !notInLogs.contains(finding.kind) {
                counts["\(finding.kind.rawValue) | \(finding.entity ?? "-") | \(finding.relationship ?? "-")", default: 0] += finding.count
            }
            return counts.map { "\($0.key) | \($0.value)" }.sorted()
        }
        let fromTrace = analyzers.findings(in: trace)
        let fromLog = analyzers.findings(in: log)
        XCTAssertEqual(comparable(fromLog), comparable(fromTrace))
        XCTAssertEqual(Set(fromTrace.map(\.kind)).isSuperset(of: [.nPlusOne, .relationshipFaultStorm, .fullScan, .repeatedFetch, .manySmallSaves, .largeFetchWithoutBatchSize]), true,
                       "\(fromTrace.map(\.kind))")
        XCTAssertTrue(fromTrace.allSatisfy { $0.callSite != nil || $0.kind == .fullScan || $0.kind == .manySmallSaves }, "the trace has call sites")
        XCTAssertTrue(fromLog.allSatisfy { $0.callSite == nil }, "the log has none")
    }
}

/// Collects SQL debug lines from the logger (called on the probes' thread).
final class LineCollector: @unchecked Sendable {
    private var lines: [String] = []
    private let lock = NSLock()
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return lines.joined(separator: "\n") + "\n" }
}
