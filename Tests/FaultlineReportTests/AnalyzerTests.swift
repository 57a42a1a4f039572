import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// The analyzers on real traces: each trace is written by the engine while it runs a workload made to contain one
/// pattern (or its fix, which must give no finding).
final class AnalyzerTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func model(indexedPopulation: Bool = false) throws -> ManagedObjectModel {
        try CityStore.model(indexedPopulation: indexedPopulation)
    }

    /// A store of `cities` cities, each with a mayor who lives there; then `body` runs with a trace on. Returns
    /// the trace's findings.
    var lastStore: URL!

    func findings(cities: Int = 30, indexedPopulation: Bool = false, splitsFetchTime: Bool = false,
                  _ body: (ManagedObjectContext) throws -> Void) throws -> (TraceFile, [Finding]) {
        let model = try model(indexedPopulation: indexedPopulation)
        let store = dir.appendingPathComponent("store-\(UUID().uuidString).sqlite")
        lastStore = store
        try CityStore.write(cities: cities, model: model, to: store)
        let path = dir.appendingPathComponent("trace-\(UUID().uuidString).jsonl").path
        var configuration = ProbeConfiguration(tracePath: path)
        configuration.splitsFetchTime = splitsFetchTime
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: configuration))
        try coordinator.addPersistentStore(at: store)
        do {
            // The context goes away before the trace is read (prefetch use is reported then).
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait { try body(context) }
        }
        coordinator.probes.flush()
        let trace = try TraceFile(path: path)
        assertTimeAccounted(trace)
        return (trace, Analyzers().findings(in: trace))
    }

    func request(_ predicate: String? = nil, sort: String? = nil) throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "City", predicate: try predicate.map { try ObjectPredicate(parsing: $0) },
                                                  sortDescriptors: sort.map { [FetchSortDescriptor(keyPath: $0)] } ?? [])
        request.returnsObjectsAsFaults = false
        return request
    }

    func testNPlusOneIsFoundAndPrefetchingGivesNone() throws {
        let (_, plain) = try findings { context in
            for city in try context.fetch(try request()) { _ = (city.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
        }
        let storm = try XCTUnwrap(plain.first { $0.kind == .nPlusOne }, "\(plain)")
        XCTAssertEqual(storm.count, 30)
        XCTAssertTrue(storm.evidence.hasPrefix("Person: 30 faults"), storm.evidence)
        XCTAssertTrue(storm.callSite?.hasPrefix("FaultlineReportTests/AnalyzerTests.swift:") == true, storm.callSite ?? "no call site")
        XCTAssertTrue(storm.fix.contains("relationshipKeyPathsForPrefetching"))

        let (_, prefetched) = try findings { context in
            let request = try request()
            request.relationshipKeyPathsForPrefetching = ["mayor"]
            for city in try context.fetch(request) { _ = (city.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
        }
        XCTAssertEqual(prefetched, [], "no false positive on the prefetching variant")

        let (_, batched) = try findings { context in
            let cities = try context.fetch(try request())
            try context.fulfillFaults(for: cities.compactMap { $0.value(forKey: "mayor") as? ManagedObject })
            for city in cities { _ = (city.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
        }
        XCTAssertEqual(batched, [], "no false positive on batch faulting")
    }

    func testPrefetchesNobodyUsesAreFound() throws {
        let (_, unused) = try findings { context in
            let request = try request()
            request.relationshipKeyPathsForPrefetching = ["mayor"]
            _ = try context.fetch(request).map { $0.value(forKey: "name") }
        }
        let finding = try XCTUnwrap(unused.first { $0.kind == .unusedPrefetch }, "\(unused)")
        XCTAssertEqual(finding.evidence, "City.mayor: a prefetch loaded 30 objects and none was used")
        XCTAssertTrue(finding.callSite?.hasPrefix("FaultlineReportTests/AnalyzerTests.swift:") == true, finding.callSite ?? "")
        let (_, used) = try findings { context in
            let request = try request()
            request.relationshipKeyPathsForPrefetching = ["mayor"]
            _ = try context.fetch(request).first.map { ($0.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
        }
        XCTAssertFalse(used.contains { $0.kind == .unusedPrefetch }, "one use is a use")
    }

    func testToManyRelationshipFaultsOneByOne() throws {
        let (_, found) = try findings { context in
            for city in try context.fetch(try request()) { _ = city.objects(forRelationship: "residents").map { $0.value(forKey: "name") } }
        }
        let storm = try XCTUnwrap(found.first { $0.kind == .relationshipFaultStorm }, "\(found)")
        XCTAssertTrue(storm.evidence.hasPrefix("City.residents: 30"), storm.evidence)
        XCTAssertFalse(found.contains { $0.kind == .countThroughFaults })
    }

    /// Counting a to-many relationship in a loop fires its fault each time only for the count.
    func testCountingAToManyInALoopIsFound() throws {
        let (_, found) = try findings { context in
            for city in try context.fetch(try request()) { _ = city.count(forRelationship: "residents") }
        }
        let counting = try XCTUnwrap(found.first { $0.kind == .countThroughFaults }, "\(found)")
        XCTAssertTrue(counting.evidence.hasPrefix("City.residents: 30 relationship faults fired only to count"), counting.evidence)
        XCTAssertTrue(counting.fix.contains("denormalized counter"))
        XCTAssertFalse(found.contains { $0.kind == .relationshipFaultStorm })
    }

    func testFullScanAndTempBTreeAreFoundAndAnIndexRemovesThem() throws {
        let (_, scanned) = try findings(cities: 2_000) { context in
            _ = try context.fetch(try request("population > 1850000", sort: "rank"))
        }
        let scan = try XCTUnwrap(scanned.first { $0.kind == .fullScan }, "\(scanned)")
        XCTAssertTrue(scan.evidence.hasPrefix("City: 1 run scanned the whole table"), "the entity, not its table: \(scan.evidence)")
        XCTAssertTrue(scan.evidence.contains("examined 2000 rows to match 149 (7.4%)"), scan.evidence)
        XCTAssertTrue(scan.fix.contains("CREATE INDEX ZCITY_ZPOPULATION_INDEX ON ZCITY (ZPOPULATION)"), scan.fix)
        // Its sort is part of the same finding: one problem, one fix (a range's rows cannot come in the sort's order).
        XCTAssertFalse(scanned.contains { $0.kind == .tempBTree }, "\(scanned)")
        XCTAssertTrue(scan.evidence.hasSuffix(", and sorted its rows in a temporary B-tree"), scan.evidence)
        XCTAssertTrue(scan.fix.hasSuffix("(the sort stays: rows a range matches come in the range column's order, not the sort's)"), scan.fix)

        let (_, indexed) = try findings(cities: 2_000, indexedPopulation: true) { context in
            _ = try context.fetch(try request("population > 1500000", sort: "population"))
        }
        XCTAssertEqual(indexed, [])
    }

    /// With the model and the store, the suggested index is proven on a scratch copy (the store is not changed).
    func testSuggestedIndexIsProvenAgainstTheStore() throws {
        let (_, found) = try findings(cities: 2_000) { context in
            _ = try context.fetch(try request("population > 1850000 AND name != 'x'"))
        }
        let before = try Data(contentsOf: lastStore)
        let proven = try IndexProver(model: try model(), store: lastStore).prove(found)
        let scan = try XCTUnwrap(proven.first { $0.kind == .fullScan }, "\(proven)")
        XCTAssertTrue(scan.fix.hasPrefix("CREATE INDEX"), scan.fix)
        XCTAssertTrue(scan.fix.contains("proven on a scratch copy") && scan.fix.contains("SEARCH"), scan.fix)
        XCTAssertTrue(scan.fix.contains("examines 149 rows instead of 2000"), scan.fix)
        XCTAssertEqual(try Data(contentsOf: lastStore), before, "the store itself is not changed")
    }

    func testRepeatedFetchLargeFetchAndSmallSaves() throws {
        let (trace, found) = try findings(cities: 1_200, indexedPopulation: true) { context in
            for _ in 0..<6 { _ = try context.fetch(try request("population == 7000")) }
            _ = try context.fetch(try request())
            for i in 0..<25 {
                let person = try context.insertNewObject(forEntityName: "Person")
                try person.setValue("p\(i)", forKey: "name")
                try context.save()
            }
        }
        XCTAssertEqual(found.first { $0.kind == .repeatedFetch }?.count, 6, "\(found)")
        let large = try XCTUnwrap(found.first { $0.kind == .largeFetchWithoutBatchSize }, "\(found)")
        XCTAssertTrue(large.evidence.contains("returned up to 1200 objects"), large.evidence)
        XCTAssertEqual(found.first { $0.kind == .manySmallSaves }?.count, 25)
        let summary = TraceSummary(trace)
        XCTAssertEqual(summary.savesByEntity.map(\.key), ["Person"])
        XCTAssertEqual(summary.savesByEntity.first?.count, 25)
        XCTAssertEqual(summary.fetches.count, 7)
        XCTAssertEqual(summary.fetchesByCallSite.count, 2)
        XCTAssertEqual(summary.savesByCallSite.count, 1)
        XCTAssertEqual(summary.savesByCallSite.first?.rows, 25)
        // The 2nd to 6th runs of the repeated fetch found only registered objects: one problem, the repeated fetch.
        XCTAssertNil(found.first { $0.kind == .avoidableFetch })
        XCTAssertEqual(Set(found.map(\.kind)), [.repeatedFetch, .largeFetchWithoutBatchSize, .manySmallSaves])
        // Ranked by cost; each names trace lines that exist.
        XCTAssertEqual(found.map(\.cost), found.map(\.cost).sorted(by: >))
        for finding in found { XCTAssertTrue(finding.lines.allSatisfy { $0 > 1 && $0 <= trace.events.last!.line }) }

        let (_, fixed) = try findings(cities: 1_200, indexedPopulation: true) { context in
            _ = try context.fetch(try request("population == 7000"))
            let batched = try request()
            batched.fetchBatchSize = 20
            _ = try context.fetch(batched)
            for i in 0..<25 {
                let person = try context.insertNewObject(forEntityName: "Person")
                try person.setValue("p\(i)", forKey: "name")
            }
            try context.save()
        }
        XCTAssertEqual(fixed, [])
    }

    func testThresholdsAndAllowListedCallSites() throws {
        let (trace, found) = try findings { context in
            for city in try context.fetch(try request()) { _ = (city.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
        }
        XCTAssertFalse(found.isEmpty)
        var strict = AnalyzerThresholds()
        strict.nPlusOne = 31
        XCTAssertEqual(Analyzers(thresholds: strict).findings(in: trace).filter { $0.kind == .nPlusOne }, [])
        XCTAssertEqual(Analyzers(allowedCallSites: ["FaultlineReportTests/AnalyzerTests.swift"]).findings(in: trace), [])
    }

    func testReportPageShowsTheSectionsAndEscapesTraceStrings() throws {
        let (trace, _) = try findings(splitsFetchTime: true) { context in
            for _ in 0..<6 { _ = try context.fetch(try request("name == '</style><script>alert(\"x\")</script>'")) }
            for city in try context.fetch(try request()) { _ = (city.value(forKey: "mayor") as? ManagedObject)?.value(forKey: "name") }
        }
        let page = ReportPage(inputs: [.init(trace: trace, analyzers: Analyzers()), .init(trace: trace, analyzers: Analyzers())]).html
        for section in ["Summary", "Findings (2)", "Timeline", "Statements by fingerprint", "Fetches by entity", "Fetches by call site",
                        "Cache misses by call site", "Side by side"] {
            XCTAssertTrue(page.contains(section), section)
        }
        XCTAssertEqual(page.components(separatedBy: "<script>").count, 2, "the page's own sorting script, and no other")
        XCTAssertFalse(page.contains("alert(\""))
        XCTAssertTrue(page.contains("&lt;/style&gt;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;"))
        XCTAssertEqual(page.components(separatedBy: "</style>").count, 2)
        XCTAssertTrue(page.contains("<svg"))
        // The trace read back splits its fetches' time (P-25): SQLite, the row cache, the context.
        let fetches = trace.events.filter { $0.kind == .fetch }
        XCTAssertTrue(fetches.allSatisfy { $0.stepTime > 0 }, "every fetch stepped SQLite")
        XCTAssertTrue(fetches.contains { $0.rowCacheTime > 0 })
        XCTAssertEqual(TraceSummary(trace).fetchPhases.fetches, fetches.count)
        XCTAssertTrue(page.contains("Fetch time (\(fetches.count) fetches that split it): in SQLite "), "no fetch split on the page")
    }

    /// Events name their context; the timeline shows a group of lanes per context.
    func testTimelineHasALaneGroupPerContext() throws {
        let (trace, _) = try findings { context in
            _ = try context.fetch(try request())
            let other = ManagedObjectContext(.privateQueue, coordinator: context.coordinator)
            try other.performAndWait { _ = try other.fetch(try request("population > 5000")) }
        }
        let contexts = Set(trace.events.filter { $0.kind == .fetch }.map(\.context))
        XCTAssertEqual(contexts.count, 2)
        XCTAssertFalse(contexts.contains(0))
        let page = ReportPage(inputs: [.init(trace: trace, analyzers: Analyzers())]).html
        XCTAssertTrue(page.contains("Timeline by context"))
        for context in contexts { XCTAssertTrue(page.contains("context \(context) · fetch"), "\(context)") }
    }

    func testBadTracesAreNamed() throws {
        let notTrace = dir.appendingPathComponent("a.jsonl")
        try Data("{\"type\":\"fetch\"}\n".utf8).write(to: notTrace)
        XCTAssertThrowsError(try TraceFile(path: notTrace.path)) { XCTAssertTrue("\($0)".contains("a.jsonl:1: not a Faultline trace"), "\($0)") }
        let broken = dir.appendingPathComponent("b.jsonl")
        try Data("{\"type\":\"header\",\"format\":\"faultline-trace\",\"version\":1}\n{\"type\":\"signpost\",\"t\":0.1,\"name\":\"x\"}\ngarbage\n{\"type\":\"signpost\",\"t\":0.2,\"name\":\"y\"}\n".utf8).write(to: broken)
        XCTAssertThrowsError(try TraceFile(path: broken.path)) { XCTAssertTrue("\($0)".contains("b.jsonl:3: not a JSON object"), "\($0)") }
        let cut = dir.appendingPathComponent("c.jsonl")
        try Data("{\"type\":\"header\",\"format\":\"faultline-trace\",\"version\":1}\n{\"type\":\"signpost\",\"t\":0.1,\"name\":\"x\"}\n{\"type\":\"fetc".utf8).write(to: cut)
        let trace = try TraceFile(path: cut.path)
        XCTAssertEqual(trace.events.count, 1)
        XCTAssertEqual(trace.warnings.count, 1)
        XCTAssertThrowsError(try TraceFile(path: dir.appendingPathComponent("missing.jsonl").path))
    }

    func testFingerprintsNormalizeLiteralsAndLists() {
        XCTAssertEqual(StatementFingerprint.of("SELECT t0.Z_PK FROM ZCITY t0 WHERE t0.ZNAME = 'a''b' AND t0.Z_PK IN (?, ?, ?) LIMIT 10"),
                       "SELECT t0.Z_PK FROM ZCITY t0 WHERE t0.ZNAME = ? AND t0.Z_PK IN (…) LIMIT ?")
        XCTAssertEqual(StatementFingerprint.of("SELECT j.Z_4CATEGORY FROM Z_1CATEGORY j"), "SELECT j.Z_4CATEGORY FROM Z_1CATEGORY j")
    }
}

extension AnalyzerTests {
    /// A bar's label keeps the entity whole and shortens the kind instead ("· Journa" was cut), with the full text
    /// as its title; short labels are left as they are.
    func testChartLabelsKeepTheEntity() {
        let long = Finding(kind: .largeFetchWithoutBatchSize, segment: "", evidence: "JournalEntry: 3 fetches", fix: "", cost: 0.002, count: 3, lines: [1])
        let label = ReportCharts.barLabel(long, number: 12)
        XCTAssertTrue(label.hasPrefix("#12 large fetch") && label.hasSuffix("… · JournalEntry"), label)
        XCTAssertLessThanOrEqual(label.count, ReportCharts.barLabelLength)
        let short = Finding(kind: .nPlusOne, segment: "", evidence: "Tag: 20 faults", fix: "", cost: 0.001, count: 20, lines: [1])
        XCTAssertEqual(ReportCharts.barLabel(short, number: 1), "#1 N+1 faults · Tag")
        let svg = ReportCharts.findingBars([long, short], anchor: "f")
        XCTAssertTrue(svg.contains("<title>#1 large fetch without a batch size · JournalEntry</title>"), svg)
    }
}

extension AnalyzerTests {
    /// Two findings that name the same event: the costlier keeps its time, the other its own part, and says how much
    /// a costlier finding counts (nothing is lost, nothing counted twice); an event named twice counts once.
    func testSharedEventsCountOnceAndTheRestIsSaid() {
        let durations = [0.003, 0.002, 0.0005]
        func finding(_ kind: Finding.Kind, _ events: [Int]) -> Finding {
            // As the analyzers make them: a finding's cost is its events' time.
            var f = Finding(kind: kind, segment: "", evidence: "X: n", fix: "", cost: Set(events).reduce(0) { $0 + durations[$1] },
                            count: events.count, lines: [1])
            f.events = events
            return f
        }
        let ranked = Analyzers.attributingTime([finding(.fullScan, [1, 2, 2]), finding(.repeatedFetch, [0, 1])], durations: durations)
        XCTAssertEqual(ranked.map(\.kind), [.repeatedFetch, .fullScan])
        XCTAssertEqual(ranked.map(\.cost), [0.005, 0.0005])
        XCTAssertEqual(ranked.map(\.sharedCost), [0, 0.002])
    }
}
