/// A claim of the advice that no scenario measures yet: listed by `faultline bench --list` under its theme, with what
/// it waits for, so that the catalogue says what it does not prove.
public struct WaitingClaim: Sendable {
    public let theme: BenchTheme
    /// The claim, in a sentence.
    public let claim: String
    public let sources: [ClaimSource]
    /// What it waits for: a scenario not yet written, or a named engine feature.
    public let waitingFor: String

    init(_ theme: BenchTheme, _ claim: String, _ sources: [ClaimSource], waitingFor: String = "a scenario") {
        self.theme = theme
        self.claim = claim
        self.sources = sources
        self.waitingFor = waitingFor
    }

    /// The sources as one line.
    public var source: String { sources.map(\.description).joined(separator: "; ") }
}
