/// `faultline bench --list`: the scenarios by theme, each with its claim and sources, then the theme's claims that
/// wait for a scenario or a feature.
public enum ScenarioListing {
    /// The listing; `themes` limits it to those themes (all when empty).
    public static func text(_ scenarios: [BenchScenario], waiting: [WaitingClaim], themes: [BenchTheme] = []) -> String {
        var out = ""
        var measured = 0, pending = 0
        for theme in BenchTheme.allCases where themes.isEmpty || themes.contains(theme) {
            let mine = scenarios.filter { $0.theme == theme }
            let waits = waiting.filter { $0.theme == theme }
            guard !mine.isEmpty || !waits.isEmpty else { continue }
            out += "\(theme.title) (--tag \(theme.rawValue))\n"
            for scenario in mine {
                out += "  \(scenario.id)\(scenario.skipReason.map { " (skipped: \($0))" } ?? "")\n"
                out += "    \(scenario.title)\n    claim: \(scenario.claim)\n    source: \(scenario.source)\n"
            }
            for claim in waits {
                out += "  waiting for \(claim.waitingFor): \(claim.claim)\n    source: \(claim.source)\n"
            }
            out += "\n"
            measured += mine.count
            pending += waits.count
        }
        out += "\(measured) scenario\(measured == 1 ? "" : "s"), \(pending) claim\(pending == 1 ? "" : "s") waiting.\n"
        return out
    }
}
