import Faultline
import Foundation

/// A trace read from a JSON Lines file: its header and events, every event tagged with the signpost before it.
public struct TraceFile: Sendable {
    public let path: String
    /// The header line's fields (process, pid, sqlite, host, started).
    public let header: [String: String]
    public let events: [TraceEvent]
    /// Lines that could not be read, as "line N: why" (a trace cut short by a crash may end with one).
    public let warnings: [String]
    /// What the file is: a Faultline trace, or Core Data's SQL debug output.
    public let source: Source
    /// For a Core Data log: how many of its lines were read, and which were not understood.
    public let logStatistics: LogStatistics?

    public enum Source: String, Sendable {
        /// A Faultline JSON Lines trace (docs/trace-format.md).
        case faultlineTrace = "Faultline trace"
        /// Core Data's `-com.apple.CoreData.SQLDebug` output (docs/coredata-log.md).
        case coreDataLog = "Core Data SQL debug log"
    }

    /// What reading a Core Data log made of its lines.
    public struct LogStatistics: Sendable, Equatable {
        /// Lines of Core Data's output (`CoreData: sql: …`, `annotation:`, `details:`, …).
        public var coreDataLines: Int
        /// Of those, lines no known shape matched, and the first one's line number.
        public var notUnderstood: Int
        public var firstNotUnderstood: Int?
        /// Lines that are not Core Data's (the app's own output).
        public var otherLines: Int
    }

    /// Reads and checks a trace, or reads a Core Data SQL debug log (told apart by content: a trace's first line is a
    /// JSON object). `model`, when given, names the entities of a log's tables. Errors name the file, the line and
    /// what is wrong.
    public init(path: String, model: ManagedObjectModel? = nil) throws {
        self.path = path
        let data: Data
        do { data = try InputFile.read(path) } catch { throw ReportError("\(path): \(error)") }
        if data.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d || $0 == 0xef || $0 == 0xbb || $0 == 0xbf) }) != UInt8(ascii: "{") {
            var reader = CoreDataLogReader(model: model)
            reader.read(data)
            guard reader.coreDataLines > 0 else {
                if reader.otherLines == 0 { throw ReportError("\(path): empty — not a Faultline trace or Core Data SQL debug output") }
                throw ReportError("\(path):1: neither a Faultline trace (a JSON Lines file) nor Core Data SQL debug output (no line is a `CoreData: sql:`, `annotation:` or `details:` line)")
            }
            header = ["format": "coredata-sqldebug"]
            events = reader.events
            source = .coreDataLog
            logStatistics = LogStatistics(coreDataLines: reader.coreDataLines, notUnderstood: reader.notUnderstood,
                                          firstNotUnderstood: reader.firstNotUnderstood, otherLines: reader.otherLines)
            warnings = reader.notUnderstood == 0 ? [] :
                ["\(reader.notUnderstood) Core Data line\(reader.notUnderstood == 1 ? "" : "s") not understood, first at line \(reader.firstNotUnderstood ?? 0)"]
            return
        }
        source = .faultlineTrace
        logStatistics = nil
        if let offset = UTF8Validation.firstInvalidByte(in: data) {
            throw ReportError("\(path): \(UTF8Validation.describe(data, invalidAt: offset))")
        }
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
                guard let number = object["version"] as? NSNumber, !isJSONBoolean(number), case .exact(let version) = JSONInteger(number) else {
                    let given = object["version"].map { "\($0 is String ? "the string " : "")\($0)" } ?? "nothing"
                    throw ReportError("\(path):1: the header's \"version\" must be a whole number (this faultline reads version 1), got \(given)")
                }
                guard version <= 1 else { throw ReportError("\(path):1: trace version \(version) is newer than this faultline reads (1)") }
                guard version == 1 else { throw ReportError("\(path):1: trace version \(version) does not exist (this faultline reads version 1)") }
                for (key, value) in object where key != "type" { header[key] = "\(value)" }
                continue
            }
            guard let kind = TraceEvent.Kind(rawValue: type) else {
                warnings.append("line \(lineNumber): unknown event type '\(type)'; ignored")
                continue
            }
            let fields = Fields(object: object, path: path, line: lineNumber)
            let event = TraceEvent(kind: kind, time: try fields.seconds("t"), line: lineNumber)
            try Self.fill(event, from: fields)
            if kind == .signpost { segment = event.name ?? "" }
            event.segment = segment
            events.append(event)
        }
        if lineNumber == 0 || header.isEmpty { throw ReportError("\(path): empty — not a Faultline trace") }
        self.header = header
        self.events = events
        self.warnings = warnings
    }

    init(path: String, header: [String: String], events: [TraceEvent], warnings: [String], source: Source, logStatistics: LogStatistics?) {
        self.path = path
        self.header = header
        self.events = events
        self.warnings = warnings
        self.source = source
        self.logStatistics = logStatistics
    }

    /// An event's fields, read strictly: times are seconds from 0 to `Limits.traceSeconds`, counts whole numbers
    /// from 0 to `Limits.traceCount`, read exactly; anything else is an error naming the line and the field.
    struct Fields {
        static let maximumSeconds = Limits.traceSeconds
        static let maximumCount = Limits.traceCount

        let object: [String: Any]
        let path: String
        let line: Int

        func fail(_ key: String, _ expected: String) -> ReportError {
            let value = object[key].map { "\($0)" } ?? "nothing"
            return ReportError("\(path):\(line): \"\(key)\" must be \(expected), got \(value.prefix(40))")
        }

        func seconds(_ key: String) throws -> Double {
            guard let value = object[key], !(value is NSNull) else { return 0 }
            guard let number = value as? NSNumber, !isJSONBoolean(number), number.doubleValue.isFinite,
                  (0...Self.maximumSeconds).contains(number.doubleValue) else {
                throw fail(key, "a time in seconds from 0 to \(Int(Self.maximumSeconds))")
            }
            return number.doubleValue
        }

        func count(_ key: String) throws -> Int {
            try optionalCount(key) ?? 0
        }

        func optionalCount(_ key: String) throws -> Int? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let number = value as? NSNumber, !isJSONBoolean(number), case .exact(let n) = JSONInteger(number),
                  (0...Self.maximumCount).contains(n) else {
                throw fail(key, "a whole number from 0 to \(Self.maximumCount)")
            }
            return Int(n)
        }

        /// A save's counts by entity; a merge's single count is checked and kept out of them.
        func counts(_ key: String) throws -> [String: Int] {
            guard let value = object[key], !(value is NSNull) else { return [:] }
            if value is NSNumber {
                _ = try count(key)
                return [:]
            }
            guard let map = value as? [String: Any] else { throw fail(key, "an object of entity names to counts, or a count") }
            var result: [String: Int] = [:]
            for (name, _) in map {
                result[name] = try Fields(object: map, path: path, line: line).count(name)
            }
            return result
        }

        func string(_ key: String) -> String? { object[key] as? String }
        func strings(_ key: String) -> [String] { (object[key] as? [Any])?.compactMap { $0 as? String } ?? [] }
    }

    private static func fill(_ e: TraceEvent, from f: Fields) throws {
        e.sql = f.string("sql")
        e.purpose = f.string("purpose")
        e.rows = try f.count("rows")
        e.fullScanSteps = try f.count("fullScanSteps")
        e.vmSteps = try f.count("vmSteps")
        e.sorts = try f.count("sorts")
        e.duration = try f.seconds(f.object["duration"] != nil ? "duration" : "totalTime")
        e.entity = f.string("entity")
        e.predicate = f.string("predicate")
        e.sort = f.strings("sort")
        e.batchSize = try f.count("batchSize")
        e.prefetch = f.strings("prefetch")
        e.resultType = f.string("resultType")
        e.statements = try f.count("statements")
        e.results = try f.count(f.object["results"] != nil ? "results" : "objects")
        e.registered = try f.count("registered")
        e.context = try f.count("context")
        e.keyPath = f.string("keyPath")
        e.loaded = try f.count("loaded")
        e.used = try f.count("used")
        e.sqlTime = try f.seconds("sqlTime")
        e.callSite = f.string("callSite")
        e.faultKind = f.string("kind")
        e.object = f.string("object")
        e.relationship = f.string("relationship")
        e.batch = try f.optionalCount("batch")
        e.countOnly = f.object["countOnly"] as? Bool ?? false
        e.inserted = try f.counts("inserted")
        e.updated = try f.counts("updated")
        e.deleted = try f.counts("deleted")
        e.error = f.string("error")
        e.name = (f.object["name"] ?? f.object["path"]) as? String
        if e.kind == .migration {
            // "step N: 'from' → 'to'", the step a migration event belongs to.
            e.name = "step \(try f.count("step")): '\(f.string("from") ?? "?")' → '\(f.string("to") ?? "?")'"
        }
        if let nodes = f.object["nodes"] as? [[String: Any]] { e.planDetails = nodes.compactMap { $0["detail"] as? String } }
    }
}

/// A report error: a message naming what and where.
public struct ReportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
