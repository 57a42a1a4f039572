import Foundation

/// `faultline report`: one self-contained HTML page (inline CSS and SVG, no network) for one or more traces —
/// summary, findings, timeline, statements by fingerprint with their plans, fetches and faults by entity and call
/// site. Aggregated first, so a million-event trace still makes a small page; every string from a trace is
/// escaped.
public struct ReportPage {
    public struct Input {
        public var path: String
        public var info: TraceFile.Info
        public var summary: TraceSummary
        public var findings: [Finding]
        public var timeline: TraceTimeline
        public var migrations: [TraceEvent]
        /// Each event's duration by index (fetches, saves and faults; 0 for the rest): the time findings explain.
        public var durations: [Double]

        public init(trace: TraceFile, analyzers: Analyzers) {
            var analysis = TraceAnalysis(analyzers: analyzers)
            for event in trace.events { analysis.add(event) }
            self.init(path: trace.path, info: TraceFile.Info(header: trace.header, warnings: trace.warnings, source: trace.source, logStatistics: trace.logStatistics),
                      analysis: analysis)
        }

        /// The report of a trace read streaming into `analysis`.
        public init(path: String, info: TraceFile.Info, analysis: TraceAnalysis) {
            self.path = path
            self.info = info
            var summary = analysis.summary
            summary.finish()
            self.summary = summary
            findings = analysis.run.findings(source: info.source)
            timeline = analysis.timeline
            migrations = analysis.migrations
            durations = analysis.run.durations
        }

        /// "N distinct problems; their events took X of the Y …".
        public var explanation: String { ReportPage.explanation(findings, durations: durations) }
    }

    public var inputs: [Input]
    /// Rows shown per table (the rest summarized in one line).
    public var top = 25

    public init(inputs: [Input]) { self.inputs = inputs }

    public var html: String {
        var body = "<h1>Faultline report</h1>\n"
        if inputs.count > 1 { body += comparison() }
        for (i, input) in inputs.enumerated() { body += section(input, index: i) }
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>Faultline report</title>
        <style>
        body{font:14px/1.45 system-ui,sans-serif;margin:2em;max-width:80em;color:#222}table{border-collapse:collapse;margin:.4em 0 1em}
        td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}td.n{text-align:right}
        code,pre{font-size:12px}pre{margin:0;white-space:pre-wrap}.badge{padding:0 .4em;border-radius:.3em;font-size:12px;white-space:nowrap}
        .index{background:#d8f5d8}.scan{background:#f8d0d0}.sort{background:#fbe7c0}.finding{border-left:4px solid #c33;padding:.2em .8em;margin:.6em 0;background:#fcf4f4}
        .muted{color:#777}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
        </style></head><body>
        \(body)</body></html>

        """
    }

    private func e(_ text: String) -> String { HTMLText.escape(text) }

    /// "N distinct problems; their events took X of the Y the trace's fetches, saves and faults took (Z%)."
    public static func explanation(_ findings: [Finding], durations: [Double]) -> String {
        let (explained, total) = Analyzers.explainedTime(findings, durations: durations)
        let share = total > 0 ? String(format: " (%.0f%%)", explained / total * 100) : ""
        return "\(findings.count) distinct problem\(findings.count == 1 ? "" : "s"); their events took \(seconds(explained)) of the \(seconds(total)) the trace's fetches, saves and faults took\(share), each event counted once."
    }

    private func seconds(_ s: Double) -> String { Self.seconds(s) }

    static func seconds(_ s: Double) -> String {
        s >= 1 ? String(format: "%.2f s", s) : s >= 1e-3 ? String(format: "%.1f ms", s * 1e3) : String(format: "%.1f µs", s * 1e6)
    }

    private func comparison() -> String {
        var out = "<h2>Side by side</h2>\n<table><tr><th></th>" + inputs.map { "<th>\(e(URL(fileURLWithPath: $0.path).lastPathComponent))</th>" }.joined() + "</tr>\n"
        func row(_ name: String, _ value: (Input) -> String) { out += "<tr><td>\(name)</td>" + inputs.map { "<td class=n>\(value($0))</td>" }.joined() + "</tr>\n" }
        row("events") { "\($0.summary.events)" }
        row("statements") { "\($0.summary.statementCount)" }
        row("fetches") { "\($0.summary.fetches.count) (\(self.seconds($0.summary.fetches.time)))" }
        row("faults from the row cache") { "\($0.summary.faults.count)" }
        row("cache misses") { "\($0.summary.cacheMisses.count) (\(self.seconds($0.summary.cacheMisses.time)))" }
        row("saves") { "\($0.summary.saves.count) (\(self.seconds($0.summary.saves.time)))" }
        row("findings") { "\($0.findings.count)" }
        return out + "</table>\n"
    }

    private func section(_ input: Input, index: Int) -> String {
        let s = input.summary
        let t = input.info
        var out = "<h2>\(e(URL(fileURLWithPath: input.path).lastPathComponent))</h2>\n"
        let meta = ["process", "pid", "host", "sqlite", "started"].compactMap { key in t.header[key].map { "\(key) \(e($0))" } }
        out += "<p class=muted>\(meta.joined(separator: " · "))</p>\n"
        if let log = t.logStatistics {
            out += "<p class=muted>\(e(t.source.rawValue)): \(log.coreDataLines) Core Data lines, \(log.otherLines) other lines"
                + (log.notUnderstood > 0 ? ", \(log.notUnderstood) not understood (first at line \(log.firstNotUnderstood ?? 0))" : "")
                + ". A log names no code: findings have no call sites.</p>\n"
        }
        for warning in t.warnings { out += "<p class=muted>\(e(warning))</p>\n" }
        // Summary.
        out += "<h3>Summary</h3>\n<table><tr><th>category</th><th>count</th><th>time</th></tr>\n"
        for tally in [s.fetches, s.saves, s.faults, s.cacheMisses, s.otherSQL] {
            out += "<tr><td>\(e(tally.key))</td><td class=n>\(tally.count)</td><td class=n>\(seconds(tally.time))</td></tr>\n"
        }
        out += "</table>\n<p>\(s.events) events over \(seconds(s.duration)); \(s.statementCount) SQL statements"
        if let ratio = s.rowCacheHitRatio { out += String(format: "; row-cache hit ratio %.1f%% of %d faults", ratio * 100, s.faults.count + s.cacheMisses.count) }
        out += ".</p>\n"
        // Findings.
        out += "<h3>Findings (\(input.findings.count))</h3>\n"
        if !input.findings.isEmpty { out += "<p>\(e(input.explanation))</p>\n" }
        if input.findings.isEmpty { out += "<p>None: no fault storm, scan, sort, repeated fetch, unbatched large fetch or save loop above the thresholds.</p>\n" }
        for finding in input.findings.prefix(top) {
            out += "<div class=finding><b>\(e(finding.kind.rawValue))</b> — \(e(finding.evidence)) <span class=muted>(\(seconds(finding.cost)); trace lines \(finding.lines.map(String.init).joined(separator: ", "))\(finding.count > finding.lines.count ? ", …" : ""))</span>"
            if let site = finding.callSite { out += "<br>at <code>\(e(site))</code>" }
            if finding.segments.count > 1 {
                out += " in \(finding.segments.count) segments: " + finding.segments.prefix(4).map { "<code>\(e($0))</code>" }.joined(separator: ", ") + (finding.segments.count > 4 ? ", …" : "")
            } else if !finding.segment.isEmpty {
                out += " in <code>\(e(finding.segment))</code>"
            }
            out += "<br><b>Fix:</b> \(e(finding.fix))</div>\n"
        }
        if input.findings.count > top { out += "<p class=muted>… and \(input.findings.count - top) more.</p>\n" }
        out += timeline(input.timeline, duration: s.duration)
        // Statements.
        out += "<h3>Statements by fingerprint (\(s.statements.count))</h3>\n<table><tr><th>SQL</th><th>count</th><th>total</th><th>p50</th><th>p95</th><th>max</th><th>rows</th><th>plan</th></tr>\n"
        for group in s.statements.prefix(top) {
            let badges = group.verdicts.map { v in "<span class=\"badge \(v == "index" ? "index" : v == "full scan" || v == "entity walk" ? "scan" : "sort")\">\(v)</span>" }.joined(separator: " ")
            out += "<tr><td><code>\(e(group.fingerprint))</code></td><td class=n>\(group.count)</td><td class=n>\(seconds(group.total))</td><td class=n>\(seconds(group.p50))</td><td class=n>\(seconds(group.p95))</td><td class=n>\(seconds(group.max))</td><td class=n>\(group.rows)</td><td>\(badges)<pre>\(group.plan.map(e).joined(separator: "\n"))</pre></td></tr>\n"
        }
        out += "</table>\n"
        if s.statements.count > top {
            let rest = s.statements.dropFirst(top)
            out += "<p class=muted>… \(rest.count) more fingerprints: \(rest.reduce(0) { $0 + $1.count }) statements, \(seconds(rest.reduce(0) { $0 + $1.total })).</p>\n"
        }
        out += tallies("Fetches by entity", s.fetchesByEntity, rows: true)
        out += tallies("Fetches by call site", s.fetchesByCallSite, rows: true)
        out += tallies("Objects saved by entity", s.savesByEntity, rows: false)
        out += tallies("Saves by call site (rows: objects saved)", s.savesByCallSite, rows: true)
        out += tallies("Faults and cache misses by entity and relationship", s.faultsByEntity, rows: false)
        out += tallies("Cache misses by call site", s.missesByCallSite, rows: false)
        if !s.segments.isEmpty { out += tallies("Segments (signposts)", s.segments, rows: false) }
        let migrations = input.migrations
        if !migrations.isEmpty {
            out += "<h3>Migration</h3>\n<table><tr><th>step</th><th>entity</th><th>rows</th><th>statements</th><th>time</th></tr>\n"
            for m in migrations {
                out += "<tr><td>\(e(m.name ?? ""))</td><td>\(e(m.entity ?? ""))</td><td class=n>\(m.rows)</td><td class=n>\(m.statements)</td><td class=n>\(seconds(m.duration))</td></tr>\n"
            }
            out += "</table>\n"
        }
        return out
    }

    private func tallies(_ title: String, _ items: [TraceSummary.Tally], rows: Bool) -> String {
        guard !items.isEmpty else { return "" }
        var out = "<h3>\(e(title))</h3>\n<table><tr><th></th><th>count</th><th>time</th>\(rows ? "<th>rows</th>" : "")</tr>\n"
        for item in items.prefix(top) {
            out += "<tr><td><code>\(e(item.key))</code></td><td class=n>\(item.count)</td><td class=n>\(seconds(item.time))</td>\(rows ? "<td class=n>\(item.rows)</td>" : "")</tr>\n"
        }
        if items.count > top { out += "<tr><td class=muted colspan=4>… \(items.count - top) more</td></tr>\n" }
        return out + "</table>\n"
    }

    /// Per context (the six busiest), lanes of fetches, saves, faults and cache misses over time, binned (at most
    /// 600 columns however many events).
    private func timeline(_ points: TraceTimeline, duration: Double) -> String {
        let colours = ["#3a7bd5", "#2a9d55", "#999", "#c33"], names = ["fetch", "save", "fault", "cache miss"]
        let kinds = Array(zip(names, colours))
        let bins = 600, width = 900.0, laneHeight = 18.0, left = 150.0
        guard duration > 0 else { return "" }
        let perContext = points.perContext
        let contexts = perContext.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(6).map(\.key).sorted()
        guard !contexts.isEmpty else { return "" }
        // Counts per context, lane and bin, in one pass over the points.
        let row = Dictionary(uniqueKeysWithValues: contexts.enumerated().map { ($0.element, $0.offset) })
        var counts = [[Int]](repeating: [Int](repeating: 0, count: bins), count: contexts.count * kinds.count)
        for i in points.times.indices {
            guard let r = row[Int(points.contexts[i])] else { continue }
            counts[r * kinds.count + Int(points.lanes[i])][min(bins - 1, max(0, Int(points.times[i] / duration * Double(bins))))] += 1
        }
        let rows = contexts.count * kinds.count
        var svg = "<h3>Timeline\(contexts.count > 1 ? " by context" : "")</h3>\n"
        if perContext.count > contexts.count { svg += "<p class=muted>The \(contexts.count) busiest of \(perContext.count) contexts.</p>\n" }
        svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(left + width + 10))\" height=\"\(Int(laneHeight * Double(rows) + 8 * Double(contexts.count) + 24))\" role=\"img\" aria-label=\"timeline\">\n"
        var y = 0.0
        for (r, context) in contexts.enumerated() {
            for (k, kind) in kinds.enumerated() {
                let counts = counts[r * kinds.count + k]
                let peak = max(1, counts.max() ?? 1)
                let name = (k == 0 && contexts.count > 1 ? "context \(context) · " : "") + kind.0
                svg += "<text x=\"0\" y=\"\(y + 13)\" font-size=\"11\">\(e(name))</text>\n"
                for (bin, count) in counts.enumerated() where count > 0 {
                    let h = max(2, (laneHeight - 4) * Double(count) / Double(peak))
                    let x = left + Double(bin) * width / Double(bins)
                    svg += "<rect x=\"\(String(format: "%.1f", x))\" y=\"\(String(format: "%.1f", y + laneHeight - 2 - h))\" width=\"\(String(format: "%.2f", max(1, width / Double(bins))))\" height=\"\(String(format: "%.1f", h))\" fill=\"\(kind.1)\"><title>\(count)</title></rect>\n"
                }
                y += laneHeight
            }
            y += 8
        }
        svg += "<text x=\"\(left)\" y=\"\(y + 12)\" font-size=\"11\">0</text><text x=\"\(left + width - 60)\" y=\"\(y + 12)\" font-size=\"11\">\(seconds(duration))</text>\n"
        return svg + "</svg>\n"
    }

}
