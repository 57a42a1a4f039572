import CMallocCounter
import Faultline
import Foundation
import XCTest
@testable import FaultlineBench

/// Memory beside time: the meter counts what a run allocates and keeps, every variant of a run records it, the
/// summary and the page show it, and `compare` gates on it.
final class MemoryMeterTests: XCTestCase {
    var dir: URL!

    /// This test binary's counter, as the `faultline` executable makes it (nil under a sanitizer).
    static var counter: AllocationCounter? {
        guard fl_allocations_counted() else { return nil }
        return AllocationCounter(start: { fl_allocation_counting(true) }, stop: { fl_allocation_counting(false) }, read: {
            let totals = fl_allocation_read()
            return (Int(totals.allocations), Int(totals.bytes), Int(totals.net))
        })
    }

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-memory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func testTheMeterCountsAllocationsAndWhatARunKeeps() throws {
        var kept: [[UInt8]] = []
        let measured = MemoryMeter.measure(counter: Self.counter) {
            for i in 0..<1_000 { kept.append([UInt8](repeating: UInt8(i & 0xFF), count: 4_096)) }
        }
        XCTAssertEqual(kept.count, 1_000)
        if Self.counter != nil {
            XCTAssertGreaterThanOrEqual(measured.liveBytes ?? 0, 4_096_000, "the 1,000 buffers of 4 kB are still held")
            XCTAssertGreaterThanOrEqual(measured.allocations ?? 0, 1_000)
            XCTAssertGreaterThanOrEqual(measured.bytesAllocated ?? 0, 4_096_000)
        } else {
            // Under a sanitizer, which interposes malloc itself.
            XCTAssertNil(measured.allocations)
            XCTAssertNil(measured.liveBytes)
        }
        if let peak = measured.peakResidentBytes { XCTAssertGreaterThan(peak, 4_000_000) }
        // Nothing kept: what the run allocated is freed.
        let transient = MemoryMeter.measure(counter: Self.counter) { _ = (0..<1_000).map { [UInt8](repeating: UInt8($0 & 0xFF), count: 4_096) }.count }
        XCTAssertLessThan(transient.liveBytes ?? 0, 100_000)
    }

    func testEveryVariantRecordsMemoryAndCompareGatesOnIt() throws {
        let options = BenchRunner.Options(scale: BenchScale(name: "test", rows: 2_000), repetitions: 1,
                                          outputFolder: dir.appendingPathComponent("out"), scenarioIDs: ["prefetch-mayors"], allocationCounter: Self.counter)
        let results = try BenchRunner(options: options).run()
        let variants = try XCTUnwrap(results.scenarios.first?.variants)
        XCTAssertEqual(variants.count, 3)
        for variant in variants {
            let memory = try XCTUnwrap(variant.memory, variant.name)
            if Self.counter != nil { XCTAssertGreaterThan(memory.allocations ?? 0, variant.operations, variant.name) }
        }
        let loaded = try BenchResults.load(from: dir.appendingPathComponent("out").appendingPathComponent(BenchRunner.resultsFile))
        XCTAssertEqual(loaded.scenarios.first?.variants.map(\.memory), variants.map(\.memory))
        XCTAssertTrue(SummaryTable.text(results).contains("    memory: "))
        let page = try String(contentsOf: dir.appendingPathComponent("out").appendingPathComponent(BenchRunner.pageFile), encoding: .utf8)
        XCTAssertTrue(page.contains("aria-label=\"time per run\""))

        // The same run with one engine variant allocating twice as much: a regression beyond 10%, not beyond 150%.
        var heavier = results
        var memory = try XCTUnwrap(heavier.scenarios[0].variants[0].memory)
        memory.bytesAllocated = (memory.bytesAllocated ?? 1_000_000) * 2
        memory.allocations = memory.allocations ?? 1
        heavier.scenarios[0].variants[0].memory = memory
        var base = results
        if base.scenarios[0].variants[0].memory?.bytesAllocated == nil { base.scenarios[0].variants[0].memory?.bytesAllocated = 1_000_000 }
        let gate = ResultsComparison(base: base, new: heavier, maxSlowdown: 100)
        XCTAssertEqual(gate.regressions.map(\.variant), [variants[0].name], gate.text)
        XCTAssertTrue(gate.regressions[0].regressions[0].hasPrefix("allocates "), gate.text)
        XCTAssertTrue(ResultsComparison(base: base, new: heavier, maxSlowdown: 100, maxMemoryGrowth: 1.5).passes)
    }

    /// The seeds' memory advice as scenarios: each is judged on its variants' memory runs.
    func testTheMemoryScenariosAreJudgedOnWhatTheirVariantsKeep() throws {
        let ids = ["import-reset", "import-undo", "fetch-memory", "refresh-to-fault", "row-cache-sharing", "retains-registered"]
        // The seed's import advice assumes a context that keeps what it saved; Core Data's (and Faultline's) holds
        // saved objects weakly, so the default import without reset keeps little: refuted, with the retaining
        // context's figure beside it.
        // fetch-memory: a batched result (`FetchedResults`) keeps the rows' keys and the batches read, as Core Data's
        // batch array keeps IDs: at most 1.25× what the ID fetch keeps.
        let refuted: Set = ["import-reset"]
        let options = BenchRunner.Options(scale: BenchScale(name: "test", rows: 2_000), repetitions: 1,
                                          outputFolder: dir.appendingPathComponent("memory"), scenarioIDs: ids, allocationCounter: Self.counter)
        let results = try BenchRunner(options: options).run()
        XCTAssertEqual(results.scenarios.map(\.id), ids)
        for scenario in results.scenarios {
            XCTAssertEqual(scenario.status, "ran", scenario.note ?? "")
            if Self.counter != nil {
                XCTAssertEqual(scenario.verdict.held, !refuted.contains(scenario.id), "\(scenario.id): \(scenario.verdict.detail)")
            } else {
                XCTAssertNil(scenario.verdict.held, "not judged without counted allocations")
            }
        }
        // The import saves every 1,000 objects: two saves of 2,000 rows, each its inserts and the key reservation.
        let importing = try XCTUnwrap(results.scenarios[0].variants.first { $0.name == "reset per batch" }?.counters)
        XCTAssertEqual(importing.saves, 2)
        let kept = results.scenarios[0].variants.map { $0.memory?.liveBytes ?? 0 }
        if Self.counter != nil {
            XCTAssertLessThan(kept[0] * 10, kept[2], "the default context lets go of saved objects: \(kept)")
            XCTAssertGreaterThan(kept[2], 2_000 * 100, "the retaining context without reset keeps its 2,000 objects")
        }
    }
}
