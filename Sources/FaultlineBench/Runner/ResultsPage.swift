import FaultlineReport
import Foundation

/// A plain, self-contained HTML page of a run's results (the reports module makes a richer one from the trace).
public enum ResultsPage {
    /// The page; `diagrams` holds SVG model diagrams by scenario id ("model" for a `--model` run), embedded inline.
    public static func html(_ results: BenchResults, diagrams: [String: String] = [:]) -> String {
        var body = ""
        let run = results.run
        body += "<h1>Faultline bench</h1>\n<p>\(escape(run.scale)) scale (\(run.rows) rows), \(run.repetitions) repetitions, \(escape(run.build)) build, SQLite \(escape(run.sqlite)), \(escape(run.machine.host)) (\(run.machine.processors) processors), revision \(escape(run.revision ?? "unknown")), \(escape(run.started)) – \(escape(run.finished)).</p>\n"
        body += "<p>The run's trace: <a href=\"trace.jsonl.gz\">trace.jsonl.gz</a>; its report with findings: <a href=\"report.html\">report.html</a> (<code>faultline report trace.jsonl.gz</code>, which <code>make bench</code> runs).</p>\n"
        if let model = run.model {
            body += "<p>Model: <code>\(escape(model))</code> (synthetic data).</p>\n"
            if let svg = diagrams["model"] { body += "<details open><summary>Model diagram</summary>\(inlineSVG(svg))</details>\n" }
        }
        if run.build != "release" { body += "<p class=warn>A debug build: these times say nothing about the engine's speed.</p>\n" }
        body += "<table class=summary><tr><th>theme</th><th>scenario</th><th>claim</th><th>verdict</th></tr>\n"
        for scenario in results.scenarios {
            let theme = scenario.theme ?? ScenarioCatalogue.theme(of: scenario.id)
            body += "<tr><td>\(escape(theme?.title ?? ""))</td><td><a href=\"#\(escape(scenario.id))\">\(escape(scenario.id))</a></td><td>\(escape(scenario.title))</td><td>\(badge(scenario))</td></tr>\n"
        }
        body += "</table>\n"
        for scenario in results.scenarios {
            body += "<section id=\"\(escape(scenario.id))\"><h2>\(escape(scenario.title)) \(badge(scenario))</h2>\n"
            body += "<p><b>Claim:</b> \(escape(scenario.claim)) <i>(\(escape(scenario.source)))</i></p>\n<p><b>Outcome:</b> \(escape(scenario.verdict.detail))</p>\n"
            if !scenario.variants.isEmpty {
                body += "<table><tr><th>variant</th><th>by</th><th>median</th><th>min</th><th>max</th><th>per operation</th><th>statements</th><th>rows</th><th>fetches</th><th>faults</th><th>cache misses</th><th>saves</th><th>allocated</th><th>allocations</th><th>kept</th><th>peak resident</th></tr>\n"
                for v in scenario.variants {
                    var cells = [escape(v.name), escape(v.role.rawValue), BenchFormat.seconds(v.median), BenchFormat.seconds(v.min), BenchFormat.seconds(v.max)]
                    cells.append(v.operations > 1 ? BenchFormat.seconds(v.median / Double(v.operations)) : "")
                    if let c = v.counters {
                        cells += [c.statements, c.rows, c.fetches, c.faults, c.cacheMisses, c.saves].map(String.init)
                    } else {
                        cells += Array(repeating: "", count: 6)
                    }
                    if let m = v.memory {
                        cells += [m.bytesAllocated.map(BenchFormat.bytes) ?? "", m.allocations.map(String.init) ?? "", m.liveBytes.map(BenchFormat.bytes) ?? "",
                                  m.peakResidentBytes.map(BenchFormat.bytes) ?? ""]
                    } else {
                        cells += Array(repeating: "", count: 4)
                    }
                    body += "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>\n"
                }
                body += "</table>\n"
                let phased = scenario.variants.filter { $0.phases != nil }
                if !phased.isEmpty {
                    body += "<table><tr><th>variant</th>" + BenchPhase.allCases.map { "<th>\($0.rawValue) (median)</th>" }.joined() + "<th>whole run (median)</th></tr>\n"
                    for v in phased {
                        let cells = [escape(v.name)] + BenchPhase.allCases.map { v.phase($0).map { BenchFormat.seconds($0.median) } ?? "" } + [BenchFormat.seconds(v.median)]
                        body += "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>\n"
                    }
                    body += "</table>\n"
                }
                body += bars(scenario.variants)
            }
            for ratio in scenario.ratios {
                let met = ratio.met.map { $0 ? " — met" : " — <b>missed</b>" } ?? ""
                let paired = ratio.paired == true ? " (paired: the median of the repetitions' own ratios)" : ""
                body += "<p>\(escape(ratio.label))\(paired): <b>\(BenchFormat.ratio(ratio.value))</b>\(ratio.target.map { " (target \(escape($0)))" } ?? "")\(met)</p>\n"
            }
            if let svg = diagrams[scenario.id] { body += "<details><summary>Model diagram</summary>\(inlineSVG(svg))</details>\n" }
            for variant in scenario.variants {
                guard let svg = diagrams["\(scenario.id)/\(variant.name)"] else { continue }
                body += "<details><summary>Object graph after \(escape(variant.name)) (the objects the traced run loaded, its context retaining them; at most 40)</summary>\(inlineSVG(svg))</details>\n"
            }
            let plans = scenario.variants.compactMap { v in v.queryPlans.flatMap { $0.isEmpty ? nil : (v.name, $0) } }
            if !plans.isEmpty {
                body += "<details><summary>Query plans</summary>\n"
                for (name, byStatement) in plans {
                    for (sql, details) in byStatement.sorted(by: { $0.key < $1.key }) {
                        body += "<p>\(escape(name)): <code>\(escape(sql))</code></p><pre>\(details.map(escape).joined(separator: "\n"))</pre>\n"
                    }
                }
                body += "</details>\n"
            }
            body += "</section>\n"
        }
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>Faultline bench — \(escape(run.scale))</title>
        <style>
        body{font:14px/1.4 system-ui,sans-serif;margin:2em;max-width:75em}table{border-collapse:collapse;margin:.5em 0}
        td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}th{background:#f3f3f3}code,pre{font-size:12px}
        .held{background:#d8f5d8}.refuted{background:#f8d0d0}.skipped,.failed{background:#eee}.warn{color:#b00;font-weight:bold}
        .badge{padding:0 .4em;border-radius:.3em;font-size:12px}
        </style></head><body>
        \(body)</body></html>

        """
    }

    /// Two bar charts side by side: each variant's median time and the bytes its memory run allocated (inline SVG).
    static func bars(_ variants: [VariantResult]) -> String {
        func chart(_ title: String, _ values: [(String, Double, String)]) -> String {
            let peak = max(values.map(\.1).max() ?? 0, 1e-12)
            let row = 16.0, left = 150.0, width = 220.0
            var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"\(Int(left + width + 80))\" height=\"\(Int(row * Double(values.count) + 20))\" role=\"img\" aria-label=\"\(escape(title))\">"
            svg += "<text x=\"0\" y=\"11\" font-size=\"11\" font-weight=\"bold\">\(escape(title))</text>"
            for (i, (name, value, label)) in values.enumerated() {
                let y = 16 + Double(i) * row
                let length = max(1, width * value / peak)
                let shown = ChartText.fitted(name, room: left - 8, size: 11)
                svg += "<text x=\"0\" y=\"\(y + 11)\" font-size=\"11\">" + (shown == name ? "" : "<title>\(escape(name))</title>") + "\(escape(shown))</text>"
                svg += String(format: "<rect class=\"bar\" x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"11\" fill=\"#3a7bd5\"></rect>", left, y + 2, length)
                svg += String(format: "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", left + length + 4, y + 11) + label + "</text>"
            }
            return svg + "</svg>"
        }
        var out = chart("time per run", variants.map { ($0.name, $0.median, BenchFormat.seconds($0.median)) })
        let memory = variants.compactMap { v in v.memory?.bytesAllocated.map { (v.name, Double($0), BenchFormat.bytes($0)) } }
        if memory.count == variants.count { out += " " + chart("bytes allocated per run", memory) }
        return "<div>\(out)</div>\n"
    }

    private static func badge(_ scenario: ScenarioResult) -> String {
        let (label, style): (String, String) = switch scenario.verdict.held {
        case true?: ("held", "held")
        case false?: ("refuted", "refuted")
        case nil: (scenario.status, scenario.status == "failed" ? "failed" : "skipped")
        }
        return "<span class=\"badge \(style)\">\(label)</span>"
    }

    /// Graphviz's SVG without its XML prologue and DOCTYPE, to sit inside the page.
    static func inlineSVG(_ svg: String) -> String {
        guard let start = svg.range(of: "<svg") else { return "" }
        return String(svg[start.lowerBound...])
    }

    /// Text made safe for HTML content and attribute values.
    static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
