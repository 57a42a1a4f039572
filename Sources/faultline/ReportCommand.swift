import ArgumentParser
import Faultline
import FaultlineReport
import Foundation

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Turn traces or Core Data SQL debug logs into an HTML report: summary, findings with fixes, timeline, statements and their plans.",
        discussion: """
        One finding per problem (a kind from one call site, across segments), ranked by the time it costs: N+1 \
        faults and relationship faults one by one (prefetch or batch-fault), batch sizes too small, scans that \
        examine far more rows than they match (the index; small tables and unselective scans get none), [cd] \
        searches without a normalized column, temporary B-trees for ORDER BY (the compound index), the same fetch \
        repeated, fetches in a loop (one IN fetch), large fetches without a batch size, many small saves. Traces are \
        read streaming; several are shown side by side. A file is read as Core Data's \
        `-com.apple.CoreData.SQLDebug` output (a copied Xcode console) when it is not a JSON Lines trace; with \
        --store, each statement of a log is planned on a scratch copy of the store.
        """)

    @Argument(help: "Trace files (FAULTLINE_TRACE=… or faultline bench's trace.jsonl), OTLP JSON a collector's file exporter wrote, or Core Data SQL debug logs; with --fleet also folders and quoted glob patterns.")
    var traces: [String]

    @Flag(help: "Analyse every file as one fleet: one finding per problem across processes and hosts, with the processes that showed it. A folder or a glob pattern among the files implies it. A file that cannot be read is named and the others are still reported (exit status 1).")
    var fleet = false

    @Option(name: [.short, .long], help: "The HTML file to write (default report.html; with --json, none unless given).")
    var output: String?

    @Flag(help: "Print the findings as JSON on standard output (kind, severity, entity, relationship, call site, count, time, lines, fix).")
    var json = false

    @Option(help: "Also write the first trace in Chrome's trace-event format (open it in Perfetto).")
    var chrome: String?

    @Option(help: "The model of the traced store (default: the model the store caches, Z_MODELCACHE).")
    var model: String?

    @Option(help: "The traced store: suggested indexes are proven on a scratch copy of it.")
    var store: String?

    @Option(help: "A call site (Module/File.swift:42) or file whose findings are not reported; repeatable.")
    var allow: [String] = []

    @Option(name: .customLong("allow-file"), help: "A file of allowed call sites or files, one per line, and `fingerprint <SQL>` lines for statements; # starts a comment.")
    var allowFile: String?

    @Option(name: .customLong("fail-on"), help: "Exit 1 when a finding of these kinds remains: any, or a comma-separated list (\(Finding.Kind.allCases.map(\.slug).joined(separator: ", "))).")
    var failOn: String?

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

    @Option(help: "Saves of one context that make a growing-context finding (its registered objects rising at nearly every save).")
    var growingSaves = AnalyzerThresholds().growingSaves

    @Option(help: "Growth of a context's registered objects over its saves that makes a growing-context finding.")
    var growingObjects = AnalyzerThresholds().growingObjects

    @Option(help: "Rows a statement examines per run below which its table is too small for index advice.")
    var smallTable = AnalyzerThresholds().smallTable

    @Option(help: "Rows a statement sorts per run below which its temporary B-tree is not flagged.")
    var sortedRows = AnalyzerThresholds().sortedRows

    /// The kinds `--fail-on` names (all for `any`).
    func failingKinds() throws -> Set<Finding.Kind> {
        guard let failOn else { return [] }
        if failOn.trimmingCharacters(in: .whitespaces).lowercased() == "any" { return Set(Finding.Kind.allCases) }
        return Set(try failOn.split(separator: ",").map { name in
            guard let kind = Finding.Kind(named: String(name)) else {
                throw ValidationError("--fail-on: unknown kind '\(name)' (known: any, \(Finding.Kind.allCases.map(\.slug).joined(separator: ", ")))")
            }
            return kind
        })
    }

    func validate() throws {
        guard !traces.isEmpty else { throw ValidationError("give at least one trace file") }
        _ = try failingKinds()
        guard model == nil || store != nil else { throw ValidationError("--model goes with --store") }
        guard [nPlusOne, repeatedFetch, avoidableFetch, largeFetch, smallSaves, growingSaves, growingObjects, smallTable, sortedRows].allSatisfy({ $0 > 0 }) else {
            throw ValidationError("thresholds must be positive")
        }
    }

    func run() throws {
        try reportingErrors("report") {
            let output = self.output ?? (json ? nil : "report.html")
            if let output { try OutputFile.check(output) }
            if let chrome { try OutputFile.check(chrome) }
            var thresholds = AnalyzerThresholds()
            thresholds.nPlusOne = nPlusOne
            thresholds.repeatedFetch = repeatedFetch
            thresholds.avoidableFetch = avoidableFetch
            thresholds.largeFetch = largeFetch
            thresholds.smallSaves = smallSaves
            thresholds.growingSaves = growingSaves
            thresholds.growingObjects = growingObjects
            thresholds.smallTable = smallTable
            thresholds.sortedRows = sortedRows
            var allowed = Set(allow)
            var allowedFingerprints: Set<String> = []
            if let allowFile {
                let text = String(decoding: try InputFile.read(allowFile), as: UTF8.self)
                for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)?
                        .trimmingCharacters(in: .whitespaces) ?? ""
                    if line.isEmpty { continue }
                    if line.hasPrefix("fingerprint ") {
                        allowedFingerprints.insert(StatementFingerprint.of(String(line.dropFirst("fingerprint ".count)).trimmingCharacters(in: .whitespaces)))
                    } else if line.contains(" ") {
                        throw ValidationError("\(allowFile):\(number + 1): not a call site, a file or a `fingerprint <SQL>` line: \(line.prefix(80))")
                    } else {
                        allowed.insert(line)
                    }
                }
            }
            let analyzers = Analyzers(thresholds: thresholds, allowedCallSites: allowed)
            if fleet || traces.contains(where: { argument in
                var isFolder: ObjCBool = false
                return (FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) && isFolder.boolValue)
                    || (!FileManager.default.fileExists(atPath: argument) && argument.contains(where: { "*?[".contains($0) }))
            }) {
                return try runFleet(analyzers: analyzers, allowedFingerprints: allowedFingerprints, output: output)
            }
            // With a store: its model names a log's tables, its data plans a log's statements and proves indexes.
            let prover = try store.map { store in
                try IndexProver(coordinator: openStore(store, model: model, readOnly: true), store: URL(fileURLWithPath: store))
            }
            // Each trace is read once, streaming; the first also goes to the Chrome file as it is read.
            let chromeFile = try chrome.map(StreamingOutputFile.init)
            var inputs: [ReportPage.Input] = []
            for (number, path) in traces.enumerated() {
                let writer = number == 0 ? chromeFile.map { file in ChromeTraceWriter { try file.write($0) } } : nil
                var analysis = TraceAnalysis(analyzers: analyzers)
                var info = try TraceFile.read(path: path, model: prover?.coordinator.managedObjectModel) { event in
                    analysis.add(event)
                    try writer?.add(event)
                }
                try writer?.finish()
                if let prover, info.source == .coreDataLog {
                    // A log's statements are planned on the store, which needs them all at hand: logs are read whole.
                    let trace = try TraceFile(path: path, model: prover.coordinator.managedObjectModel).withPlans(from: prover.coordinator)
                    analysis = TraceAnalysis(analyzers: analyzers)
                    for event in trace.events { analysis.add(event) }
                    info.warnings = trace.warnings
                }
                var input = ReportPage.Input(path: path, info: info, analysis: analysis)
                if let prover {
                    input.findings = prover.prove(input.findings, fromLog: info.source == .coreDataLog)
                    input.findings += try prover.storeIndexFindings(plans: analysis.run.plannedStatements, already: input.findings)
                }
                if !allowedFingerprints.isEmpty {
                    input.findings.removeAll { $0.sql.map { allowedFingerprints.contains(StatementFingerprint.of($0)) } ?? false }
                }
                inputs.append(input)
            }
            let history = try store.map { store in (store, try PersistentHistory.read(storeAt: URL(fileURLWithPath: store), model: prover?.coordinator.managedObjectModel)) }
            if let output { try OutputFile.write(Data(ReportPage(inputs: inputs, history: history).html.utf8), to: output) }
            try chromeFile?.commit()
            let written = [output, chrome].compactMap { $0 }
            if !written.isEmpty { Console.committed = "wrote " + written.joined(separator: " and ") }
            let failing = try failingKinds()
            let gated = inputs.flatMap(\.findings).filter { failing.contains($0.kind) }
            defer {
                if !gated.isEmpty {
                    let kinds = Set(gated.map(\.kind.slug)).sorted().joined(separator: ", ")
                    Console.error("faultline report: \(gated.count) finding\(gated.count == 1 ? "" : "s") of the kinds --fail-on names (\(kinds))")
                }
            }
            if json {
                let data = try FindingsJSON.data(inputs.map { ($0.path, $0.info.source, $0.findings) })
                try Console.out(String(decoding: data, as: UTF8.self))
                if !gated.isEmpty { throw ExitCode(1) }
                return
            }
            for input in inputs {
                try Console.out("\(input.path): \(input.summary.events) events, \(input.summary.statementCount) statements, \(input.findings.count) findings")
                if let log = input.info.logStatistics {
                    try Console.out("  a Core Data SQL debug log: \(log.coreDataLines) Core Data line\(log.coreDataLines == 1 ? "" : "s"), \(log.otherLines) other line\(log.otherLines == 1 ? "" : "s")")
                }
                if !input.findings.isEmpty { try Console.out("  " + input.explanation) }
                if input.info.logStatistics != nil, !input.findings.isEmpty { try Console.out("  " + Analyzers.callSiteHint) }
                for finding in input.findings.prefix(20) {
                    let segments = finding.segments.count > 1 ? "\(finding.segments.count) segments" : finding.segment
                    let place = [segments, finding.callSite ?? "", finding.faultlineSite.map { "Faultline's own code, \($0)" } ?? ""]
                        .filter { !$0.isEmpty }.joined(separator: " at ")
                    try Console.out("  \(finding.kind.rawValue)\(place.isEmpty ? "" : " (\(place))"): \(finding.evidence)\n    fix: \(finding.fix)")
                }
                if input.findings.count > 20 { try Console.out("  … \(input.findings.count - 20) more in the report") }
                for warning in input.info.warnings { try Console.out("  warning: \(warning)") }
            }
            if let (store, history) = history, history.isTracked {
                try Console.out("\(store): persistent history: " + HistorySection.lines(HistorySummary(history)).joined(separator: "; "))
            }
            if let output { try Console.out("wrote \(output)" + (chrome.map { " and \($0)" } ?? "")) }
            if !gated.isEmpty { throw ExitCode(1) }
        }
    }

    /// `--fleet`: every file into one analysis; unreadable files named on standard error (exit status 1), the rest
    /// reported.
    private func runFleet(analyzers: Analyzers, allowedFingerprints: Set<String>, output: String?) throws {
        guard chrome == nil, store == nil else { throw ValidationError("--fleet reports no Chrome trace and proves no index: drop --chrome and --store") }
        let files = try FleetAnalysis.files(traces)
        var fleet = FleetAnalysis(analyzers: analyzers)
        for path in files { fleet.add(path: path) }
        for (path, error) in fleet.unreadable {
            let message = error.hasPrefix(path) ? error : "\(path): \(error)"
            Console.error("faultline report: \(message)")
        }
        guard !fleet.files.isEmpty else { throw ReportError("no file could be read (\(fleet.unreadable.count) tried)") }
        var input = fleet.input
        if !allowedFingerprints.isEmpty {
            input.findings.removeAll { $0.sql.map { allowedFingerprints.contains(StatementFingerprint.of($0)) } ?? false }
        }
        if let output {
            try OutputFile.write(Data(ReportPage(inputs: [input], history: nil).html.utf8), to: output)
            Console.committed = "wrote \(output)"
        }
        let failing = try failingKinds()
        let gated = input.findings.filter { failing.contains($0.kind) }
        if json {
            try Console.out(String(decoding: try FindingsJSON.data([(input.path, input.info.source, input.findings)]), as: UTF8.self))
        } else {
            try Console.out("\(input.path) (\(fleet.unreadable.count) not read): \(input.summary.events) events, \(input.summary.statementCount) statements, \(input.findings.count) findings")
            for finding in input.findings.prefix(20) {
                let shown = FleetAnalysis.processes(of: finding)
                let place = finding.callSite.map { " at \($0)" } ?? ""
                try Console.out("  \(finding.kind.rawValue) (\(shown.count) of \(fleet.processes.count) processes\(place)): \(finding.evidence)\n    processes: \(shown.prefix(5).joined(separator: ", "))\(shown.count > 5 ? ", …" : "")\n    fix: \(finding.fix)")
            }
            if input.findings.count > 20 { try Console.out("  … \(input.findings.count - 20) more in the report") }
            for warning in input.info.warnings where !warning.contains(": not read: ") { try Console.out("  warning: \(warning)") }
            if let output { try Console.out("wrote \(output)") }
        }
        if !gated.isEmpty {
            Console.error("faultline report: \(gated.count) finding\(gated.count == 1 ? "" : "s") of the kinds --fail-on names")
        }
        if !gated.isEmpty || !fleet.unreadable.isEmpty { throw ExitCode(1) }
    }
}
