import Faultline
import Foundation

/// The report's pictures, as inline SVG (no script, no network): the time each finding costs, the spread of
/// statement durations, the timeline of fetches, saves and faults with the findings marked on it, and each
/// context's objects over time.
enum ReportCharts {
    private static func e(_ text: String) -> String { HTMLText.escape(text) }
    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    /// A bar per finding (in the order shown, numbered as the list), its length the time the finding's events took;
    /// each links to the finding.
    static func findingBars(_ findings: [Finding], anchor: String) -> String {
        guard !findings.isEmpty else { return "" }
        let peak = max(findings.map(\.cost).max() ?? 0, 1e-9)
        let rowHeight = 18.0, left = 260.0, width = 560.0
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=chart width=\"\(Int(left + width + 90))\" height=\"\(Int(rowHeight * Double(findings.count) + 4))\" role=\"img\" aria-label=\"time per finding\">\n"
        for (k, finding) in findings.enumerated() {
            let y = Double(k) * rowHeight
            let length = max(1, width * finding.cost / peak)
            let full = "#\(k + 1) \(finding.kind.rawValue)" + (finding.entity.map { " · \($0)" } ?? "")
            svg += "<a href=\"#\(anchor)-\(k + 1)\"><text x=\"0\" y=\"\(f(y + 13))\" font-size=\"11\"><title>\(e(full))</title>\(e(Self.barLabel(finding, number: k + 1)))</text>"
            svg += "<rect class=bar x=\"\(f(left))\" y=\"\(f(y + 3))\" width=\"\(f(length))\" height=\"\(f(rowHeight - 6))\" fill=\"\(colour(finding))\"><title>\(e(finding.kind.rawValue)): \(ReportPage.seconds(finding.cost))</title></rect>"
            svg += "<text x=\"\(f(left + length + 6))\" y=\"\(f(y + 13))\" font-size=\"11\">\(ReportPage.seconds(finding.cost))</text></a>\n"
        }
        return svg + "</svg>\n"
    }

    /// The width left of the bars for a bar's label, in px at 11 px.
    static let barLabelWidth = 250.0
    /// The most characters of a bar's label.
    static let barLabelLength = 44

    /// `#3 kind · Entity`, within `barLabelWidth` by `ChartText.width`'s generous estimate: the kind shortened first (with
    /// "…"), then the entity's end; the full text is the label's title.
    static func barLabel(_ finding: Finding, number: Int) -> String {
        let head = "#\(number) "
        var kind = finding.kind.rawValue, entity = finding.entity ?? ""
        // No more of the entity than the label could show: each step below rebuilds the label.
        if entity.utf8.count > barLabelLength, entity.prefix(barLabelLength + 1).count > barLabelLength {
            entity = entity.prefix(barLabelLength) + "…"
        }
        func label() -> String { head + kind + (entity.isEmpty ? "" : " · " + entity) }
        func fits() -> Bool { label().count <= barLabelLength && ChartText.width(label(), size: 11) <= barLabelWidth }
        while !fits() && kind.count > 7 { kind = String(kind.dropLast(kind.hasSuffix("…") ? 2 : 1)) + "…" }
        while !fits() && entity.count > 4 { entity = String(entity.dropLast(entity.hasSuffix("…") ? 2 : 1)) + "…" }
        return label()
    }

    private static func colour(_ finding: Finding) -> String {
        switch finding.severity {
        case "high": return "#c33"
        case "medium": return "#e0922f"
        default: return "#8a8a8a"
        }
    }

    /// Bin edges of the duration histogram: 1 µs to 1 s, two bins a decade.
    static let durationEdges: [Double] = [1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1]

    /// How many statements took how long: a bar per bin, from under 1 µs to over 1 s, on a logarithmic time axis.
    static func durationHistogram(_ statements: [TraceSummary.StatementGroup]) -> String {
        var counts = [Int](repeating: 0, count: durationEdges.count + 1)
        for group in statements {
            for d in group.durations {
                var bin = 0
                while bin < durationEdges.count && d >= durationEdges[bin] { bin += 1 }
                counts[bin] += 1
            }
        }
        let total = counts.reduce(0, +)
        guard total > 0 else { return "" }
        let peak = Double(counts.max() ?? 1)
        let barWidth = 56.0, height = 120.0, top = 16.0
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=chart width=\"\(Int(barWidth * Double(counts.count) + 10))\" height=\"\(Int(height + top + 34))\" role=\"img\" aria-label=\"statement durations\">\n"
        for (bin, count) in counts.enumerated() {
            let x = Double(bin) * barWidth
            let h = count == 0 ? 0 : max(1, height * Double(count) / peak)
            let label = bin == 0 ? "< 1 µs" : bin == durationEdges.count ? "≥ 1 s" : "≥ " + ReportPage.seconds(durationEdges[bin - 1]).replacingOccurrences(of: ".0 ", with: " ")
            svg += "<rect class=bar x=\"\(f(x + 4))\" y=\"\(f(top + height - h))\" width=\"\(f(barWidth - 8))\" height=\"\(f(h))\" fill=\"#3a7bd5\"><title>\(label): \(count) statements</title></rect>"
            if count > 0 { svg += "<text x=\"\(f(x + barWidth / 2))\" y=\"\(f(top + height - h - 3))\" font-size=\"10\" text-anchor=\"middle\">\(count)</text>" }
            svg += "<text x=\"\(f(x + barWidth / 2))\" y=\"\(f(top + height + 14))\" font-size=\"10\" text-anchor=\"middle\">\(label)</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// Per context (the six busiest), lanes of fetches, saves, faults and cache misses over time, binned (at most
    /// 600 columns however many events), and under them a lane with each finding shown (numbered as the list) from
    /// its first event to its last.
    static func timeline(_ points: TraceTimeline, duration: Double, findings: [Finding], anchor: String) -> String {
        let kinds = [("fetch", "#3a7bd5"), ("save", "#2a9d55"), ("fault", "#999"), ("cache miss", "#c33")]
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
        let marked = findings.enumerated().filter { $0.element.times != nil }
        let findingLanes = Double(marked.count) * 10 + (marked.isEmpty ? 0 : 14)
        let height = laneHeight * Double(contexts.count * kinds.count) + 8 * Double(contexts.count) + findingLanes + 24
        var svg = "<h3>Timeline\(contexts.count > 1 ? " by context" : "")</h3>\n"
        if perContext.count > contexts.count { svg += "<p class=muted>The \(contexts.count) busiest of \(perContext.count) contexts.</p>\n" }
        svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=chart width=\"\(Int(left + width + 10))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"timeline\">\n"
        var y = 0.0
        for (r, context) in contexts.enumerated() {
            for (k, kind) in kinds.enumerated() {
                let counts = counts[r * kinds.count + k]
                let peak = max(1, counts.max() ?? 1)
                let name = (k == 0 && contexts.count > 1 ? "context \(context) · " : "") + kind.0
                svg += "<text x=\"0\" y=\"\(f(y + 13))\" font-size=\"11\">\(e(name))</text>\n"
                for (bin, count) in counts.enumerated() where count > 0 {
                    let h = max(2, (laneHeight - 4) * Double(count) / Double(peak))
                    let x = left + Double(bin) * width / Double(bins)
                    svg += "<rect x=\"\(f(x))\" y=\"\(f(y + laneHeight - 2 - h))\" width=\"\(String(format: "%.2f", max(1, width / Double(bins))))\" height=\"\(f(h))\" fill=\"\(kind.1)\"><title>\(count)</title></rect>\n"
                }
                y += laneHeight
            }
            y += 8
        }
        if !marked.isEmpty {
            svg += "<text x=\"0\" y=\"\(f(y + 10))\" font-size=\"11\">findings</text>\n"
            y += 4
            for (k, finding) in marked {
                let span = finding.times!
                let x0 = left + min(1, span.lowerBound / duration) * width
                let x1 = max(x0 + 2, left + min(1, span.upperBound / duration) * width)
                svg += "<a href=\"#\(anchor)-\(k + 1)\"><rect class=marker x=\"\(f(x0))\" y=\"\(f(y + 2))\" width=\"\(f(x1 - x0))\" height=\"6\" fill=\"\(colour(finding))\" opacity=\"0.8\"><title>#\(k + 1) \(e(finding.kind.rawValue)): \(ReportPage.seconds(span.lowerBound))–\(ReportPage.seconds(span.upperBound))</title></rect>"
                svg += "<text x=\"\(f(min(x1 + 3, left + width - 20)))\" y=\"\(f(y + 9))\" font-size=\"9\">#\(k + 1)</text></a>\n"
                y += 10
            }
            y += 10
        }
        svg += "<text x=\"\(left)\" y=\"\(f(y + 12))\" font-size=\"11\">0</text><text x=\"\(left + width - 60)\" y=\"\(f(y + 12))\" font-size=\"11\">\(ReportPage.seconds(duration))</text>\n"
        return svg + "</svg>\n"
    }

    /// Per context (the six with the most points), its registered and materialized objects and the rows in the row
    /// cache over time, from the gauges its fetches and saves recorded: a context that only grows stands out.
    static func contextGrowth(_ growth: ContextGrowth, duration: Double) -> String {
        let shown = growth.series.filter { $0.points.count >= 2 }.sorted { $0.points.count > $1.points.count }.prefix(6).sorted { $0.context < $1.context }
        guard !shown.isEmpty, duration > 0 else { return "" }
        let width = 900.0, height = 80.0, left = 150.0, gap = 28.0
        let lines: [(String, String, KeyPath<ContextGauges, Int>)] = [("registered", "#3a7bd5", \.registeredObjects),
                                                                     ("materialized", "#2a9d55", \.materializedObjects),
                                                                     ("row cache", "#999", \.rowCacheRows)]
        var svg = "<h3>Objects held over time</h3>\n<p class=muted>Each context's registered and materialized objects, and the rows in the row cache, as its fetches and saves ended: "
        svg += lines.map { "<span style=\"color:\($0.1)\">\($0.0)</span>" }.joined(separator: ", ") + ".</p>\n"
        svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=chart id=growth width=\"\(Int(left + width + 10))\" height=\"\(Int(Double(shown.count) * (height + gap)))\" role=\"img\" aria-label=\"objects held over time\">\n"
        var y = 0.0
        for series in shown {
            let peak = max(1, series.points.map { max($0.gauges.registeredObjects, $0.gauges.rowCacheRows) }.max() ?? 1)
            svg += "<text x=\"0\" y=\"\(f(y + 14))\" font-size=\"11\">context \(series.context)</text>"
            svg += "<text x=\"0\" y=\"\(f(y + 28))\" font-size=\"10\" fill=\"#777\">up to \(peak)</text>\n"
            svg += "<line x1=\"\(left)\" y1=\"\(f(y + height))\" x2=\"\(left + width)\" y2=\"\(f(y + height))\" stroke=\"#ddd\"/>\n"
            for (name, colour, key) in lines {
                let points = series.points.map { point in
                    "\(f(left + min(1, max(0, point.time / duration)) * width)),\(f(y + height - Double(point.gauges[keyPath: key]) / Double(peak) * height))"
                }.joined(separator: " ")
                svg += "<polyline class=gauge data-series=\"\(name)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"1.5\" points=\"\(points)\"><title>context \(series.context): \(name)</title></polyline>\n"
            }
            y += height + gap
        }
        return svg + "</svg>\n"
    }
}
