import ArgumentParser
import FaultlineBench
import Foundation

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run benchmark scenarios that prove or refute Core Data's performance advice (Apple's guide, objc.io's book, …), with raw SQLite and GRDB as peers.",
        discussion: """
        Each scenario generates its data (untimed), runs every variant once with probes on (the trace, counters and \
        query plans come from that run), then times K runs of each variant with probes off, interleaved. Writes \
        DIR/results.json (docs/results-format.md), DIR/trace.jsonl.gz (gzip) and DIR/index.html, and prints a summary.
        """)

    @Argument(help: "Scenarios to run (all when none; see --list).")
    var scenarios: [String] = []

    @Option(help: "small (20,000 rows), medium (200,000), large (1,000,000) or a row count.")
    var scale: String = "medium"

    @Option(help: "Timed runs per variant (a scenario may ask for more: probe-cost times at least 15).")
    var repetitions: Int = 5

    @Option(help: "Folder for results.json, trace.jsonl.gz and index.html.")
    var out: String = "Reports/latest"

    @Option(help: "A model (.xcdatamodeld, .xcdatamodel, contents, .momd, .mom or JSON) to benchmark with synthetic data instead of the built-in scenarios.")
    var model: String?

    @Option(help: "A Core Data store: the model's scenarios run on a scratch copy of its data (the store is not changed); without --model, on the model it caches.")
    var store: String?

    @Option(help: "A results.json to show this run's times and statement counts against.")
    var baseline: String?

    @Option(name: .customLong("tag"), help: ArgumentHelp("Run the scenarios of a theme (repeatable): \(BenchTheme.tags).", valueName: "theme"))
    var tags: [BenchTheme] = []

    @Flag(help: "List the scenarios by theme, with their claims and sources, and the claims still waiting for a scenario; then exit.")
    var list = false

    @Flag(help: "Keep the generated stores in DIR/data.")
    var keepData = false

    @Option(help: "Print one of the README's tables (Markdown) from this results.json, and exit: no benchmark runs.")
    var markdown: String?

    @Option(help: "The table --markdown prints: speed (every engine variant beside its peers), memory (the memory scenarios) or claims (every claim by theme with its verdict, and those waiting).")
    var table: MarkdownTable.Kind = .speed

    func validate() throws {
        guard BenchScale(parsing: scale) != nil else { throw ValidationError("--scale must be small, medium, large or a row count of at least 100 (got '\(scale)')") }
        guard (1...1_000).contains(repetitions) else { throw ValidationError("--repetitions must be between 1 and 1000") }
    }

    func run() throws {
        try reportingErrors("bench") {
            if let markdown {
                let results = try BenchResults.load(from: URL(fileURLWithPath: markdown))
                switch table {
                case .speed: try Console.out(MarkdownTable.speed(results), terminator: "")
                case .memory: try Console.out(MarkdownTable.memory(results), terminator: "")
                case .claims: try Console.out(MarkdownTable.claims(results, waiting: ScenarioCatalogue.waiting), terminator: "")
                }
                return
            }
            let options = BenchRunner.Options(scale: BenchScale(parsing: scale)!, repetitions: repetitions, outputFolder: URL(fileURLWithPath: out),
                                              scenarioIDs: scenarios, keepData: keepData, modelPath: model, storePath: store,
                                              allocationCounter: AllocationCounting.counter) { step in
                Console.error("… \(step)")
            }
            var withTags = options
            withTags.tags = tags
            let runner = BenchRunner(options: withTags)
            if !list { try OutputFile.checkFolder(out) }
            if list {
                try Console.out(ScenarioListing.text(try BenchRunner(options: options).scenarios(), waiting: model == nil && store == nil ? ScenarioCatalogue.waiting : [],
                                           themes: tags), terminator: "")
                return
            }
            let baselineResults = try baseline.map { try BenchResults.load(from: URL(fileURLWithPath: $0)) }
            #if DEBUG
            Console.error("""
                faultline bench: WARNING: this is a DEBUG build. Its times say nothing about the engine's speed;
                faultline bench: build with `swift build -c release` (or run `make bench`) before comparing numbers.
                """)
            #endif
            let results = try runner.run()
            Console.committed = "wrote \(out)/\(BenchRunner.resultsFile), \(out)/\(BenchRunner.traceFile), \(out)/\(BenchRunner.pageFile)"
            try Console.out(SummaryTable.text(results, baseline: baselineResults), terminator: "")
            try Console.out("wrote \(out)/\(BenchRunner.resultsFile), \(out)/\(BenchRunner.traceFile), \(out)/\(BenchRunner.pageFile)")
            if results.scenarios.contains(where: { $0.status == "failed" }) { throw ExitCode.failure }
        }
    }
}

extension MarkdownTable.Kind: ExpressibleByArgument {}

extension BenchTheme: ExpressibleByArgument {}
