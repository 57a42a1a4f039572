import FaultlineBench
import FaultlineReport
import Foundation
import XCTest

/// The generated trace the report's scale benchmark reads: every event is read, streaming, and it holds the
/// problems it was made with.
final class SyntheticTraceTests: XCTestCase {
    func testAGeneratedTraceReadsStreamingWithItsProblems() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-synthetic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("trace.jsonl")
        try SyntheticTrace.write(events: 20_000, to: url)
        var analysis = TraceAnalysis(analyzers: Analyzers())
        var chrome = Data()
        let writer = ChromeTraceWriter { chrome.append(contentsOf: $0) }
        let info = try TraceFile.read(path: url.path) { event in
            analysis.add(event)
            try writer.add(event)
        }
        try writer.finish()
        let input = ReportPage.Input(path: url.path, info: info, analysis: analysis)
        XCTAssertEqual(input.summary.events, 20_001, "20,000 events and one query plan")
        XCTAssertEqual(input.summary.fetches.count, 4_000)
        XCTAssertEqual(input.summary.segments.map(\.key), ["screen 0", "screen 1"])
        XCTAssertEqual(Set(input.findings.map(\.kind)), [.nPlusOne, .fullScan, .manySmallSaves], input.findings.map(\.evidence).joined(separator: "\n"))
        XCTAssertEqual(input.findings.first { $0.kind == .nPlusOne }?.segments.count, 2, "one finding across both segments")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: chrome) as? [String: Any])
        // Five track names, and every event but the query plan.
        XCTAssertEqual((object["traceEvents"] as? [Any])?.count, 5 + 20_000)
    }
}
