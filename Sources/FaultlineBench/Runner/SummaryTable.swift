import Foundation

/// The text summary `faultline bench` prints at the end: each scenario's variants with their median time and
/// ratios, and whether the claim held.
public enum SummaryTable {
    public static func text(_ results: BenchResults, baseline: BenchResults? = nil) -> String {
        var lines: [String] = []
        lines.append("Faultline bench — \(results.run.scale) (\(results.run.rows) rows), \(results.run.repetitions) repetitions, \(results.run.build) build, SQLite \(results.run.sqlite)")
        if results.run.build != "release" { lines.append("WARNING: a debug build; these times say nothing about the engine's speed.") }
        for scenario in results.scenarios {
            lines.append("")
            let verdict = scenario.verdict.held.map { $0 ? "HELD" : "REFUTED" } ?? scenario.status.uppercased()
            lines.append("\(scenario.id) — \(scenario.title)  [\(verdict)]")
            if scenario.status != "ran" {
                lines.append("  \(scenario.note ?? "")")
                continue
            }
            let base = baseline?.scenarios.first { $0.id == scenario.id }
            for variant in scenario.variants {
                var line = "  " + variant.name.padding(toLength: 34, withPad: " ", startingAt: 0)
                line += BenchFormat.seconds(variant.median).leftPadded(11)
                if variant.operations > 1 {
                    line += ("  " + BenchFormat.seconds(variant.median / Double(variant.operations)) + "/op").leftPadded(16)
                } else {
                    line += String(repeating: " ", count: 16)
                }
                if let counters = variant.counters {
                    line += "  \(counters.statements) stmts, \(counters.faults) faults (\(counters.cacheMisses) misses)"
                } else {
                    line += "  (\(variant.role.rawValue))"
                }
                if let old = base?.variants.first(where: { $0.name == variant.name }), old.median > 0, old.operations > 0 {
                    // Per operation, as a changed scenario may do more or fewer a run than the baseline's.
                    let ratio = variant.median / Double(max(variant.operations, 1)) / (old.median / Double(old.operations))
                    line += "  vs baseline \(BenchFormat.ratio(ratio))" + (old.operations != variant.operations ? " per operation" : "")
                    if let a = variant.counters?.statements, let b = old.counters?.statements, a != b { line += " (statements \(b) → \(a))" }
                }
                lines.append(line)
                if let phases = variant.phases { lines.append("    phases: " + BenchFormat.phases(phases)) }
                if let memory = variant.memory { lines.append("    memory: " + BenchFormat.memory(memory)) }
            }
            for ratio in scenario.ratios {
                let met = ratio.met.map { $0 ? " met" : " MISSED" } ?? ""
                lines.append("  ratio \(ratio.label)\(ratio.paired == true ? " (paired)" : ""): \(BenchFormat.ratio(ratio.value))" + (ratio.target.map { "  target \($0)\(met)" } ?? ""))
            }
            lines.append("  \(scenario.verdict.detail)")
        }
        let judged = results.scenarios.compactMap(\.verdict.held)
        lines.append("")
        lines.append("\(judged.filter { $0 }.count) claims held, \(judged.filter { !$0 }.count) refuted, \(results.scenarios.count - judged.count) not judged (skipped or failed).")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
