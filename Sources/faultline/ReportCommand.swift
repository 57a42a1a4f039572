import ArgumentParser
import FaultlineReport
import Foundation

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Turn traces into an HTML report: summary, findings with fixes, timeline, statements and their plans.",
        discussion: """
        Findings: N+1 faults and relationship faults one by one (prefetch or batch-fault), filtered full scans (the \
        index), temporary B-trees for ORDER BY (the compound index), the same fetch repeated, large fetches without \
        a batch size, many small saves. Findings are printed too; several traces are shown side by side.
        """)

    @Argument(help: "Trace files (FAULTLINE_TRACE=… or faultline bench's trace.jsonl).")
    var traces: [String]

    @Option(name: [.short, .long], help: "The HTML file to write.")
    var output: String = "report.html"

    @Option(help: "Also write the first trace in Chrome's trace-event format (open it in Perfetto).")
    var chrome: String?

    @Option(help: "The model of the traced store (default: the model the store caches, Z_MODELCACHE).")
    var model: String?

    @Option(help: "The traced store: suggested indexes are proven on a scratch copy of it.")
    var store: String?

    @Option(help: "A call site (Module/File.swift:42) or file whose findings are not reported; repeatable.")
    var allow: [String] = []

    @Option(help: "Faults of one entity from one call site, each reading SQLite, that make an N+1 finding.")
    var nPlusOne = AnalyzerThresholds().nPlusOne

    @Option(help: "Runs of one fetch from one call site that make a repeated-fetch finding.")
    var repeatedFetch = AnalyzerThresholds().repeatedFetch

    @Option(help: "Fetches from one call site returning only registered objects that make an avoidable-fetch finding.")
    var avoidableFetch = AnalyzerThresholds().avoidableFetch

    @Option(help: "Objects a fetch without a batch size may return before it is flagged.")
    var largeFetch = AnalyzerThresholds().largeFetch

    @Option(help: "Saves from one call site that make a many-small-saves finding.")
    var smallSaves = AnalyzerThresholds().smallSaves

    @Option(help: "Full-scan steps a statement must add up to before its scan is flagged.")
    var fullScanSteps = AnalyzerThresholds().fullScanSteps

    func validate() throws {
        guard !traces.isEmpty else { throw ValidationError("give at least one trace file") }
        guard model == nil || store != nil else { throw ValidationError("--model goes with --store") }
        guard [nPlusOne, repeatedFetch, avoidableFetch, largeFetch, smallSaves, fullScanSteps].allSatisfy({ $0 > 0 }) else {
            throw ValidationError("thresholds must be positive")
        }
    }

    func run() throws {
        try reportingErrors("report") {
            try OutputFile.check(output)
            if let chrome { try OutputFile.check(chrome) }
            var thresholds = AnalyzerThresholds()
            thresholds.nPlusOne = nPlusOne
            thresholds.repeatedFetch = repeatedFetch
            thresholds.avoidableFetch = avoidableFetch
            thresholds.largeFetch = largeFetch
            thresholds.smallSaves = smallSaves
            thresholds.fullScanSteps = fullScanSteps
            let analyzers = Analyzers(thresholds: thresholds, allowedCallSites: Set(allow))
            var inputs = try traces.map { ReportPage.Input(trace: try TraceFile(path: $0), analyzers: analyzers) }
            if let store {
                let prover = try IndexProver(model: try loadModel(model ?? store), store: URL(fileURLWithPath: store))
                for i in inputs.indices { inputs[i].findings = prover.prove(inputs[i].findings) }
            }
            try OutputFile.write(Data(ReportPage(inputs: inputs).html.utf8), to: output)
            if let chrome { try OutputFile.write(ChromeTrace.data(inputs[0].trace), to: chrome) }
            for input in inputs {
                print("\(input.trace.path): \(input.summary.events) events, \(input.summary.statementCount) statements, \(input.findings.count) findings")
                for finding in input.findings.prefix(20) {
                    let place = [finding.segment, finding.callSite ?? ""].filter { !$0.isEmpty }.joined(separator: " at ")
                    print("  \(finding.kind.rawValue)\(place.isEmpty ? "" : " (\(place))"): \(finding.evidence)\n    fix: \(finding.fix)")
                }
                if input.findings.count > 20 { print("  … \(input.findings.count - 20) more in the report") }
                for warning in input.trace.warnings { print("  warning: \(warning)") }
            }
            print("wrote \(output)" + (chrome.map { " and \($0)" } ?? ""))
        }
    }
}
