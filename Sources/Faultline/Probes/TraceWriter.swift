import Foundation

/// Writes probe events as JSON Lines (docs/trace-format.md): a header line, then one event per line. Events are
/// queued as they happen and formatted and written whole on a queue of the writer's own, every 100 ms (or 4,096
/// events) and at exit, so the traced thread pays little, a crash loses at most the last interval, and no line
/// before it is ever broken.
public final class TraceWriter: ProbeRecorder, @unchecked Sendable {
    /// The trace format's version.
    public static let formatVersion = 1

    public let path: String
    private let handle: FileHandle
    private let includeBindValues: Bool
    private var pending: [(time: Double, event: ProbeEvent)] = []
    private var flushScheduled = false
    private var lastFlush = DispatchTime.now().uptimeNanoseconds
    private let start = DispatchTime.now().uptimeNanoseconds
    private let lock = NSLock()
    /// Serializes writes, so lines land in the order their events happened.
    private let writeLock = NSLock()
    private let writerQueue = DispatchQueue(label: "faultline.trace-writer", qos: .utility)

    /// Creates (or replaces) the trace file at `path` and writes its header.
    public init(path: String, includeBindValues: Bool = false) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteNoPermission)
        }
        self.path = path
        self.handle = handle
        self.includeBindValues = includeBindValues
        var header = JSONLine()
        header.string("type", "header")
        header.string("format", "faultline-trace")
        header.int("version", Self.formatVersion)
        header.string("started", ISO8601DateFormatter().string(from: Date()))
        header.string("process", ProcessInfo.processInfo.processName)
        header.int("pid", Int(ProcessInfo.processInfo.processIdentifier))
        header.string("sqlite", SQLiteConnection.libraryVersion)
        header.string("host", ProcessInfo.processInfo.hostName)
        handle.write(Data((header.finish() + "\n").utf8))
    }

    deinit {
        flush()
        try? handle.close()
    }

    public func record(_ event: ProbeEvent) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.lock()
        pending.append((Double(now &- start) / 1e9, event))
        let due = !flushScheduled && (pending.count >= 4096 || now &- lastFlush > 100_000_000)
        if due { flushScheduled = true }
        lock.unlock()
        if due { writerQueue.async { self.flush() } }
    }

    /// Formats and writes every queued event now.
    public func flush() {
        writeLock.lock()
        defer { writeLock.unlock() }
        lock.lock()
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        flushScheduled = false
        lastFlush = DispatchTime.now().uptimeNanoseconds
        lock.unlock()
        guard !batch.isEmpty else { return }
        var text = ""
        text.reserveCapacity(batch.count * 160)
        for (time, event) in batch {
            text += Self.line(for: event, at: time, bindValues: includeBindValues)
            text += "\n"
        }
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
    }

    /// One event as a JSON line (hand-written: an encoder per event would cost more than the event).
    static func line(for event: ProbeEvent, at time: Double, bindValues: Bool) -> String {
        var json = JSONLine()
        json.string("type", event.type)
        json.double("t", time)
        switch event {
        case .connect(let e):
            json.string("path", e.path)
        case .statement(let e):
            json.string("sql", e.sql)
            json.string("purpose", e.purpose.rawValue)
            json.strings("bindings", bindValues && !e.bindings.isEmpty ? e.bindings : Array(repeating: "?", count: e.parameters))
            json.double("duration", e.duration)
            json.int("rows", e.rows)
            json.int("fullScanSteps", e.fullScanSteps)
            json.int("sorts", e.sorts)
            json.int("autoIndexes", e.autoIndexes)
            json.int("vmSteps", e.vmSteps)
        case .queryPlan(let e):
            json.string("sql", e.sql)
            json.raw("nodes", "[" + e.nodes.map { node in
                var n = JSONLine()
                n.int("id", node.id)
                n.int("parent", node.parent)
                n.string("detail", node.detail)
                return n.finish()
            }.joined(separator: ",") + "]")
        case .fetch(let e):
            json.string("entity", e.entity)
            json.optionalString("predicate", e.predicate?.predicateFormat)
            json.strings("sort", e.sort.map(\.description))
            json.int("limit", e.limit)
            json.int("offset", e.offset)
            json.int("batchSize", e.batchSize)
            json.strings("prefetch", e.prefetch)
            json.string("resultType", e.resultType)
            json.int("statements", e.statements)
            json.int("rows", e.rows)
            json.int("results", e.results)
            json.double("sqlTime", e.sqlTime)
            json.double("totalTime", e.totalTime)
            json.optionalString("callSite", e.callSite?.description)
        case .fault(let e):
            json.string("kind", e.kind.rawValue)
            json.string("object", e.object)
            json.optionalString("relationship", e.relationship)
            json.string("source", e.source.rawValue)
            if let count = e.count { json.int("count", count) }
            if let batch = e.batch { json.int("batch", batch) }
            if e.source == .database || e.stack != nil { json.optionalString("callSite", e.stack?.callSite) }
            json.double("duration", e.duration)
        case .save(let e):
            json.raw("inserted", JSONLine.counts(e.inserted))
            json.raw("updated", JSONLine.counts(e.updated))
            json.raw("deleted", JSONLine.counts(e.deleted))
            json.int("statements", e.statements)
            json.double("duration", e.duration)
            json.int("conflicts", e.conflicts)
            json.optionalString("error", e.error)
            json.optionalString("callSite", e.callSite?.description)
        }
        return json.finish()
    }
}

/// A JSON object written field by field.
struct JSONLine {
    private var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text.append(",") }
        first = false
        text.append("\"")
        text.append(name)
        text.append("\":")
    }

    mutating func string(_ name: String, _ value: String) { key(name); text += Self.quote(value) }
    mutating func optionalString(_ name: String, _ value: String?) { key(name); text += value.map(Self.quote) ?? "null" }
    mutating func int(_ name: String, _ value: Int) { key(name); text += String(value) }
    mutating func double(_ name: String, _ value: Double) { key(name); text += value.isFinite ? String(value) : "null" }
    mutating func strings(_ name: String, _ values: [String]) { key(name); text += "[" + values.map(Self.quote).joined(separator: ",") + "]" }
    mutating func raw(_ name: String, _ json: String) { key(name); text += json }
    func finish() -> String { text + "}" }

    static func counts(_ values: [String: Int]) -> String {
        "{" + values.sorted { $0.key < $1.key }.map { quote($0.key) + ":" + String($0.value) }.joined(separator: ",") + "}"
    }

    static func quote(_ s: String) -> String {
        // Most strings (SQL, names, URIs) need no escaping: copy them whole.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) { return "\"" + s + "\"" }
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}
