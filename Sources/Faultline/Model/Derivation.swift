import Foundation

/// A derived attribute's expression, in the forms a store computes with triggers (Core Data's derived attributes:
/// docs/store-format.md, "Derived attributes in Faultline's stores").
public enum Derivation: Equatable, Sendable {
    /// `count:(pages)` (`pages.@count`): a to-many's members.
    case count(relationship: String)
    /// `sum:(pages.words)` (`pages.@sum.words`): an attribute of a to-many's members, added up.
    case sum(relationship: String, attribute: String)
    /// `name`, `author.name`: an attribute of the object or of a to-one's destination, copied.
    case keyPath([String])
    /// `lowercase:(name)`, `uppercase:(name)`, `canonical:(name)`: an own attribute, case- or case- and
    /// diacritic-folded.
    case string(function: String, attribute: String)
    /// `now()`: the time of the object's last save.
    case now

    /// The expression read from its text as Core Data prints it or as Xcode keeps it; nil for a form no trigger
    /// computes.
    public init?(_ text: String) {
        let canonical = PropertyDescription.canonicalDerivation(text)
        if canonical == "now()" { self = .now; return }
        func isName(_ part: Substring) -> Bool {
            guard let first = part.first, first.isLetter || first == "_" else { return false }
            return part.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        }
        if let open = canonical.range(of: ":("), canonical.hasSuffix(")") {
            let function = String(canonical[..<open.lowerBound])
            let path = canonical[open.upperBound..<canonical.index(before: canonical.endIndex)].split(separator: ".", omittingEmptySubsequences: false)
            guard path.allSatisfy(isName) else { return nil }
            switch (function, path.count) {
            case ("count", 1): self = .count(relationship: String(path[0]))
            case ("sum", 2): self = .sum(relationship: String(path[0]), attribute: String(path[1]))
            case ("lowercase", 1), ("uppercase", 1), ("canonical", 1): self = .string(function: function, attribute: String(path[0]))
            default: return nil
            }
            return
        }
        let path = canonical.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(path.count), path.allSatisfy(isName) else { return nil }
        self = .keyPath(path.map(String.init))
    }
}
