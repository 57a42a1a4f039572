import Foundation

/// A trace in Chrome's trace-event format (JSON object with `traceEvents`): opens in Perfetto or chrome://tracing
/// as a timeline with a track per kind of event; signposts become instant events.
public enum ChromeTrace {
    public static func data(_ trace: TraceFile) throws -> Data {
        let tracks: [TraceEvent.Kind: Int] = [.fetch: 1, .save: 2, .statement: 3, .fault: 4, .cacheMiss: 5]
        var events: [[String: Any]] = tracks.map { kind, tid in
            ["name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": ["name": kind.rawValue]]
        }
        for event in trace.events {
            let end = event.time * 1e6
            switch event.kind {
            case .signpost:
                events.append(["name": event.name ?? "", "ph": "i", "s": "g", "ts": end, "pid": 1, "tid": 0, "cat": "signpost"])
            case .fetch, .save, .statement, .fault, .cacheMiss:
                let name: String
                switch event.kind {
                case .fetch: name = "fetch \(event.entity ?? "?")"
                case .save: name = "save (\(event.savedObjects) objects)"
                case .statement: name = String((event.sql ?? "").prefix(80))
                default: name = "\(event.kind == .cacheMiss ? "cache miss" : "fault") \(event.objectEntity ?? "?")\(event.relationship.map { ".\($0)" } ?? "")"
                }
                var args: [String: Any] = ["line": event.line]
                if let site = event.callSite { args["callSite"] = site }
                if let predicate = event.predicate { args["predicate"] = predicate }
                if let sql = event.sql { args["sql"] = sql }
                if event.kind == .fetch { args["results"] = event.results }
                let duration = event.duration * 1e6
                events.append(["name": name, "ph": "X", "ts": end - duration, "dur": duration, "pid": 1, "tid": tracks[event.kind]!,
                               "cat": event.kind.rawValue, "args": args])
            case .batch, .merge, .refresh, .migration:
                events.append(["name": "\(event.kind.rawValue) \(event.entity ?? "")", "ph": "X", "ts": end - event.duration * 1e6, "dur": event.duration * 1e6,
                               "pid": 1, "tid": 2, "cat": event.kind.rawValue, "args": ["line": event.line]])
            case .connect, .queryPlan, .prefetchUse:
                break
            }
        }
        return try JSONSerialization.data(withJSONObject: ["traceEvents": events, "displayTimeUnit": "ms"])
    }
}
