import Faultline
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
        /// Each context's gauges over time.
        public var growth: ContextGrowth
        public var migrations: [TraceEvent]
        /// Each event's cost by index (`Analyzers.Run.durations`) and their whole: the time findings explain.
        public var durations: [Double]
        public var totalTime: Double
        /// Whether the costs are statement times (else the events' own: a trace without statements).
        public var costsAreStatementTime: Bool

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
            growth = analysis.run.growth
            migrations = analysis.migrations
            durations = analysis.run.durations
            totalTime = analysis.run.totalTime
            costsAreStatementTime = analysis.run.hasStatements
        }

        /// "N distinct problems; their events took X of the Y …".
        public var explanation: String {
            ReportPage.explanation(findings, explained: Analyzers.explainedTime(findings, durations: durations), total: totalTime, statements: costsAreStatementTime)
        }
    }

    public var inputs: [Input]
    /// Rows shown per table (the rest summarized in one line).
    public var top = 25

    /// The traced store's persistent history (`--store`), shown after the traces.
    public var history: (store: String, history: PersistentHistory)?

    public init(inputs: [Input], history: (store: String, history: PersistentHistory)? = nil) {
        self.inputs = inputs
        self.history = history
    }

    public var html: String {
        var body = "<h1>Faultline report</h1>\n"
        if inputs.count > 1 { body += comparison() }
        for (i, input) in inputs.enumerated() { body += section(input, index: i) }
        if let history { body += HistorySection.html(history.history, store: history.store) }
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>Faultline report</title>
        <style>
        body{font:14px/1.45 system-ui,sans-serif;margin:2em;max-width:80em;color:#222}table{border-collapse:collapse;margin:.4em 0 1em}
        td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}td.n{text-align:right}
        code,pre{font-size:12px}pre{margin:0;white-space:pre-wrap}.badge{padding:0 .4em;border-radius:.3em;font-size:12px;white-space:nowrap}
        .index{background:#d8f5d8}.scan{background:#f8d0d0}.sort{background:#fbe7c0}.finding{border-left:4px solid #c33;padding:.2em .8em;margin:.6em 0;background:#fcf4f4}
        .muted{color:#777}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
        table.sortable thead th{cursor:pointer;user-select:none}th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
        svg.chart a:hover text{text-decoration:underline}
        </style></head><body>
        \(body)\(SortableTable.script)
        </body></html>

        """
    }

    private func e(_ text: String) -> String { HTMLText.escape(text) }

    /// "N distinct problems; their events took X of the Y the trace's fetches, saves and faults took (Z%)."
    public static func explanation(_ findings: [Finding], explained: Double, total: Double, statements: Bool) -> String {
        let share = total > 0 ? String(format: " (%.0f%%)", explained / total * 100) : ""
        let count = "\(findings.count) distinct problem\(findings.count == 1 ? "" : "s")"
        return statements
            ? "\(count); their statements took \(seconds(explained)) of the trace's \(seconds(total)) of SQL\(share), each statement counted once; a finding's time is its statements'."
            : "\(count); their events took \(seconds(explained)) of the \(seconds(total)) the trace's fetches, saves and faults took\(share), each event counted once (the trace has no statement events: times are the events' own)."
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
                + ". " + e(Analyzers.callSiteHint) + "</p>\n"
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
        let phases = s.fetchPhases
        if phases.fetches > 0, phases.total > 0 {
            func share(_ part: Double) -> String { String(format: "%.0f%%", part / phases.total * 100) }
            out += "<p>Fetch time (\(phases.fetches) fetch\(phases.fetches == 1 ? "" : "es") that split it): in SQLite \(share(phases.sqlite)), "
                + "rows into the row cache \(share(phases.rowCache)), the context's objects \(share(phases.context)) of \(seconds(phases.total)).</p>\n"
        }
        // Findings.
        out += "<h3>Findings (\(input.findings.count))</h3>\n"
        if !input.findings.isEmpty { out += "<p>\(e(input.explanation))</p>\n" }
        if input.findings.isEmpty { out += "<p>None: no fault storm, scan, sort, repeated fetch, unbatched large fetch or save loop above the thresholds.</p>\n" }
        let anchor = "finding\(index + 1)"
        let shown = Array(input.findings.prefix(top))
        out += ReportCharts.findingBars(shown, anchor: anchor)
        for (k, finding) in shown.enumerated() {
            out += "<div class=finding id=\"\(anchor)-\(k + 1)\"><b>#\(k + 1) \(e(finding.kind.rawValue))</b> — \(e(finding.evidence)) <span class=muted>(\(seconds(finding.cost))\(finding.sharedCost > 0 ? ", and \(seconds(finding.sharedCost)) counted under a costlier finding" : ""); trace lines \(finding.lines.map(String.init).joined(separator: ", "))\(finding.count > finding.lines.count ? ", …" : ""))</span>"
            if let site = finding.callSite { out += "<br>at <code>\(e(site))</code>" }
            if let site = finding.faultlineSite { out += "<br>in Faultline's own code (<code>\(e(site))</code>), not the program's" }
            if finding.segments.count > 1 {
                out += " in \(finding.segments.count) segments: " + finding.segments.prefix(4).map { "<code>\(e($0))</code>" }.joined(separator: ", ") + (finding.segments.count > 4 ? ", …" : "")
            } else if !finding.segment.isEmpty {
                out += " in <code>\(e(finding.segment))</code>"
            }
            out += "<br><b>Fix:</b> \(e(finding.fix))</div>\n"
        }
        if input.findings.count > top { out += "<p class=muted>… and \(input.findings.count - top) more.</p>\n" }
        out += ReportCharts.timeline(input.timeline, duration: s.duration, findings: shown, anchor: anchor)
        out += ReportCharts.contextGrowth(input.growth, duration: s.duration)
        // Statements.
        out += "<h3>Statements by fingerprint (\(s.statements.count))</h3>\n"
        if s.statementCount > 0 { out += "<p class=muted>Durations of all \(s.statementCount) statements:</p>\n" + ReportCharts.durationHistogram(s.statements) }
        var statements = SortableTable(id: "statements\(index + 1)", headers: ["SQL", "count", "total", "p50", "p95", "max", "rows", "plan"])
        for group in s.statements.prefix(top) {
            let badges = group.verdicts.map { v in "<span class=\"badge \(v == "index" ? "index" : v == "full scan" || v == "entity walk" ? "scan" : "sort")\">\(v)</span>" }.joined(separator: " ")
            statements.rows.append([.html("<code>\(e(group.fingerprint))</code>"), .number("\(group.count)", Double(group.count)), time(group.total),
                                    time(group.p50), time(group.p95), time(group.max), .number("\(group.rows)", Double(group.rows)),
                                    .html("\(badges)<pre>\(group.plan.map(e).joined(separator: "\n"))</pre>")])
        }
        if s.statements.count > top {
            let rest = s.statements.dropFirst(top)
            statements.footer = "… \(rest.count) more fingerprints: \(rest.reduce(0) { $0 + $1.count }) statements, \(seconds(rest.reduce(0) { $0 + $1.total }))."
        }
        out += statements.html
        let tables: [(String, String, [TraceSummary.Tally], Bool)] = [
            ("fetches-by-entity", "Fetches by entity", s.fetchesByEntity, true),
            ("fetches-by-call-site", "Fetches by call site", s.fetchesByCallSite, true),
            ("saved-by-entity", "Objects saved by entity", s.savesByEntity, false),
            ("saves-by-call-site", "Saves by call site (rows: objects saved)", s.savesByCallSite, true),
            ("faults-by-entity", "Faults and cache misses by entity and relationship", s.faultsByEntity, false),
            ("misses-by-call-site", "Cache misses by call site", s.missesByCallSite, false),
            ("segments", "Segments (signposts)", s.segments, false),
        ]
        for (id, title, items, rows) in tables { out += tallies("\(id)\(index + 1)", title, items, rows: rows) }
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

    private func time(_ seconds: Double) -> SortableTable.Cell { .number(self.seconds(seconds), seconds) }

    private func tallies(_ id: String, _ title: String, _ items: [TraceSummary.Tally], rows: Bool) -> String {
        guard !items.isEmpty else { return "" }
        var table = SortableTable(id: id, headers: [""] + ["count", "time"] + (rows ? ["rows"] : []))
        for item in items.prefix(top) {
            table.rows.append([.html("<code>\(e(item.key))</code>"), .number("\(item.count)", Double(item.count)), time(item.time)]
                              + (rows ? [.number("\(item.rows)", Double(item.rows))] : []))
        }
        if items.count > top { table.footer = "… \(items.count - top) more" }
        return "<h3>\(e(title))</h3>\n" + table.html
    }

}
