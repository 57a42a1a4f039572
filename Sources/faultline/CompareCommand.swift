import ArgumentParser
import FaultlineBench
import FaultlineReport
import Foundation

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare two benchmark runs (results.json), or two traces (.jsonl) or Core Data SQL debug logs; exit 1 on a regression — the gate for CI.",
        discussion: """
        Runs: a regression is an engine variant slower than the baseline beyond --max-slowdown, one that allocates \
        more bytes beyond --max-memory-growth, or one that issues \
        more SQL statements than before (counts are exact: any increase counts unless --allow names the scenario or \
        SCENARIO/VARIANT). Peers' times are shown, not judged. Traces: a regression is a signpost segment with more \
        statements than before, or a finding (see `faultline report`) the baseline did not have.
        """)

    @Argument(help: "The baseline: a results.json, a trace (.jsonl) or a Core Data SQL debug log.")
    var base: String

    @Argument(help: "The new run: a results.json, a trace (.jsonl) or a Core Data SQL debug log.")
    var new: String

    @Option(help: "How much slower an engine variant may be (10%, 10 or 0.1).")
    var maxSlowdown: String = "10%"

    @Option(help: "How many more bytes an engine variant may allocate than in the baseline (10%, 10 or 0.1).")
    var maxMemoryGrowth: String = "10%"

    @Option(help: "A scenario (or SCENARIO/VARIANT) whose statement count may grow; repeatable.")
    var allow: [String] = []

    @Option(help: "Also write the comparison as an HTML page.")
    var html: String?

    func validate() throws {
        guard ResultsComparison.parseSlowdown(maxSlowdown) != nil else { throw ValidationError("--max-slowdown must be a percentage such as 10% (got '\(maxSlowdown)')") }
        guard ResultsComparison.parseSlowdown(maxMemoryGrowth) != nil else { throw ValidationError("--max-memory-growth must be a percentage such as 10% (got '\(maxMemoryGrowth)')") }
    }

    func run() throws {
        var passes = true
        try reportingErrors("compare") {
            if let html { try OutputFile.check(html) }
            if isTrace(base) || isTrace(new) {
                guard html == nil else { throw OutputFile.Failure(description: "--html goes with results files, not traces (use faultline report for a trace's page)") }
                let comparison = TraceComparison(base: try TraceFile(path: base), new: try TraceFile(path: new), analyzers: Analyzers())
                try Console.out(comparison.text, terminator: "")
                passes = comparison.passes
                return
            }
            let comparison = ResultsComparison(base: try BenchResults.load(from: URL(fileURLWithPath: base)),
                                               new: try BenchResults.load(from: URL(fileURLWithPath: new)),
                                               maxSlowdown: ResultsComparison.parseSlowdown(maxSlowdown)!,
                                               maxMemoryGrowth: ResultsComparison.parseSlowdown(maxMemoryGrowth)!, allowed: Set(allow))
            try Console.out(comparison.text, terminator: "")
            if let html { try OutputFile.write(Data(comparison.html.utf8), to: html) }
            passes = comparison.passes
        }
        if !passes { throw ExitCode(1) }
    }
}

/// A trace or a Core Data log rather than a results file: a `.jsonl` name, or a file not named `.json` that does not
/// start with `{`.
private func isTrace(_ path: String) -> Bool {
    if path.hasSuffix(".jsonl") { return true }
    if path.hasSuffix(".json") { return false }
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    let start = (try? handle.read(upToCount: 4096)) ?? Data()
    guard let first = start.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d) }) else { return false }
    return first != UInt8(ascii: "{")
}
