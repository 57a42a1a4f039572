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
        /// Spans of `TracingProbeRecorder` as an OpenTelemetry collector's file exporter writes them (OTLP JSON).
        case otlp = "OpenTelemetry spans (OTLP JSON)"
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
    /// what is wrong. The events are kept in memory: `TraceFile.read` streams them instead.
    public init(path: String, model: ManagedObjectModel? = nil) throws {
        var events: [TraceEvent] = []
        let info = try Self.read(path: path, model: model) { events.append($0) }
        self.init(path: path, header: info.header, events: events, warnings: info.warnings, source: info.source, logStatistics: info.logStatistics)
    }

    /// What reading a file found besides its events.
    public struct Info: Sendable {
        public var header: [String: String]
        public var warnings: [String]
        public var source: Source
        public var logStatistics: LogStatistics?
    }

    /// Reads a trace one event at a time, in order, each tagged with its segment, keeping none: memory stays bounded
    /// whatever the trace's size (a Core Data log is read whole, as its lines need their neighbours). Errors as
    /// `init(path:model:)`.
    public static func read(path: String, model: ManagedObjectModel? = nil, _ body: (TraceEvent) throws -> Void) throws -> Info {
        var reader = LineReader(path: path)
        var isLog: Bool?
        let chunks: InputFile.ChunksRead
        do {
            chunks = try InputFile.readChunks(path) { chunk in
                if isLog == nil {
                    guard let first = chunk.first(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0a || $0 == 0x0d || $0 == 0xef || $0 == 0xbb || $0 == 0xbf) }) else { return }
                    isLog = first != UInt8(ascii: "{")
                }
                if isLog == true { return }
                try reader.consume(chunk, body)
            }
        } catch let failure as InputFile.Failure {
            throw ReportError("\(path): \(failure)")
        }
        if isLog != false { return try readLog(path: path, model: model, body) }
        var info = try reader.finish(body)
        if chunks.endsInsideMember {
            info.warnings.append("the compressed trace ends inside a gzip member (its writer did not finish: a crash?); read to its last complete block")
        }
        return info
    }

    private static func readLog(path: String, model: ManagedObjectModel?, _ body: (TraceEvent) throws -> Void) throws -> Info {
        let data: Data
        do { data = try InputFile.read(path) } catch { throw ReportError("\(path): \(error)") }
        var reader = CoreDataLogReader(model: model)
        reader.read(data)
        guard reader.coreDataLines > 0 else {
            if reader.otherLines == 0 { throw ReportError("\(path): empty — not a Faultline trace or Core Data SQL debug output") }
            throw ReportError("\(path):1: neither a Faultline trace (a JSON Lines file) nor Core Data SQL debug output (no line is a `CoreData: sql:`, `annotation:` or `details:` line)")
        }
        for event in reader.events { try body(event) }
        let statistics = LogStatistics(coreDataLines: reader.coreDataLines, notUnderstood: reader.notUnderstood,
                                       firstNotUnderstood: reader.firstNotUnderstood, otherLines: reader.otherLines)
        let warnings = reader.notUnderstood == 0 ? [] :
            ["\(reader.notUnderstood) Core Data line\(reader.notUnderstood == 1 ? "" : "s") not understood, first at line \(reader.firstNotUnderstood ?? 0)"]
        return Info(header: ["format": "coredata-sqldebug"], warnings: warnings, source: .coreDataLog, logStatistics: statistics)
    }

    /// Splits chunks into lines and reads each: the header first, then events.
    private struct LineReader {
        let path: String
        var carry: [UInt8] = []
        var offset = 0
        var lineNumber = 0
        var header: [String: String] = [:]
        var warnings: [String] = []
        var segment = ""
        var events = 0
        /// A line that was not JSON: an error unless it turns out to be the last (a trace cut short by a crash).
        var broken: Int?
        /// The file is an OTLP JSON export (its first line says so), not a Faultline trace.
        var otlp: OTLPSpans?

        init(path: String) { self.path = path }

        mutating func consume(_ chunk: UnsafeRawBufferPointer, _ body: (TraceEvent) throws -> Void) throws {
            var start = 0
            while start < chunk.count, let found = memchr(chunk.baseAddress! + start, 0x0A, chunk.count - start) {
                let newline = chunk.baseAddress!.distance(to: UnsafeRawPointer(found))
                if carry.isEmpty {
                    try line(UnsafeRawBufferPointer(rebasing: chunk[start..<newline]), body)
                } else {
                    guard carry.count + (newline - start) <= Limits.traceLineBytes else { throw tooLong() }
                    carry.append(contentsOf: chunk[start..<newline])
                    let whole = carry
                    carry.removeAll(keepingCapacity: true)
                    try whole.withUnsafeBytes { try line($0, body) }
                }
                start = newline + 1
            }
            guard carry.count + (chunk.count - start) <= Limits.traceLineBytes else { throw tooLong() }
            carry.append(contentsOf: chunk[start...])
        }

        private func tooLong() -> ReportError {
            ReportError("\(path):\(lineNumber + 1): a line longer than \(Limits.traceLineBytes) bytes — not a Faultline trace line")
        }

        mutating func finish(_ body: (TraceEvent) throws -> Void) throws -> Info {
            if !carry.isEmpty {
                let last = carry
                carry = []
                try last.withUnsafeBytes { try line($0, body) }
            }
            if let broken { warnings.append("line \(broken): not JSON (a trace cut short?); ignored") }
            if let otlp {
                if otlp.spans > 0 && otlp.skipped == otlp.spans { warnings.append("no Faultline spans among its \(otlp.spans) spans") }
                if otlp.spans == 0 { warnings.append("no spans: its export requests hold only logs or metrics") }
                return Info(header: ["format": "otlp-json", "processes": otlp.processes.joined(separator: ", ")], warnings: warnings,
                            source: .otlp, logStatistics: nil)
            }
            if lineNumber == 0 || header.isEmpty { throw ReportError("\(path): empty — not a Faultline trace") }
            return Info(header: header, warnings: warnings, source: .faultlineTrace, logStatistics: nil)
        }

        private mutating func line(_ bytes: UnsafeRawBufferPointer, _ body: (TraceEvent) throws -> Void) throws {
            lineNumber += 1
            let lineStart = offset
            offset += bytes.count + 1
            if bytes.contains(where: { $0 >= 0x80 }), let bad = UTF8Validation.firstInvalidByte(in: bytes) {
                throw ReportError("\(path): not UTF-8: byte 0x\(String(bytes[bad], radix: 16, uppercase: true)) at offset \(lineStart + bad) (line \(lineNumber), column \(bad + 1)) does not begin a valid UTF-8 sequence")
            }
            if bytes.isEmpty || bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0d || $0 == 0x09 }) { return }
            if let broken { throw ReportError("\(path):\(broken): not a JSON object — is this a Faultline trace (docs/trace-format.md)?") }
            guard let pairs = TraceLineParser.object(bytes) else {
                // Only the last line may be broken (a crash mid-write); anything else is not a trace.
                if events > 0 { broken = lineNumber; return }
                throw ReportError("\(path):\(lineNumber): not a JSON object — is this a Faultline trace (docs/trace-format.md)?")
            }
            if lineNumber == 1 && OTLPSpans.isExport(pairs) { otlp = OTLPSpans(path: path) }
            if otlp != nil {
                try otlp!.read(pairs, line: lineNumber) { event in
                    events += 1
                    try body(event)
                }
                return
            }
            var fields = Fields(pairs: pairs, path: path, line: lineNumber)
            let type = fields.string("type") ?? ""
            if lineNumber == 1 {
                guard type == "header", fields.string("format") == "faultline-trace" else {
                    throw ReportError("\(path):1: not a Faultline trace (its first line must be the header with \"format\":\"faultline-trace\")")
                }
                guard case .number? = fields["version"], let version = fields.exactInteger("version") else {
                    let given = fields["version"].map { value -> String in
                        if case .string(let s) = value { return "the string \(s)" }
                        return value.shown
                    } ?? "nothing"
                    throw ReportError("\(path):1: the header's \"version\" must be a whole number (this faultline reads version 1), got \(given)")
                }
                guard version <= 1 else { throw ReportError("\(path):1: trace version \(version) is newer than this faultline reads (1)") }
                guard version == 1 else { throw ReportError("\(path):1: trace version \(version) does not exist (this faultline reads version 1)") }
                for (key, value) in pairs where key != "type" { header[key] = value.shown }
                return
            }
            guard let kind = TraceEvent.Kind(rawValue: type) else {
                warnings.append("line \(lineNumber): unknown event type '\(type)'; ignored")
                return
            }
            let event = TraceEvent(kind: kind, time: try fields.seconds("t"), line: lineNumber)
            try TraceFile.fill(event, from: &fields)
            if kind == .signpost { segment = event.name ?? "" }
            event.segment = segment
            events += 1
            try body(event)
        }
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

        let pairs: [(String, TraceJSON)]
        let path: String
        let line: Int
        /// Where the next key is looked for first: the reader asks for a type's keys in about the order the writer
        /// writes them, so most lookups compare one key.
        private var next = 0

        init(pairs: [(String, TraceJSON)], path: String, line: Int) {
            self.pairs = pairs
            self.path = path
            self.line = line
        }

        subscript(key: String) -> TraceJSON? {
            mutating get {
                // Lengths first: comparing two short strings' lengths is a load, comparing their bytes a call.
                let length = key.utf8.count
                let found: Int? = pairs.withUnsafeBufferPointer { pairs in
                    let count = pairs.count
                    var i = next, looked = 0
                    while looked < count {
                        if i == count { i = 0 }
                        if pairs[i].0.utf8.count == length && pairs[i].0 == key { return i }
                        i += 1
                        looked += 1
                    }
                    return nil
                }
                guard let found else { return nil }
                next = found + 1
                return pairs[found].1
            }
        }

        /// `duration`, else `totalTime` (a fetch's).
        mutating func duration() throws -> Double {
            self["duration"] != nil ? try seconds("duration") : try seconds("totalTime")
        }

        mutating func fail(_ key: String, _ expected: String) -> ReportError {
            let value = self[key].map(\.shown) ?? "nothing"
            return ReportError("\(path):\(line): \"\(key)\" must be \(expected), got \(value.prefix(40))")
        }

        mutating func seconds(_ key: String) throws -> Double {
            guard let value = self[key] else { return 0 }
            if case .null = value { return 0 }
            guard case .number(_, let number) = value, number.isFinite, (0...Self.maximumSeconds).contains(number) else {
                throw fail(key, "a time in seconds from 0 to \(Int(Self.maximumSeconds))")
            }
            return number
        }

        /// The integer a number field holds exactly (digits, or an integral value below 2^53), or nil.
        mutating func exactInteger(_ key: String) -> Int64? {
            self[key].flatMap(Self.exactInteger)
        }

        /// The integer `value` holds exactly, or nil.
        static func exactInteger(_ value: TraceJSON) -> Int64? {
            guard case .number(let text, let value) = value else { return nil }
            // Below 2^53 the double is the integer exactly; above, digits are read from the text.
            if value.isFinite && abs(value) < 9_007_199_254_740_992 && value.rounded(.towardZero) == value { return Int64(value) }
            if TraceJSON.isWholeNumberText(text) { return Int64(text) }
            guard value.isFinite, value.rounded(.towardZero) == value, abs(value) < 9_007_199_254_740_992 else { return nil }
            return Int64(value)
        }

        mutating func count(_ key: String) throws -> Int {
            try optionalCount(key) ?? 0
        }

        /// A fetch's or save's gauges, when the line has them.
        mutating func gauges() throws -> ContextGauges? {
            guard let registered = try optionalCount("registeredObjects") else { return nil }
            return ContextGauges(registeredObjects: registered, materializedObjects: try count("materializedObjects"),
                                 rowCacheRows: try count("rowCacheRows"))
        }

        mutating func optionalCount(_ key: String) throws -> Int? {
            guard let value = self[key] else { return nil }
            if case .null = value { return nil }
            guard let n = Self.exactInteger(value), (0...Self.maximumCount).contains(n) else {
                throw fail(key, "a whole number from 0 to \(Self.maximumCount)")
            }
            return Int(n)
        }

        /// A save's counts by entity; a merge's single count is checked and kept out of them.
        mutating func counts(_ key: String) throws -> [String: Int] {
            guard let value = self[key] else { return [:] }
            switch value {
            case .null: return [:]
            case .number:
                _ = try count(key)
                return [:]
            case .object(let map):
                var result: [String: Int] = [:]
                var nested = Fields(pairs: map, path: path, line: line)
                for (name, _) in map { result[name] = try nested.count(name) }
                return result
            default:
                throw fail(key, "an object of entity names to counts, or a count")
            }
        }

        mutating func string(_ key: String) -> String? {
            if case .string(let s)? = self[key] { return s }
            return nil
        }

        mutating func strings(_ key: String) -> [String] {
            guard case .array(let items)? = self[key] else { return [] }
            return items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
        }

        mutating func bool(_ key: String) -> Bool {
            if case .bool(let b)? = self[key] { return b }
            return false
        }
    }

    /// Reads the fields `e`'s type has (docs/trace-format.md): looking up only those, in about the order the writer
    /// writes them, keeps a million-line trace to seconds.
    private static func fill(_ e: TraceEvent, from f: inout Fields) throws {
        let kind = e.kind
        switch kind {
        case .statement:
            e.sql = f.string("sql")
            e.purpose = f.string("purpose")
            e.duration = try f.duration()
            e.rows = try f.count("rows")
            e.fullScanSteps = try f.count("fullScanSteps")
            e.sorts = try f.count("sorts")
            e.vmSteps = try f.count("vmSteps")
            return
        case .fetch:
            e.entity = f.string("entity")
            e.predicate = f.string("predicate")
            e.sort = f.strings("sort")
            e.batchSize = try f.count("batchSize")
            e.prefetch = f.strings("prefetch")
            e.resultType = f.string("resultType")
            e.statements = try f.count("statements")
            e.rows = try f.count("rows")
            e.results = try f.count("results")
            e.registered = try f.count("registered")
            e.sqlTime = try f.seconds("sqlTime")
            e.stepTime = try f.seconds("stepTime")
            e.rowCacheTime = try f.seconds("rowCacheTime")
            e.duration = try f.duration()
            e.callSite = f.string("callSite")
            e.context = try f.count("context")
            e.gauges = try f.gauges()
            e.optionalNotEqual = f.strings("optionalNotEqual")
            return
        case .queryPlan:
            e.duration = try f.duration()
            e.sql = f.string("sql")
            if case .array(let nodes)? = f["nodes"] {
                e.planDetails = nodes.compactMap { node in
                    guard case .object(let pairs) = node else { return nil }
                    var node = Fields(pairs: pairs, path: f.path, line: f.line)
                    return node.string("detail")
                }
            }
            return
        case .signpost, .connect:
            e.duration = try f.duration()
            e.name = f.string("name") ?? (f["name"] == nil ? f.string("path") : nil)
            return
        default:
            break
        }
        e.duration = try f.duration()
        e.entity = f.string("entity")
        e.callSite = f.string("callSite")
        e.context = try f.count("context")
        e.rows = try f.count("rows")
        e.statements = try f.count("statements")
        switch kind {
        case .fault, .cacheMiss:
            e.faultKind = f.string("kind")
            e.object = f.string("object")
            e.relationship = f.string("relationship")
            e.batch = try f.optionalCount("batch")
            e.countOnly = f.bool("countOnly")
            e.missing = f.bool("missing")
        case .save, .merge:
            e.inserted = try f.counts("inserted")
            e.updated = try f.counts("updated")
            e.deleted = try f.counts("deleted")
            e.error = f.string("error")
            if kind == .save {
                e.gauges = try f.gauges()
                e.savedBytes = try f.optionalCount("bytes") ?? 0
            }
        case .batch:
            e.faultKind = f.string("kind")
            e.error = f.string("error")
        case .refresh:
            e.results = try f.count("objects")
        case .invalidate:
            e.results = try f.count("objects")
            e.name = f.string("reason")
        case .resultsController:
            // The controller's fields in the event's own: the cache name in `object`, the cache's answer in `name`
            // and why it missed in `error`, where the sections came from in `purpose`, a round's object changes in
            // `statements`.
            e.faultKind = f.string("kind")
            e.entity = f.string("entity")
            e.keyPath = f.string("sectionNameKeyPath")
            e.object = f.string("cacheName")
            e.results = try f.count("objects")
            e.batchSize = try f.count("batchSize")
            e.name = f.string("cache")
            e.error = f.string("cacheReason")
            e.purpose = f.string("sectionsFrom")
            e.statements = try f.count("inserted") + f.count("deleted") + f.count("moved") + f.count("updated")
        case .prefetchUse:
            e.keyPath = f.string("keyPath")
            e.loaded = try f.count("loaded")
            e.used = try f.count("used")
        case .migration:
            // "step N: 'from' → 'to'", the step a migration event belongs to.
            e.name = "step \(try f.count("step")): '\(f.string("from") ?? "?")' → '\(f.string("to") ?? "?")'"
        case .statement, .queryPlan, .signpost, .connect, .fetch:
            break
        }
    }
}

/// A report error: a message naming what and where.
public struct ReportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
