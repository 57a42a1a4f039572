import Faultline
import Foundation

/// One benchmark scenario: a claim of Core Data's performance advice, the variants that test it (engine
/// configurations and, where they do the same work, raw SQLite and GRDB peers), and how to judge the outcome.
public struct BenchScenario {
    /// Short name used on the command line (`faultline bench fetch-objects`).
    public let id: String
    public let title: String
    /// The claim, in a sentence.
    public let claim: String
    /// What part of the advice it tests (`bench --tag`).
    public let theme: BenchTheme
    /// Where the claim comes from: work, chapter, section (and the digests' keys).
    public let sources: [ClaimSource]
    /// The sources as one line.
    public var source: String { sources.map(\.description).joined(separator: "; ") }
    /// Why the scenario cannot run yet (it is listed and reported as skipped).
    public let skipReason: String?
    /// Generates the data (untimed) and returns the variants to measure.
    let makeVariants: (ScenarioSetup) throws -> [BenchVariant]
    /// Ratios to report: numerator and denominator variant names, and the target when there is one.
    let ratios: [RatioSpec]
    /// Judges the claim from the measurements.
    let judge: (ScenarioMeasurements) -> Verdict
    /// The model the scenario's data uses, drawn in the results page.
    let diagramModel: (() throws -> ManagedObjectModel)?
    /// True when the page should show each engine variant's object graph after its traced run.
    let snapshots: Bool
    /// The fewest timed runs per variant, whatever `--repetitions` asks: a claim of a few percent needs more than
    /// the default five to be judged on a noisy machine.
    let minimumRepetitions: Int
    /// True when every other repetition runs the variants in reverse order, so that two neighbours are timed as
    /// often in one order as in the other (for paired ratios: a run can warm or cool the machine for the next).
    let alternatesOrder: Bool

    public init(id: String, title: String, claim: String, theme: BenchTheme, sources: [ClaimSource], skipReason: String? = nil,
                ratios: [RatioSpec] = [], model: (() throws -> ManagedObjectModel)? = nil, snapshots: Bool = false,
                minimumRepetitions: Int = 1, alternatesOrder: Bool = false,
                variants: @escaping (ScenarioSetup) throws -> [BenchVariant],
                judge: @escaping (ScenarioMeasurements) -> Verdict) {
        self.diagramModel = model
        self.snapshots = snapshots
        self.minimumRepetitions = minimumRepetitions
        self.alternatesOrder = alternatesOrder
        self.id = id
        self.title = title
        self.claim = claim
        self.theme = theme
        self.sources = sources
        self.skipReason = skipReason
        self.ratios = ratios
        self.makeVariants = variants
        self.judge = judge
    }
}

/// Who did the work a variant measures.
public enum VariantRole: String, Codable, Sendable {
    case engine
    case rawSQLite = "raw SQLite"
    case grdb = "GRDB"
}

/// One way of doing a scenario's work. `prepare` runs untimed before each repetition, with the probes the engine
/// should use (a counting, tracing set for the traced run; none for timed ones), and returns the timed work.
public struct BenchVariant {
    public var name: String
    public var role: VariantRole
    /// Operations per run, when times are better read per operation (one attribute read, one fault).
    public var operations: Int
    public var prepare: (Probes) throws -> () throws -> Void
    /// The context of the run in progress, when the variant is the engine's (for an object-graph snapshot).
    let context = WeakContext()
    /// The clock of the run in progress's phases (`fetch`, `use`, `release`), for variants that time them.
    public var phases: PhaseClock?

    public init(_ name: String, role: VariantRole = .engine, operations: Int = 1,
                prepare: @escaping (Probes) throws -> () throws -> Void) {
        self.name = name
        self.role = role
        self.operations = operations
        self.prepare = prepare
    }
}

extension BenchVariant {
    /// A variant that times its phases: `make` builds it around a clock its work laps (`PhaseClock.lap`), which
    /// the runner starts before each timed run.
    public static func phased(_ make: (PhaseClock) -> BenchVariant) -> BenchVariant {
        let clock = PhaseClock()
        var variant = make(clock)
        variant.phases = clock
        return variant
    }
}

/// A weak reference to the context a variant's run uses (the run keeps it alive, not this).
final class WeakContext {
    weak var context: ManagedObjectContext?
}

/// A ratio between two variants' median times (`numerator / denominator`), with a target such as "≤ 1.5×".
public struct RatioSpec: Sendable {
    public var numerator: String
    public var denominator: String
    /// The largest acceptable ratio, when the issue or seed sets one.
    public var limit: Double?
    /// The target as written ("≤ 1.5× raw", "< 1 (faster than GRDB)").
    public var target: String?
    /// True: the median of the repetitions' own ratios, rather than the ratio of the two medians. Each repetition
    /// times both variants within moments of each other, so a slow drift of the machine's speed cancels out: the
    /// estimate for a difference of a few percent on a shared machine.
    public var paired: Bool
    /// The phase whose times the ratio compares; nil: whole runs (end to end).
    public var phase: BenchPhase?

    public init(_ numerator: String, over denominator: String, phase: BenchPhase? = nil, limit: Double? = nil,
                target: String? = nil, paired: Bool = false) {
        self.numerator = numerator
        self.denominator = denominator
        self.phase = phase
        self.limit = limit
        self.paired = paired
        self.target = target ?? limit.map { "≤ \(BenchFormat.ratio($0))" }
    }
}

/// Whether a scenario's claim held on this machine, and the evidence in a sentence.
public struct Verdict: Codable, Sendable, Equatable {
    /// True: held; false: refuted; nil: not judged (skipped, or the claim has no testable form here).
    public var held: Bool?
    public var detail: String

    public init(held: Bool?, _ detail: String) {
        self.held = held
        self.detail = detail
    }
}

/// What a scenario needs to build its data: the scale, a folder of its own, and the run's shared data sets.
public struct ScenarioSetup {
    public let scale: BenchScale
    public let folder: URL
    /// Data sets shared between scenarios of one run (generated once).
    public let data: DataSets
}

/// The measurements of one scenario's variants, by name, for its judge.
public struct ScenarioMeasurements {
    public let results: [VariantResult]

    public subscript(name: String) -> VariantResult? { results.first { $0.name == name } }

    /// Median seconds of a variant (per operation when it has several), or nil.
    public func median(_ name: String) -> Double? { self[name].map { $0.median / Double($0.operations) } }

    /// `a / b` of two variants' medians.
    public func ratio(_ a: String, _ b: String) -> Double? {
        guard let x = median(a), let y = median(b), y > 0 else { return nil }
        return x / y
    }

    /// Median seconds of one phase of a variant's runs (per operation), or nil when the variant does not time it.
    public func median(_ name: String, phase: BenchPhase) -> Double? {
        self[name].flatMap { variant in variant.phase(phase).map { $0.median / Double(variant.operations) } }
    }

    /// `a / b` of two variants' medians of one phase (nil: whole runs).
    public func ratio(_ a: String, _ b: String, phase: BenchPhase?) -> Double? {
        guard let phase else { return ratio(a, b) }
        guard let x = median(a, phase: phase), let y = median(b, phase: phase), y > 0 else { return nil }
        return x / y
    }

    /// The median of `a / b` over the repetitions (per operation), each repetition's runs of `a` and `b` paired.
    public func pairedRatio(_ a: String, _ b: String) -> Double? {
        guard let x = self[a], let y = self[b] else { return nil }
        return Self.pairedRatio(x.samples, y.samples, scale: Double(y.operations) / Double(x.operations))
    }

    /// `pairedRatio` of the processor time the whole process used in each run (every thread's).
    public func processorRatio(_ a: String, _ b: String) -> Double? {
        guard let x = self[a], let y = self[b], let p = x.processorSamples, let q = y.processorSamples else { return nil }
        return Self.pairedRatio(p, q, scale: Double(y.operations) / Double(x.operations))
    }

    /// The median processor seconds per operation of a variant's runs.
    public func processorMedian(_ name: String) -> Double? {
        guard let variant = self[name], let samples = variant.processorSamples, !samples.isEmpty else { return nil }
        return samples.sorted()[samples.count / 2] / Double(variant.operations)
    }

    private static func pairedRatio(_ numerators: [Double], _ denominators: [Double], scale: Double) -> Double? {
        guard numerators.count == denominators.count else { return nil }
        var ratios: [Double] = []
        for (p, q) in zip(numerators, denominators) where q > 0 { ratios.append(p / q * scale) }
        guard !ratios.isEmpty else { return nil }
        ratios.sort()
        return ratios[ratios.count / 2]
    }

    /// The ratio a spec asks for: paired or of medians.
    func ratio(_ spec: RatioSpec) -> Double? {
        spec.paired ? pairedRatio(spec.numerator, spec.denominator) : ratio(spec.numerator, spec.denominator, phase: spec.phase)
    }

    /// Counters of a variant's traced run.
    public func counters(_ name: String) -> ProbeCounters? { self[name]?.counters }
}
