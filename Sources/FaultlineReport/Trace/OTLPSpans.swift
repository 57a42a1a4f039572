import Faultline
import Foundation

/// Reads the spans `TracingProbeRecorder` makes, as an OpenTelemetry collector's file exporter writes them (OTLP
/// JSON: one `ExportTraceServiceRequest` object a line, `resourceSpans` → `scopeSpans` → `spans`), into the events
/// a Faultline trace holds, so that the same analyzers run on a fleet's spans (docs/ecosystem.md).
///
/// A span with `db.query.text` is a statement; `fetch <Entity>`, `save`, `batch …` spans with Faultline's
/// attributes are fetches, saves and batch requests; `fault …` spans and span events are faults (a cache miss when
/// their `faultline.source` is `database`). Other spans (the program's own, other libraries') are skipped. Each
/// line's events are handed over in the order their spans ended; each resource (a process) is a segment named
/// `service.name@host.name/pid`. A field of the wrong type in a Faultline span is an error naming the line, the
/// span and the field.
struct OTLPSpans {
    let path: String
    /// The first span's start (Unix nanoseconds): event times are seconds from it.
    private var base: UInt64?
    private(set) var spans = 0
    private(set) var skipped = 0
    private(set) var processes: [String] = []

    init(path: String) { self.path = path }

    /// True when a trace file's first object is an OTLP export request: of spans, or of the logs or metrics a
    /// collector's file exporter may write to the same file (their lines hold no spans and add nothing).
    static func isExport(_ pairs: [(String, TraceJSON)]) -> Bool {
        pairs.contains { $0.0 == "resourceSpans" || $0.0 == "resourceLogs" || $0.0 == "resourceMetrics" }
    }

    /// One line: an export request's spans as events.
    mutating func read(_ pairs: [(String, TraceJSON)], line: Int, _ body: (TraceEvent) throws -> Void) throws {
        let request = OTLPObject(pairs: pairs, path: path, line: line, what: "the export request")
        for resourceSpans in try request.objects("resourceSpans") {
            let resource = try resourceSpans.object("resource")
            let attributes = try resource?.attributes() ?? [:]
            let process = Self.processName(attributes)
            if !processes.contains(process) { processes.append(process) }
            var events: [(end: UInt64, event: TraceEvent)] = []
            let scopes = try resourceSpans.objects("scopeSpans") + resourceSpans.objects("instrumentationLibrarySpans")
            for scope in scopes {
                for span in try scope.objects("spans") {
                    spans += 1
                    try events.append(contentsOf: self.events(of: span, line: line))
                }
            }
            for (_, event) in events.sorted(by: { $0.end < $1.end }) {
                event.segment = process
                try body(event)
            }
        }
    }

    /// `service.name@host.name/pid` (the parts a resource has).
    private static func processName(_ attributes: [String: OTLPValue]) -> String {
        let service = attributes["service.name"]?.text ?? "unknown service"
        let host = attributes["host.name"]?.text
        let pid = attributes["process.pid"]?.text ?? attributes["service.instance.id"]?.text
        return service + (host.map { "@\($0)" } ?? "") + (pid.map { "/\($0)" } ?? "")
    }

    private mutating func events(of span: OTLPObject, line: Int) throws -> [(end: UInt64, event: TraceEvent)] {
        let name = span.string("name") ?? ""
        let start = try span.nanoseconds("startTimeUnixNano"), end = try span.nanoseconds("endTimeUnixNano")
        let a = try span.attributes()
        let described = "span '\(name.prefix(60))'"
        func fail(_ key: String, _ expected: String) -> ReportError {
            ReportError("\(path):\(line): \(described): attribute \"\(key)\" must be \(expected), got \(a[key].map { "\($0)" }.map { String($0.prefix(40)) } ?? "nothing")")
        }
        func count(_ key: String) throws -> Int {
            guard let value = a[key] else { return 0 }
            guard let n = value.integer, (0...Limits.traceCount).contains(n) else { throw fail(key, "a whole number from 0 to \(Limits.traceCount)") }
            return Int(n)
        }
        func seconds(_ key: String) throws -> Double {
            guard let value = a[key] else { return 0 }
            guard let s = value.number, s.isFinite, (0...Limits.traceSeconds).contains(s) else { throw fail(key, "a time in seconds") }
            return s
        }
        func callSite(_ attributes: [String: OTLPValue]) -> String? {
            guard let file = attributes["code.filepath"]?.text else { return nil }
            return attributes["code.lineno"]?.integer.map { "\(file):\($0)" } ?? file
        }
        if base == nil { base = start }
        func event(_ kind: TraceEvent.Kind, at time: UInt64) -> TraceEvent {
            let origin = base ?? time
            let e = TraceEvent(kind: kind, time: Double(time > origin ? time - origin : 0) / 1e9, line: line)
            e.duration = kind == .fault || kind == .cacheMiss ? 0 : Double(end > start ? end - start : 0) / 1e9
            return e
        }
        var made: [(UInt64, TraceEvent)] = []
        if let sql = a["db.query.text"] {
            let e = event(.statement, at: end)
            e.sql = sql.text
            e.purpose = a["faultline.purpose"]?.text
            e.rows = try count("faultline.rows")
            e.fullScanSteps = try count("faultline.full_scan_steps")
            e.sorts = try count("faultline.sorts")
            e.vmSteps = try count("faultline.vm_steps")
            made.append((end, e))
        } else if name.hasPrefix("fetch "), let entity = a["faultline.entity"]?.text {
            let e = event(.fetch, at: end)
            e.entity = entity
            e.predicate = a["faultline.predicate"]?.text
            e.resultType = a["faultline.result_type"]?.text
            e.rows = try count("faultline.rows")
            e.results = try count("faultline.results")
            e.statements = try count("faultline.statements")
            e.registered = try count("faultline.registered")
            e.batchSize = try count("faultline.batch_size")
            e.sqlTime = try seconds("faultline.sql_time")
            e.stepTime = try seconds("faultline.step_time")
            e.rowCacheTime = try seconds("faultline.row_cache_time")
            e.prefetch = a["faultline.prefetch"]?.texts ?? []
            e.sort = a["faultline.sort"]?.texts ?? []
            e.optionalNotEqual = a["faultline.optional_not_equal"]?.texts ?? []
            e.context = try count("faultline.context")
            e.callSite = callSite(a)
            made.append((end, e))
        } else if name == "save", a["faultline.inserted"] != nil {
            let e = event(.save, at: end)
            e.statements = try count("faultline.statements")
            e.savedBytes = a["faultline.bytes"] == nil ? 0 : try count("faultline.bytes")
            e.context = try count("faultline.context")
            e.callSite = callSite(a)
            for (key, keyPath) in [("inserted", \TraceEvent.inserted), ("updated", \.updated), ("deleted", \.deleted)] {
                var counts: [String: Int] = [:]
                for entry in a["faultline.\(key)_entities"]?.texts ?? [] {
                    let parts = entry.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, let n = Int(parts[1]), (0...Int(Limits.traceCount)).contains(n) else {
                        throw fail("faultline.\(key)_entities", "a list of Entity=count")
                    }
                    counts[String(parts[0]), default: 0] += n
                }
                let total = try count("faultline.\(key)")
                if counts.isEmpty && total > 0 { counts["(entities not recorded)"] = total }
                e[keyPath: keyPath] = counts
            }
            if let status = try span.object("status"), status.integer("code") == 2 { e.error = status.string("message") ?? "error" }
            made.append((end, e))
        } else if name.hasPrefix("batch "), let entity = a["faultline.entity"]?.text {
            let e = event(.batch, at: end)
            e.entity = entity
            e.faultKind = name.split(separator: " ").dropFirst().first.map(String.init)
            e.rows = try count("faultline.rows")
            e.statements = try count("faultline.statements")
            e.context = try count("faultline.context")
            made.append((end, e))
        } else if name.hasPrefix("fault "), a["faultline.object"] != nil {
            made.append((end, try fault(a, at: end, duration: Double(end > start ? end - start : 0) / 1e9, line: line, described: described)))
        } else {
            skipped += 1
        }
        for spanEvent in try span.objects("events") {
            let eventName = spanEvent.string("name") ?? ""
            guard eventName.hasPrefix("fault ") else { continue }
            let time = try spanEvent.nanoseconds("timeUnixNano")
            made.append((time, try fault(try spanEvent.attributes(), at: time, duration: 0, line: line, described: "\(described)'s event '\(eventName.prefix(60))'")))
        }
        return made
    }

    private func fault(_ a: [String: OTLPValue], at time: UInt64, duration: Double, line: Int, described: String) throws -> TraceEvent {
        let database = a["faultline.source"]?.text == "database"
        let origin = base ?? time
        let e = TraceEvent(kind: database ? .cacheMiss : .fault, time: Double(time > origin ? time - origin : 0) / 1e9, line: line)
        e.duration = duration
        e.faultKind = a["faultline.kind"]?.text ?? (a["faultline.relationship"] == nil ? "object" : "relationship")
        e.object = a["faultline.object"]?.text
        e.relationship = a["faultline.relationship"]?.text
        if let value = a["faultline.batch"] {
            guard let n = value.integer, (0...Limits.traceCount).contains(n) else {
                throw ReportError("\(path):\(line): \(described): attribute \"faultline.batch\" must be a whole number")
            }
            e.batch = Int(n)
        }
        if let value = a["faultline.context"] {
            guard let n = value.integer, (0...Limits.traceCount).contains(n) else {
                throw ReportError("\(path):\(line): \(described): attribute \"faultline.context\" must be a whole number")
            }
            e.context = Int(n)
        }
        e.countOnly = a["faultline.count_only"]?.bool ?? false
        e.missing = a["faultline.missing"]?.bool ?? false
        if let file = a["code.filepath"]?.text { e.callSite = a["code.lineno"]?.integer.map { "\(file):\($0)" } ?? file }
        return e
    }
}

/// An OTLP `AnyValue`: `stringValue`, `intValue` (a string of digits in OTLP JSON, or a number), `doubleValue`,
/// `boolValue`, `arrayValue`.
enum OTLPValue: CustomStringConvertible {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case array([OTLPValue])
    case other

    var text: String? {
        switch self {
        case .string(let s): return s
        case .int(let n): return String(n)
        default: return nil
        }
    }

    var integer: Int64? {
        switch self {
        case .int(let n): return n
        case .double(let d) where d.isFinite && d.rounded(.towardZero) == d && abs(d) < 9_007_199_254_740_992: return Int64(d)
        default: return nil
        }
    }

    var number: Double? {
        switch self {
        case .double(let d): return d
        case .int(let n): return Double(n)
        default: return nil
        }
    }

    var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    var texts: [String] {
        if case .array(let items) = self { return items.compactMap(\.text) }
        return text.map { [$0] } ?? []
    }

    var description: String {
        switch self {
        case .string(let s): return "\"\(s)\""
        case .int(let n): return String(n)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .array(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .other: return "a value of another kind"
        }
    }

    init(_ json: TraceJSON) {
        guard case .object(let pairs) = json, let (key, value) = pairs.first else { self = .other; return }
        switch (key, value) {
        case ("stringValue", .string(let s)): self = .string(s)
        case ("intValue", .string(let s)): self = Int64(s).map(OTLPValue.int) ?? .other
        case ("intValue", .number(let text, let d)):
            self = Int64(text).map(OTLPValue.int) ?? (d.isFinite && d.rounded(.towardZero) == d && abs(d) < 9_007_199_254_740_992 ? .int(Int64(d)) : .other)
        case ("doubleValue", .number(_, let d)): self = .double(d)
        case ("boolValue", .bool(let b)): self = .bool(b)
        case ("arrayValue", .object(let inner)):
            guard let values = inner.first(where: { $0.0 == "values" })?.1, case .array(let items) = values else { self = .array([]); return }
            self = .array(items.map(OTLPValue.init))
        default: self = .other
        }
    }
}

/// An object of an OTLP export, read strictly: a key of the wrong shape is an error naming the line and the key.
struct OTLPObject {
    let pairs: [(String, TraceJSON)]
    let path: String
    let line: Int
    let what: String

    subscript(key: String) -> TraceJSON? {
        for pair in pairs where pair.0 == key { return pair.1 }
        return nil
    }

    private func fail(_ key: String, _ expected: String) -> ReportError {
        ReportError("\(path):\(line): \(what): \"\(key)\" must be \(expected), got \(self[key].map { String($0.shown.prefix(40)) } ?? "nothing")")
    }

    func string(_ key: String) -> String? {
        if case .string(let s)? = self[key] { return s }
        return nil
    }

    func integer(_ key: String) -> Int64? {
        guard case .number(let text, let value)? = self[key] else { return nil }
        return Int64(text) ?? (value.isFinite && value.rounded(.towardZero) == value && abs(value) < 9_007_199_254_740_992 ? Int64(value) : nil)
    }

    func object(_ key: String) throws -> OTLPObject? {
        guard let value = self[key] else { return nil }
        if case .null = value { return nil }
        guard case .object(let inner) = value else { throw fail(key, "an object") }
        return OTLPObject(pairs: inner, path: path, line: line, what: "\(what).\(key)")
    }

    func objects(_ key: String) throws -> [OTLPObject] {
        guard let value = self[key] else { return [] }
        if case .null = value { return [] }
        guard case .array(let items) = value else { throw fail(key, "an array") }
        return try items.enumerated().map { i, item in
            guard case .object(let inner) = item else { throw fail(key, "an array of objects") }
            return OTLPObject(pairs: inner, path: path, line: line, what: "\(what).\(key)[\(i)]")
        }
    }

    /// Unix nanoseconds: OTLP JSON writes them as a string of digits (a number is read too).
    func nanoseconds(_ key: String) throws -> UInt64 {
        switch self[key] {
        case .string(let s)?:
            guard let n = UInt64(s) else { throw fail(key, "Unix nanoseconds (a string of digits)") }
            return n
        case .number(let text, _)?:
            guard let n = UInt64(text) else { throw fail(key, "Unix nanoseconds (a whole number)") }
            return n
        case nil, .null?:
            return 0
        default:
            throw fail(key, "Unix nanoseconds (a string of digits)")
        }
    }

    /// `attributes`: `[{"key": …, "value": {…}}]` as a dictionary.
    func attributes() throws -> [String: OTLPValue] {
        var result: [String: OTLPValue] = [:]
        for attribute in try objects("attributes") {
            guard let key = attribute.string("key") else { throw fail("attributes", "a list of {\"key\", \"value\"} objects") }
            result[key] = attribute["value"].map(OTLPValue.init) ?? .other
        }
        return result
    }
}
