import Foundation

/// A trace read from a JSON Lines file: its header and events, every event tagged with the signpost before it.
public struct TraceFile: Sendable {
    public let path: String
    /// The header line's fields (process, pid, sqlite, host, started).
    public let header: [String: String]
    public let events: [TraceEvent]
    /// Lines that could not be read, as "line N: why" (a trace cut short by a crash may end with one).
    public let warnings: [String]

    /// Reads and checks a trace; errors name the file, the line and what is wrong.
    public init(path: String) throws {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else { throw ReportError("cannot read the trace \(path)") }
        var header: [String: String] = [:]
        var events: [TraceEvent] = []
        var warnings: [String] = []
        var segment = ""
        var lineNumber = 0
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            lineNumber = index + 1
            if raw.isEmpty { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(raw))) as? [String: Any] else {
                // Only the last line may be broken (a crash mid-write); anything else is not a trace.
                if index >= lines.count - 2 && !events.isEmpty {
                    warnings.append("line \(lineNumber): not JSON (a trace cut short?); ignored")
                    continue
                }
                throw ReportError("\(path):\(lineNumber): not a JSON object — is this a Faultline trace (docs/trace-format.md)?")
            }
            let type = object["type"] as? String ?? ""
            if lineNumber == 1 {
                guard type == "header", object["format"] as? String == "faultline-trace" else {
                    throw ReportError("\(path):1: not a Faultline trace (its first line must be the header with \"format\":\"faultline-trace\")")
                }
                guard let version = object["version"] as? Int, version <= 1 else {
                    throw ReportError("\(path):1: trace version \(object["version"] ?? "?") is newer than this faultline reads (1)")
                }
                for (key, value) in object where key != "type" { header[key] = "\(value)" }
                continue
            }
            guard let kind = TraceEvent.Kind(rawValue: type) else {
                warnings.append("line \(lineNumber): unknown event type '\(type)'; ignored")
                continue
            }
            let event = TraceEvent(kind: kind, time: Self.double(object["t"]), line: lineNumber)
            Self.fill(event, from: object)
            if kind == .signpost { segment = event.name ?? "" }
            event.segment = segment
            events.append(event)
        }
        if lineNumber == 0 || header.isEmpty { throw ReportError("\(path): empty — not a Faultline trace") }
        self.header = header
        self.events = events
        self.warnings = warnings
    }

    private static func double(_ value: Any?) -> Double { (value as? NSNumber)?.doubleValue ?? 0 }
    private static func int(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? 0 }
    private static func strings(_ value: Any?) -> [String] { (value as? [Any])?.compactMap { $0 as? String } ?? [] }
    private static func counts(_ value: Any?) -> [String: Int] { ((value as? [String: Any]) ?? [:]).mapValues { int($0) } }

    private static func fill(_ e: TraceEvent, from o: [String: Any]) {
        e.sql = o["sql"] as? String
        e.purpose = o["purpose"] as? String
        e.rows = int(o["rows"])
        e.fullScanSteps = int(o["fullScanSteps"])
        e.sorts = int(o["sorts"])
        e.duration = double(o["duration"] ?? o["totalTime"])
        e.entity = o["entity"] as? String
        e.predicate = o["predicate"] as? String
        e.sort = strings(o["sort"])
        e.batchSize = int(o["batchSize"])
        e.prefetch = strings(o["prefetch"])
        e.resultType = o["resultType"] as? String
        e.statements = int(o["statements"])
        e.results = int(o["results"] ?? o["objects"])
        e.registered = int(o["registered"])
        e.context = int(o["context"])
        e.keyPath = o["keyPath"] as? String
        e.loaded = int(o["loaded"])
        e.used = int(o["used"])
        e.sqlTime = double(o["sqlTime"])
        e.callSite = o["callSite"] as? String
        e.faultKind = o["kind"] as? String
        e.object = o["object"] as? String
        e.relationship = o["relationship"] as? String
        e.batch = (o["batch"] as? NSNumber)?.intValue
        e.countOnly = o["countOnly"] as? Bool ?? false
        e.inserted = counts(o["inserted"])
        e.updated = counts(o["updated"])
        e.deleted = counts(o["deleted"])
        e.error = o["error"] as? String
        e.name = (o["name"] ?? o["path"]) as? String
        if let nodes = o["nodes"] as? [[String: Any]] { e.planDetails = nodes.compactMap { $0["detail"] as? String } }
    }
}

/// A report error: a message naming what and where.
public struct ReportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
