import Foundation

/// A trace in Chrome's trace-event format (JSON object with `traceEvents`): opens in Perfetto or chrome://tracing
/// as a timeline with a track per kind of event; signposts become instant events. Written as the events come, so
/// a trace of millions of events is converted in bounded memory.
public final class ChromeTraceWriter {
    private static let tracks: [TraceEvent.Kind: Int] = [.fetch: 1, .save: 2, .statement: 3, .fault: 4, .cacheMiss: 5]
    /// Bytes gathered before they are handed to the sink.
    private static let flushBytes = 1 << 20

    private var buffer: [UInt8] = []
    private var first = true
    private let sink: ([UInt8]) throws -> Void

    /// A writer that hands its output, in pieces, to `sink`.
    public init(sink: @escaping ([UInt8]) throws -> Void) {
        self.sink = sink
        buffer.reserveCapacity(Self.flushBytes + 4096)
        append(#"{"displayTimeUnit":"ms","traceEvents":["#)
        for (kind, tid) in Self.tracks.sorted(by: { $0.value < $1.value }) {
            object {
                field("name", "thread_name"); field("ph", "M"); number("pid", 1); number("tid", Double(tid))
                key("args"); append("{\"name\":"); string(kind.rawValue); append("}")
            }
        }
    }

    public func add(_ event: TraceEvent) throws {
        let end = event.time * 1e6
        switch event.kind {
        case .signpost:
            object { field("name", event.name ?? ""); field("ph", "i"); field("s", "g"); number("ts", end); number("pid", 1); number("tid", 0); field("cat", "signpost") }
        case .fetch, .save, .statement, .fault, .cacheMiss:
            let name: String
            switch event.kind {
            case .fetch: name = "fetch \(event.entity ?? "?")"
            case .save: name = "save (\(event.savedObjects) objects)"
            case .statement: name = String((event.sql ?? "").prefix(80))
            default: name = "\(event.kind == .cacheMiss ? "cache miss" : "fault") \(event.objectEntity ?? "?")\(event.relationship.map { ".\($0)" } ?? "")"
            }
            let duration = event.duration * 1e6
            object {
                field("name", name); field("ph", "X"); number("ts", max(0, end - duration)); number("dur", duration); number("pid", 1)
                number("tid", Double(Self.tracks[event.kind]!)); field("cat", event.kind.rawValue)
                key("args"); append("{\"line\":"); integer(event.line)
                if let site = event.callSite { append(",\"callSite\":"); string(site) }
                if let predicate = event.predicate { append(",\"predicate\":"); string(predicate) }
                if let sql = event.sql { append(",\"sql\":"); string(sql) }
                if event.kind == .fetch { append(",\"results\":"); integer(event.results) }
                append("}")
            }
        case .batch, .merge, .refresh, .invalidate, .resultsController, .migration:
            let duration = event.duration * 1e6
            object {
                field("name", "\(event.kind.rawValue) \(event.entity ?? "")"); field("ph", "X"); number("ts", max(0, end - duration)); number("dur", duration)
                number("pid", 1); number("tid", 2); field("cat", event.kind.rawValue); key("args"); append("{\"line\":"); integer(event.line); append("}")
            }
        case .connect, .queryPlan, .prefetchUse:
            return
        }
        if buffer.count >= Self.flushBytes { try flush() }
    }

    /// Ends the document and hands the rest to the sink.
    public func finish() throws {
        append("]}")
        try flush()
    }

    private func flush() throws {
        try sink(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    // Building one event object.
    private var firstField = true

    private func object(_ body: () -> Void) {
        append(first ? "{" : ",{")
        first = false
        firstField = true
        body()
        append("}")
    }

    private func key(_ name: String) {
        append(firstField ? "\"" : ",\"")
        firstField = false
        append(name)
        append("\":")
    }

    private func field(_ name: String, _ value: String) { key(name); string(value) }
    private func append(_ text: String) { buffer.append(contentsOf: text.utf8) }

    /// A time in microseconds: whole, or with three decimals (nanoseconds).
    private func number(_ name: String, _ value: Double) {
        key(name)
        let nanoseconds = Int64((value * 1000).rounded())
        integer(Int(nanoseconds / 1000))
        let fraction = Int(abs(nanoseconds % 1000))
        if fraction != 0 {
            buffer.append(UInt8(ascii: "."))
            buffer.append(UInt8(48 + fraction / 100))
            buffer.append(UInt8(48 + fraction / 10 % 10))
            buffer.append(UInt8(48 + fraction % 10))
        }
    }

    private func integer(_ value: Int) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var n = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[count] = UInt8(48 + n % 10)
                n /= 10
                count += 1
            } while n > 0
            for i in stride(from: count - 1, through: 0, by: -1) { buffer.append(raw[i]) }
        }
    }

    /// `text` as a JSON string, escaped byte by byte.
    private func string(_ text: String) {
        buffer.append(UInt8(ascii: "\""))
        ByteRuns.forEach(in: text, stoppingAt: Self.escaped) { run, stop in
            buffer.append(contentsOf: run)
            guard let b = stop else { return }
            switch b {
            case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\\")); buffer.append(b)
            case UInt8(ascii: "\\"): buffer.append(b); buffer.append(b)
            default:
                buffer.append(contentsOf: "\\u00".utf8)
                buffer.append(Self.hex[Int(b >> 4)])
                buffer.append(Self.hex[Int(b & 0xF)])
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private static let hex = Array("0123456789abcdef".utf8)
    /// The bytes a JSON string escapes (NUL always stops a run).
    private static let escaped = [UInt8(ascii: "\""), UInt8(ascii: "\\")] + Array(1..<0x20)
}

public enum ChromeTrace {
    /// `trace` in Chrome's trace-event format, in memory.
    public static func data(_ trace: TraceFile) throws -> Data {
        var data = Data()
        let writer = ChromeTraceWriter { data.append(contentsOf: $0) }
        for event in trace.events { try writer.add(event) }
        try writer.finish()
        return data
    }
}
