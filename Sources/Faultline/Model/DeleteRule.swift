/// What happens to a relationship's destination when its source object is deleted.
public enum DeleteRule: String, Sendable, Codable, CaseIterable {
    /// Remove the deleted object from the destination's inverse (the default).
    case nullify
    /// Delete the destination objects too.
    case cascade
    /// Refuse to delete while the relationship holds any object.
    case deny
    /// Do nothing; the destination keeps a reference to a deleted object.
    case noAction

    /// Parses an Xcode name ("Nullify", "No Action") or a JSON name ("noAction").
    public init?(name: String) {
        switch name.lowercased().replacingOccurrences(of: " ", with: "") {
        case "nullify": self = .nullify
        case "cascade": self = .cascade
        case "deny": self = .deny
        case "noaction": self = .noAction
        default: return nil
        }
    }
}
