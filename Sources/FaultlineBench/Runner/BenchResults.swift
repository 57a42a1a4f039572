import Faultline
import Foundation

/// A benchmark run as `results.json` stores it (docs/results-format.md).
public struct BenchResults: Codable, Sendable {
    public static let format = "faultline-bench-results"
    public static let currentVersion = 1

    public var format = BenchResults.format
    public var version = BenchResults.currentVersion
    public var run: RunInfo
    public var scenarios: [ScenarioResult]

    /// Reads and checks a results file, naming the file and what is wrong with it.
    public static func load(from url: URL) throws -> BenchResults {
        let data: Data
        do { data = try InputFile.read(url.path) } catch {
            throw BenchError("\(url.path): \(error)")
        }
        // The format and version first: a file of another kind, or a newer one, is named as such rather than by the
        // first field it lacks.
        struct Header: Decodable {
            let format: String?
            let version: Int?
        }
        if let header = try? JSONDecoder().decode(Header.self, from: data) {
            if let found = header.format, found != format { throw BenchError("\(url.path): format is \"\(found)\", expected \"\(format)\"") }
            if let version = header.version, version > currentVersion {
                throw BenchError("\(url.path): results version \(version) is newer than this faultline reads (\(currentVersion))")
            }
        }
        let results: BenchResults
        do { results = try JSONDecoder().decode(BenchResults.self, from: data) } catch let error as DecodingError {
            throw BenchError("\(url.path) is not a Faultline results file: \(BenchError.describe(error))")
        }
        guard results.format == format else { throw BenchError("\(url.path): format is \"\(results.format)\", expected \"\(format)\"") }
        return results
    }

    /// The JSON text (sorted keys, pretty printed, so that diffs of committed baselines read well).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// Where and how a run happened.
public struct RunInfo: Codable, Sendable {
    public var started: String
    public var finished: String
    public var scale: String
    public var rows: Int
    public var repetitions: Int
    /// `release` or `debug` (debug numbers are not worth comparing).
    public var build: String
    public var sqlite: String
    /// `git describe` of the working directory when run from a checkout, else null.
    public var revision: String?
    public var machine: MachineInfo
    /// The model of a `--model` run, else null.
    public var model: String?
}

public struct MachineInfo: Codable, Sendable {
    public var host: String
    public var os: String
    public var processors: Int
    public var memoryBytes: UInt64
}

/// One scenario's outcome.
public struct ScenarioResult: Codable, Sendable {
    public var id: String
    public var title: String
    public var claim: String
    /// Work › chapter › section of the claim, with the digests' keys in brackets.
    public var source: String
    /// The scenario's theme (`bench --tag`); absent in results written before themes.
    public var theme: BenchTheme? = nil
    /// `ran`, `skipped` or `failed`.
    public var status: String
    /// Why it was skipped or how it failed.
    public var note: String?
    public var verdict: Verdict
    public var variants: [VariantResult]
    public var ratios: [RatioResult]
}

/// One variant's times and, for engine variants, the counters of its traced run.
public struct VariantResult: Codable, Sendable {
    public var name: String
    public var role: VariantRole
    /// Operations per run (times below are per run; divide for per operation).
    public var operations: Int
    /// Seconds per run: median, fastest, slowest, and every timed repetition in order.
    public var median: Double
    public var min: Double
    public var max: Double
    public var samples: [Double]
    /// Processor seconds of the whole process (every thread) during each timed run, in order; absent in results
    /// written before it was recorded.
    public var processorSamples: [Double]?
    /// What the engine did in the traced run (null for peers).
    public var counters: ProbeCounters?
    /// EXPLAIN QUERY PLAN details of the statements the traced run prepared, by SQL text (null for peers).
    public var queryPlans: [String: [String]]?
    /// One more, untimed run's memory: allocations and bytes, what it kept, the process's peak resident size.
    public var memory: MemoryMeasurement?
    /// The phases of each timed run (`fetch`, `use`, `release`), for variants that time them; absent otherwise
    /// and in results written before phases were timed. The phases add up to the run less the clock's own reads.
    public var phases: [PhaseResult]?

    /// The timing of one phase, when the variant has it.
    public func phase(_ phase: BenchPhase) -> PhaseResult? { phases?.first { $0.phase == phase } }
}

/// One phase of a variant's timed runs: the median seconds per run and every repetition's.
public struct PhaseResult: Codable, Sendable {
    public var phase: BenchPhase
    public var median: Double
    public var samples: [Double]
}

public struct RatioResult: Codable, Sendable {
    public var numerator: String
    public var denominator: String
    public var value: Double
    public var target: String?
    /// Whether the ratio is within its target (null without a target).
    public var met: Bool?
    /// True when `value` is the median of the repetitions' own ratios rather than the ratio of the medians (absent
    /// in results written before paired ratios).
    public var paired: Bool?
    /// The phase the ratio compares; absent: whole runs.
    public var phase: BenchPhase?

    /// "engine, cold / raw SQLite", with the phase when the ratio compares one ("… (fetch)").
    public var label: String { "\(numerator) / \(denominator)\(phase.map { " (\($0.rawValue))" } ?? "")" }
}

/// A benchmark runner error: a message naming what and where.
public struct BenchError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\"\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "\(context.debugDescription)\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}
