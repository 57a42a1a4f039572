import XCTest
@testable import FaultlineReport

/// The accounting identity every trace and log in these tests keeps: the findings' costs, plus the time no finding
/// explains, are the trace's whole statement time — added up here from its statement events, apart from the
/// analysis — to the microsecond, each statement's time in one finding at most. (A trace without statement events
/// is costed by its fetches', saves' and faults' own times.)
func assertTimeAccounted(_ trace: TraceFile, file: StaticString = #filePath, line: UInt = #line) {
    var run = Analyzers().start()
    for event in trace.events { run.add(event) }
    let findings = run.findings(source: trace.source)
    let statements = trace.events.filter { $0.kind == .statement }
    let total = statements.isEmpty ? trace.events.filter(\.isTopLevel).reduce(0) { $0 + $1.duration } : statements.reduce(0) { $0 + $1.duration }
    XCTAssertEqual((run.totalTime * 1e6).rounded(), (total * 1e6).rounded(), "the analysis saw all the statements' time", file: file, line: line)
    let explained = Analyzers.explainedTime(findings, durations: run.durations)
    let costs = findings.reduce(0) { $0 + $1.cost }
    XCTAssertEqual(((costs + (total - explained)) * 1e6).rounded(), (total * 1e6).rounded(), "findings \(costs) s + unexplained \(total - explained) s ≠ \(total) s",
                   file: file, line: line)
    XCTAssertLessThanOrEqual((explained * 1e6).rounded(), (total * 1e6).rounded(), file: file, line: line)
    XCTAssertEqual(findings.map(\.cost), findings.map(\.cost).sorted(by: >), "costliest first", file: file, line: line)
    // Nothing lost: a finding's own time and the part a costlier one counts make up all its events' time.
    for finding in findings where !finding.events.isEmpty {
        let whole = Set(finding.events).reduce(0) { $0 + ($1 < run.durations.count ? run.durations[$1] : 0) }
        XCTAssertEqual(((finding.cost + finding.sharedCost) * 1e6).rounded(), (whole * 1e6).rounded(), "\(finding.kind): \(finding.evidence)",
                       file: file, line: line)
    }
}
