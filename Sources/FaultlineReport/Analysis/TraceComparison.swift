import Foundation

/// Two traces of the same program compared: statement, fault and cache-miss counts (overall and per signpost
/// segment) and the findings the new trace has that the base did not. A regression: more statements in a segment,
/// or a new finding.
public struct TraceComparison {
    public struct Counts: Sendable, Equatable {
        public var statements = 0
        public var faults = 0
        public var cacheMisses = 0
        public var fetches = 0
        public var saves = 0
    }

    public let segments: [(name: String, base: Counts?, new: Counts?)]
    public let newFindings: [Finding]
    public let goneFindings: [Finding]
    public let regressions: [String]
    public var passes: Bool { regressions.isEmpty }

    public init(base: TraceFile, new: TraceFile, analyzers: Analyzers) {
        func counts(_ trace: TraceFile) -> (order: [String], bySegment: [String: Counts]) {
            var order: [String] = []
            var result: [String: Counts] = [:]
            for event in trace.events {
                let key = event.segment.isEmpty ? "(whole trace)" : event.segment
                if result[key] == nil { order.append(key); result[key] = Counts() }
                switch event.kind {
                case .statement: result[key]!.statements += 1
                case .fault: result[key]!.faults += 1
                case .cacheMiss: result[key]!.faults += 1; result[key]!.cacheMisses += 1
                case .fetch: result[key]!.fetches += 1
                case .save: result[key]!.saves += 1
                default: break
                }
            }
            return (order, result)
        }
        let before = counts(base), after = counts(new)
        var names = before.order
        for name in after.order where !names.contains(name) { names.append(name) }
        segments = names.map { ($0, before.bySegment[$0], after.bySegment[$0]) }
        let oldFindings = analyzers.findings(in: base), newFindings = analyzers.findings(in: new)
        let oldKeys = Set(oldFindings.map(\.identity)), newKeys = Set(newFindings.map(\.identity))
        self.newFindings = newFindings.filter { !oldKeys.contains($0.identity) }
        goneFindings = oldFindings.filter { !newKeys.contains($0.identity) }
        var regressions: [String] = []
        for segment in segments {
            if let b = segment.base, let n = segment.new, n.statements > b.statements {
                regressions.append("\(segment.name): \(n.statements) statements, \(b.statements) before")
            }
        }
        for finding in self.newFindings {
            regressions.append("new finding: \(finding.kind.rawValue)\(finding.segment.isEmpty ? "" : " in \(finding.segment)")\(finding.callSite.map { " at \($0)" } ?? ""): \(finding.evidence)")
        }
        self.regressions = regressions
    }

    public var text: String {
        var lines = ["segment".padding(toLength: 48, withPad: " ", startingAt: 0) + "statements      faults          cache misses"]
        func pair(_ a: Int?, _ b: Int?) -> String { "\(a.map(String.init) ?? "-") → \(b.map(String.init) ?? "-")".padding(toLength: 16, withPad: " ", startingAt: 0) }
        for segment in segments {
            lines.append(segment.name.padding(toLength: 48, withPad: " ", startingAt: 0) + pair(segment.base?.statements, segment.new?.statements)
                         + pair(segment.base?.faults, segment.new?.faults) + pair(segment.base?.cacheMisses, segment.new?.cacheMisses))
        }
        for finding in goneFindings { lines.append("gone: \(finding.kind.rawValue)\(finding.segment.isEmpty ? "" : " in \(finding.segment)"): \(finding.evidence)") }
        for regression in regressions { lines.append("REGRESSION: \(regression)") }
        lines.append(passes ? "no regression" : "\(regressions.count) regression(s)")
        return lines.joined(separator: "\n") + "\n"
    }
}
