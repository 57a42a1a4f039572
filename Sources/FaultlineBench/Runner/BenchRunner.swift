import Faultline
import FaultlineReport
import Foundation

/// Runs benchmark scenarios: generates each one's data (untimed), runs every variant once with probes on (the
/// trace, the counters and the query plans come from this run, which is also the warm-up), then times
/// `repetitions` runs of each variant with probes off, interleaving the variants so that peers share the
/// machine's mood (in reverse order every other repetition, when the scenario asks). Writes `results.json`,
/// `trace.jsonl.gz` and `index.html` to the output folder.
public final class BenchRunner {
    public struct Options {
        public var scale: BenchScale
        public var repetitions: Int
        public var outputFolder: URL
        /// Scenario ids to run (all when empty, and no `tags`).
        public var scenarioIDs: [String]
        /// Themes whose scenarios run besides `scenarioIDs` (`--tag`).
        public var tags: [BenchTheme] = []
        /// Keeps the generated stores in `DIR/data` (they are removed otherwise).
        public var keepData: Bool
        /// A model to benchmark instead of the built-in catalogue (`--model`).
        public var modelPath: String?
        /// A real store whose data the model's scenarios run on (a scratch copy).
        public var storePath: String?
        /// Receives a line for each step.
        public var progress: (String) -> Void
        /// Counts each variant's allocations in its memory run (the `faultline` executable's); without one, a memory
        /// run records only the peak resident size.
        public var allocationCounter: AllocationCounter?

        public init(scale: BenchScale = .medium, repetitions: Int = 5, outputFolder: URL, scenarioIDs: [String] = [], tags: [BenchTheme] = [],
                    keepData: Bool = false, modelPath: String? = nil, storePath: String? = nil, allocationCounter: AllocationCounter? = nil,
                    progress: @escaping (String) -> Void = { _ in }) {
            self.scale = scale
            self.repetitions = repetitions
            self.outputFolder = outputFolder
            self.scenarioIDs = scenarioIDs
            self.tags = tags
            self.keepData = keepData
            self.modelPath = modelPath
            self.storePath = storePath
            self.progress = progress
            self.allocationCounter = allocationCounter
        }
    }

    public let options: Options
    /// Object graphs of engine variants after their traced runs, as SVG, by `SCENARIO/VARIANT`.
    private var snapshotDiagrams: [String: String] = [:]

    public init(options: Options) { self.options = options }

    /// The file names the runner writes in its output folder.
    public static let resultsFile = "results.json", traceFile = "trace.jsonl.gz", pageFile = "index.html"

    /// The scenarios a run with these options would run (the catalogue, or the model's generic ones).
    public func scenarios() throws -> [BenchScenario] {
        let all: [BenchScenario]
        if options.modelPath != nil || options.storePath != nil {
            all = try UserModelSuite(path: options.modelPath, store: options.storePath).scenarios()
        } else {
            all = ScenarioCatalogue.all
        }
        guard !options.scenarioIDs.isEmpty || !options.tags.isEmpty else { return all }
        var chosen = try options.scenarioIDs.map { id in
            guard let scenario = all.first(where: { $0.id == id }) else {
                throw BenchError("unknown scenario '\(id)' (known: \(all.map(\.id).joined(separator: ", ")); `faultline bench --list` describes them)")
            }
            return scenario
        }
        for tag in options.tags {
            let tagged = all.filter { $0.theme == tag }
            guard !tagged.isEmpty else {
                throw BenchError("no scenario of the theme '\(tag.rawValue)' in this catalogue yet (`faultline bench --list` shows what it waits for)")
            }
            chosen += tagged.filter { scenario in !chosen.contains { $0.id == scenario.id } }
        }
        return chosen
    }

    /// Runs the scenarios and writes the results; returns them.
    @discardableResult
    public func run() throws -> BenchResults {
        let selected = try scenarios()
        let fileManager = FileManager.default
        do {
            try fileManager.createDirectory(at: options.outputFolder, withIntermediateDirectories: true)
        } catch {
            let reason = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError).map { String(cString: strerror(Int32($0.code))) }
            throw BenchError("cannot create the output folder '\(options.outputFolder.path)'\(reason.map { ": \($0)" } ?? "")")
        }
        let dataFolder = options.outputFolder.appendingPathComponent("data")
        try? fileManager.removeItem(at: dataFolder)
        try fileManager.createDirectory(at: dataFolder, withIntermediateDirectories: true)
        defer { if !options.keepData { try? fileManager.removeItem(at: dataFolder) } }

        let counting = CountingRecorder()
        let tracePath = options.outputFolder.appendingPathComponent(Self.traceFile).path
        let traced = Probes(configuration: ProbeConfiguration(tracePath: tracePath), recorders: [counting])
        let data = DataSets(folder: dataFolder.appendingPathComponent("shared"), scale: options.scale)
        let started = RunEnvironment.timestamp()
        var results: [ScenarioResult] = []
        for (index, scenario) in selected.enumerated() {
            let step = "[\(index + 1)/\(selected.count)] \(scenario.id)"
            if let reason = scenario.skipReason {
                options.progress("\(step): skipped (\(reason))")
                results.append(ScenarioResult(id: scenario.id, title: scenario.title, claim: scenario.claim, source: scenario.source, theme: scenario.theme,
                                              status: "skipped", note: reason, verdict: Verdict(held: nil, "skipped: \(reason)"),
                                              variants: [], ratios: []))
                continue
            }
            do {
                let folder = dataFolder.appendingPathComponent(scenario.id)
                try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
                options.progress("\(step): generating data")
                let variants = try scenario.makeVariants(ScenarioSetup(scale: options.scale, folder: folder, data: data))
                let result = try measure(scenario, variants: variants, traced: traced, counting: counting, step: step)
                results.append(result)
                try? fileManager.removeItem(at: folder)
            } catch {
                options.progress("\(step): failed: \(error)")
                results.append(ScenarioResult(id: scenario.id, title: scenario.title, claim: scenario.claim, source: scenario.source, theme: scenario.theme,
                                              status: "failed", note: "\(error)", verdict: Verdict(held: nil, "failed: \(error)"),
                                              variants: [], ratios: []))
            }
        }
        traced.flush()
        let run = RunInfo(started: started, finished: RunEnvironment.timestamp(), scale: options.scale.name, rows: options.scale.rows,
                          repetitions: options.repetitions, build: RunEnvironment.build, sqlite: PersistentStoreCoordinator.sqliteVersion,
                          revision: RunEnvironment.revision, machine: RunEnvironment.machine, model: options.modelPath ?? options.storePath)
        let output = BenchResults(run: run, scenarios: results)
        try output.encoded().write(to: options.outputFolder.appendingPathComponent(Self.resultsFile), options: .atomic)
        try Data(ResultsPage.html(output, diagrams: diagrams(for: selected)).utf8).write(to: options.outputFolder.appendingPathComponent(Self.pageFile), options: .atomic)
        return output
    }

    /// SVG diagrams of the scenarios' models, by scenario id (one for a `--model` run, under "model"); a model
    /// that cannot be drawn is left out, as the diagram is an aid.
    private func diagrams(for scenarios: [BenchScenario]) -> [String: String] {
        var diagrams = snapshotDiagrams
        if options.modelPath != nil || options.storePath != nil,
           let model = try? UserModelSuite(path: options.modelPath, store: options.storePath).model,
           let svg = try? GraphvizRenderer.render(ModelDiagram(model: model).dot, as: .svg) {
            diagrams["model"] = String(decoding: svg, as: UTF8.self)
        }
        for scenario in scenarios {
            guard let make = scenario.diagramModel, let model = try? make(),
                  let svg = try? GraphvizRenderer.render(ModelDiagram(model: model).dot, as: .svg) else { continue }
            diagrams[scenario.id] = String(decoding: svg, as: UTF8.self)
        }
        return diagrams
    }

    /// The order in which one repetition times a scenario's variants: as listed, or, when the scenario alternates,
    /// in reverse every other repetition.
    static func runOrder(_ count: Int, repetition: Int, alternates: Bool) -> [Int] {
        alternates && repetition % 2 == 1 ? Array((0..<count).reversed()) : Array(0..<count)
    }

    private func measure(_ scenario: BenchScenario, variants: [BenchVariant], traced: Probes, counting: CountingRecorder,
                         step: String) throws -> ScenarioResult {
        var counters: [ProbeCounters?] = []
        var plans: [[String: [String]]?] = []
        for variant in variants {
            options.progress("\(step): \(variant.name) (traced run)")
            if variant.role == .engine {
                traced.signpost("\(scenario.id)/\(variant.name)")
                counting.resetAll()
                let body = try variant.prepare(traced)
                if scenario.snapshots, let context = variant.context.context {
                    // The picture shows what the run loaded: its context keeps the objects for it, where by default
                    // it holds only those the run still references.
                    context.performAndWait { context.retainsRegisteredObjects = true }
                }
                counting.resetCounters()
                try body()
                if scenario.snapshots, let context = variant.context.context {
                    let graph = context.performAndWait { context.objectGraphSnapshot(limit: 40) }
                    if let svg = try? ObjectGraphDiagram(snapshot: graph).render(as: .svg) {
                        snapshotDiagrams["\(scenario.id)/\(variant.name)"] = String(decoding: svg, as: UTF8.self)
                    }
                }
                withExtendedLifetime(body) {}
                let snapshot = counting.snapshot()
                counters.append(snapshot.counters)
                plans.append(snapshot.plans)
            } else {
                try variant.prepare(.disabled)()
                counters.append(nil)
                plans.append(nil)
            }
        }
        // The traced runs' events are written now, not by the trace's thread during the timed runs.
        traced.flush()
        var samples = Array(repeating: [Double](), count: variants.count)
        var processorSamples = samples
        var phaseSamples = Array(repeating: Array(repeating: [Double](), count: BenchPhase.allCases.count), count: variants.count)
        let repetitions = max(1, options.repetitions, scenario.minimumRepetitions)
        for repetition in 0..<repetitions {
            options.progress("\(step): repetition \(repetition + 1)/\(repetitions)")
            for i in Self.runOrder(variants.count, repetition: repetition, alternates: scenario.alternatesOrder) {
                let body = try variants[i].prepare(.disabled)
                let clock = variants[i].phases
                let (seconds, processorSeconds) = try Stopwatch.measure {
                    clock?.start()
                    try body()
                }
                samples[i].append(seconds)
                processorSamples[i].append(processorSeconds)
                if let clock, clock.recorded {
                    for phase in BenchPhase.allCases { phaseSamples[i][phase.index].append(clock.seconds(phase)) }
                }
            }
        }
        // Memory beside time: one more run of each variant, untimed, with allocations counted.
        var memory: [MemoryMeasurement?] = []
        for variant in variants {
            options.progress("\(step): \(variant.name) (memory run)")
            let body = try variant.prepare(.disabled)
            memory.append(try MemoryMeter.measure(counter: options.allocationCounter, body))
            withExtendedLifetime(body) {}
        }
        let measured = variants.indices.map { i -> VariantResult in
            let sorted = samples[i].sorted()
            let phases = BenchPhase.allCases.compactMap { phase -> PhaseResult? in
                let times = phaseSamples[i][phase.index]
                guard times.count == samples[i].count else { return nil }
                return PhaseResult(phase: phase, median: times.sorted()[times.count / 2], samples: times)
            }
            return VariantResult(name: variants[i].name, role: variants[i].role, operations: variants[i].operations,
                                 median: sorted[sorted.count / 2], min: sorted.first!, max: sorted.last!, samples: samples[i],
                                 processorSamples: processorSamples[i], counters: counters[i], queryPlans: plans[i], memory: memory[i],
                                 phases: phases.isEmpty ? nil : phases)
        }
        let measurements = ScenarioMeasurements(results: measured)
        let ratios = scenario.ratios.compactMap { spec -> RatioResult? in
            guard let value = measurements.ratio(spec) else { return nil }
            return RatioResult(numerator: spec.numerator, denominator: spec.denominator, value: value, target: spec.target,
                               met: spec.limit.map { value <= $0 }, paired: spec.paired, phase: spec.phase)
        }
        return ScenarioResult(id: scenario.id, title: scenario.title, claim: scenario.claim, source: scenario.source, theme: scenario.theme, status: "ran",
                              note: nil, verdict: scenario.judge(measurements), variants: measured, ratios: ratios)
    }
}
