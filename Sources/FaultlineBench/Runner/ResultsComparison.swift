import Foundation

/// Two benchmark runs side by side: the regression gate a user puts in CI. A scenario regresses when an engine
/// variant is slower than the baseline beyond a threshold (times are noisy, so only beyond it), allocates more
/// bytes than before beyond a threshold of its own, or issues more SQL statements than before (counts are exact, so
/// any increase, unless allowed).
public struct ResultsComparison {
    /// One variant in both runs.
    public struct Row: Sendable {
        public var scenario: String
        public var variant: String
        public var role: VariantRole
        public var baseSeconds: Double
        public var newSeconds: Double
        public var baseCounters: ProbeCounters?
        public var newCounters: ProbeCounters?
        public var timeRatio: Double { baseSeconds > 0 ? newSeconds / baseSeconds : 1 }
        /// Bytes allocated (per run, or per operation when the runs' operations differ), when both runs counted them.
        public var baseAllocated: Double?
        public var newAllocated: Double?
        /// Why this row fails the gate (empty when it passes).
        public var regressions: [String]
    }

    public let base: BenchResults
    public let new: BenchResults
    public let rows: [Row]
    /// Scenarios or variants only one run has, and other things worth a look that do not fail the gate.
    public let notes: [String]

    public var regressions: [Row] { rows.filter { !$0.regressions.isEmpty } }
    public var passes: Bool { regressions.isEmpty }

    /// Compares `new` with `base`. `maxSlowdown` is a fraction (0.1 = 10% slower allowed), `maxMemoryGrowth` too
    /// (for the bytes an engine variant allocates); `allowed` lists scenarios (`id`) or variants (`id/variant`) whose
    /// statement counts may grow.
    public init(base: BenchResults, new: BenchResults, maxSlowdown: Double = 0.1, maxMemoryGrowth: Double = 0.1, allowed: Set<String> = []) {
        self.base = base
        self.new = new
        var rows: [Row] = []
        var notes: [String] = []
        if base.run.build != new.run.build { notes.append("the runs are \(base.run.build) and \(new.run.build) builds: their times do not compare") }
        if base.run.rows != new.run.rows { notes.append("the runs used different scales (\(base.run.rows) and \(new.run.rows) rows): counts and times do not compare") }
        for scenario in new.scenarios {
            guard let old = base.scenarios.first(where: { $0.id == scenario.id }) else {
                notes.append("\(scenario.id): new scenario (no baseline)")
                continue
            }
            guard scenario.status == "ran", old.status == "ran" else {
                if scenario.status != old.status { notes.append("\(scenario.id): \(old.status) in the baseline, \(scenario.status) now") }
                continue
            }
            if old.verdict.held == true && scenario.verdict.held == false {
                notes.append("\(scenario.id): the claim held in the baseline and is refuted now (\(scenario.verdict.detail))")
            }
            for variant in scenario.variants {
                guard let before = old.variants.first(where: { $0.name == variant.name }) else {
                    notes.append("\(scenario.id)/\(variant.name): new variant (no baseline)")
                    continue
                }
                // A run of the variant does a different number of operations than the baseline's did (the scenario
                // changed): its time and statements are compared per operation.
                let perOperation = before.operations != variant.operations && before.operations > 0 && variant.operations > 0
                let (baseRun, newRun) = perOperation ? (Double(before.operations), Double(variant.operations)) : (1, 1)
                if perOperation {
                    let operations = before.operations == 1 ? "1 operation" : "\(before.operations) operations"
                    notes.append("\(scenario.id)/\(variant.name): \(operations) a run in the baseline, \(variant.operations) now: compared per operation")
                }
                var row = Row(scenario: scenario.id, variant: variant.name, role: variant.role, baseSeconds: before.median / baseRun,
                              newSeconds: variant.median / newRun, baseCounters: before.counters, newCounters: variant.counters, regressions: [])
                if variant.role == .engine && row.timeRatio > 1 + maxSlowdown {
                    row.regressions.append("\(BenchFormat.ratio(row.timeRatio)) the baseline's time (more than \(Int((maxSlowdown * 100).rounded()))% slower)")
                }
                if let a = before.memory?.bytesAllocated, let b = variant.memory?.bytesAllocated {
                    row.baseAllocated = Double(a) / baseRun
                    row.newAllocated = Double(b) / newRun
                    if variant.role == .engine, let base = row.baseAllocated, let new = row.newAllocated, new > base * (1 + maxMemoryGrowth), new - base >= 1024 {
                        row.regressions.append("allocates \(BenchFormat.bytes(Int(new))), \(BenchFormat.bytes(Int(base))) in the baseline (more than \(Int((maxMemoryGrowth * 100).rounded()))% more)")
                    }
                }
                let isAllowed = allowed.contains(scenario.id) || allowed.contains("\(scenario.id)/\(variant.name)")
                if let a = before.counters?.statements, let b = variant.counters?.statements, Double(b) / newRun > Double(a) / baseRun, !isAllowed {
                    row.regressions.append(perOperation ? "\(b) statements in \(variant.operations) operations, \(a) in \(before.operations) in the baseline"
                                                        : "\(b) statements, \(a) in the baseline")
                }
                rows.append(row)
            }
        }
        for scenario in base.scenarios where !new.scenarios.contains(where: { $0.id == scenario.id }) {
            notes.append("\(scenario.id): in the baseline only")
        }
        self.rows = rows
        self.notes = notes
    }

    /// Parses `10%`, `10` (percent) or `0.1`.
    public static func parseSlowdown(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix("%") { return Double(trimmed.dropLast()).map { $0 / 100 }.flatMap { $0 >= 0 && $0.isFinite ? $0 : nil } }
        guard let value = Double(trimmed), value >= 0, value.isFinite else { return nil }
        return value >= 1 ? value / 100 : value
    }

    /// The comparison as a text table, regressions marked.
    public var text: String {
        var lines = ["compare: baseline \(base.run.revision ?? base.run.started) (\(base.run.scale)) → \(new.run.revision ?? new.run.started) (\(new.run.scale))"]
        for note in notes { lines.append("note: \(note)") }
        lines.append("scenario / variant".padding(toLength: 52, withPad: " ", startingAt: 0) + "baseline".leftPadded(11) + "new".leftPadded(11) + "ratio".leftPadded(8) + "   statements      cache misses    allocated")
        for row in rows {
            let statements = [row.baseCounters?.statements, row.newCounters?.statements].map { $0.map(String.init) ?? "-" }.joined(separator: " → ")
            let misses = [row.baseCounters?.cacheMisses, row.newCounters?.cacheMisses].map { $0.map(String.init) ?? "-" }.joined(separator: " → ")
            var line = "\(row.scenario) / \(row.variant)".padding(toLength: 52, withPad: " ", startingAt: 0)
            line += BenchFormat.seconds(row.baseSeconds).leftPadded(11) + BenchFormat.seconds(row.newSeconds).leftPadded(11)
            line += BenchFormat.ratio(row.timeRatio).leftPadded(8) + "   " + statements.padding(toLength: 16, withPad: " ", startingAt: 0) + misses.padding(toLength: 16, withPad: " ", startingAt: 0)
            line += [row.baseAllocated, row.newAllocated].map { $0.map { BenchFormat.bytes(Int($0)) } ?? "-" }.joined(separator: " → ")
            if !row.regressions.isEmpty { line += "   REGRESSION: " + row.regressions.joined(separator: "; ") }
            lines.append(line)
        }
        lines.append(passes ? "no regression (\(rows.count) variants compared)" : "\(regressions.count) regression(s) in \(rows.count) variants compared")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The comparison as a self-contained page.
    public var html: String {
        let e = ResultsPage.escape
        var body = "<h1>Faultline compare</h1>\n<p>Baseline \(e(base.run.revision ?? base.run.started)) (\(e(base.run.scale)), \(e(base.run.build))) → new \(e(new.run.revision ?? new.run.started)) (\(e(new.run.scale)), \(e(new.run.build))): <b>\(passes ? "no regression" : "\(regressions.count) regression(s)")</b>.</p>\n"
        for note in notes { body += "<p class=note>\(e(note))</p>\n" }
        body += "<table><tr><th>scenario</th><th>variant</th><th>by</th><th>baseline</th><th>new</th><th>ratio</th><th>statements</th><th>cache misses</th><th>allocated</th><th>verdict</th></tr>\n"
        for row in rows {
            let statements = "\(row.baseCounters.map { "\($0.statements)" } ?? "–") → \(row.newCounters.map { "\($0.statements)" } ?? "–")"
            let misses = "\(row.baseCounters.map { "\($0.cacheMisses)" } ?? "–") → \(row.newCounters.map { "\($0.cacheMisses)" } ?? "–")"
            let verdict = row.regressions.isEmpty ? "ok" : "<b>regression</b>: " + row.regressions.map(e).joined(separator: "; ")
            body += "<tr class=\"\(row.regressions.isEmpty ? "ok" : "bad")\"><td>\(e(row.scenario))</td><td>\(e(row.variant))</td><td>\(e(row.role.rawValue))</td><td>\(BenchFormat.seconds(row.baseSeconds))</td><td>\(BenchFormat.seconds(row.newSeconds))</td><td>\(BenchFormat.ratio(row.timeRatio))</td><td>\(statements)</td><td>\(misses)</td><td>\([row.baseAllocated, row.newAllocated].map { $0.map { BenchFormat.bytes(Int($0)) } ?? "–" }.joined(separator: " → "))</td><td>\(verdict)</td></tr>\n"
        }
        body += "</table>\n"
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>Faultline compare</title>
        <style>body{font:14px/1.4 system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
        th{background:#f3f3f3}.bad{background:#f8d0d0}.note{color:#555}</style></head><body>
        \(body)</body></html>

        """
    }
}
