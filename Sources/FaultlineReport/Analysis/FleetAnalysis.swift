import Faultline
import Foundation

/// Many traces — Faultline traces, OTLP JSON a collector exported, Core Data logs — from many processes and hosts,
/// analysed as one: one finding per problem across the fleet, its segments the processes that showed it.
///
/// Each file is read twice, streaming (memory stays bounded by the analysis, not by the files): once to check it,
/// then into the analysis, so that a malformed file adds nothing; it is listed in `unreadable` with the error
/// naming its line and field, and the others are still analysed.
public struct FleetAnalysis {
    /// The most files one fleet report reads.
    public static let maximumFiles = 10_000

    public private(set) var analysis: TraceAnalysis
    /// Files analysed, in order.
    public private(set) var files: [String] = []
    /// Files that could not be read, with why.
    public private(set) var unreadable: [(path: String, error: String)] = []
    /// The processes seen (`process@host/pid` of a Faultline trace's header; `service.name@host.name/pid` of an OTLP
    /// resource; a log's file name), in order.
    public private(set) var processes: [String] = []
    private var warnings: [String] = []
    private var sources: Set<TraceFile.Source> = []

    public init(analyzers: Analyzers) {
        analysis = TraceAnalysis(analyzers: analyzers)
    }

    /// The files `arguments` name: each folder's regular files (not hidden, sorted by name), each glob pattern's
    /// matches (a pattern that matches nothing is an error), other paths as given.
    public static func files(_ arguments: [String]) throws -> [String] {
        var files: [String] = []
        for argument in arguments {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder), isFolder.boolValue {
                let names = try FileManager.default.contentsOfDirectory(atPath: argument).filter { !$0.hasPrefix(".") }.sorted()
                for name in names {
                    let path = (argument as NSString).appendingPathComponent(name)
                    var nested: ObjCBool = false
                    if FileManager.default.fileExists(atPath: path, isDirectory: &nested), !nested.boolValue { files.append(path) }
                }
            } else if !FileManager.default.fileExists(atPath: argument), argument.contains(where: { "*?[".contains($0) }) {
                let matches = paths(matching: argument)
                guard !matches.isEmpty else { throw ReportError("no file matches '\(argument)'") }
                files += matches
            } else {
                files.append(argument)
            }
            guard files.count <= maximumFiles else {
                throw ReportError("more than \(maximumFiles) files (FleetAnalysis.maximumFiles): give a narrower folder or pattern")
            }
        }
        return files
    }

    /// The paths `pattern` matches, sorted (glob(3)).
    private static func paths(matching pattern: String) -> [String] {
        var result = glob_t()
        defer { globfree(&result) }
        guard glob(pattern, 0, nil, &result) == 0 else { return [] }
        return (0..<Int(result.gl_pathc)).compactMap { result.gl_pathv[$0].map { String(cString: $0) } }.sorted()
    }

    /// Reads one file into the fleet's analysis, or lists it as unreadable.
    public mutating func add(path: String, model: ManagedObjectModel? = nil) {
        let info: TraceFile.Info
        do {
            info = try TraceFile.read(path: path, model: model) { _ in }
        } catch {
            unreadable.append((path, "\(error)"))
            return
        }
        files.append(path)
        sources.insert(info.source)
        let fileProcess: String
        switch info.source {
        case .faultlineTrace:
            let h = info.header
            fileProcess = (h["process"] ?? "process") + (h["host"].map { "@\($0)" } ?? "") + (h["pid"].map { "/\($0)" } ?? "")
        case .coreDataLog:
            fileProcess = (path as NSString).lastPathComponent
        case .otlp:
            fileProcess = ""
        }
        var numbers: [String: Int] = [:]
        do {
            _ = try TraceFile.read(path: path, model: model) { event in
                let process = fileProcess.isEmpty ? event.segment : fileProcess
                let number: Int
                if let known = numbers[process] {
                    number = known
                } else {
                    if let index = processes.firstIndex(of: process) {
                        number = index + 1
                    } else {
                        processes.append(process)
                        number = processes.count
                    }
                    numbers[process] = number
                }
                event.segment = process
                // Contexts are numbered per process: keep them apart.
                if event.context != 0 { event.context = number << 32 | (event.context & 0xFFFF_FFFF) }
                analysis.add(event)
            }
        } catch {
            // The file changed between the two reads (what it gave before the error stays in the analysis).
            unreadable.append((path, "\(error)"))
            return
        }
        warnings += info.warnings.map { "\(path): \($0)" }
    }

    /// The fleet as one report input.
    public var input: ReportPage.Input {
        let source: TraceFile.Source = sources == [.coreDataLog] ? .coreDataLog : sources == [.otlp] ? .otlp : .faultlineTrace
        let info = TraceFile.Info(header: ["format": "fleet", "files": String(files.count), "processes": String(processes.count)],
                                  warnings: warnings + unreadable.map { "\($0.path): not read: \($0.error)" }, source: source, logStatistics: nil)
        return ReportPage.Input(path: "fleet of \(files.count) file\(files.count == 1 ? "" : "s"), \(processes.count) process\(processes.count == 1 ? "" : "es")",
                                info: info, analysis: analysis)
    }

    /// The processes that showed `finding`.
    public static func processes(of finding: Finding) -> [String] {
        finding.segments.isEmpty ? (finding.segment.isEmpty ? [] : [finding.segment]) : finding.segments
    }
}
