/// The themes `faultline bench --list` groups scenarios by, and `--tag` runs: what part of the advice they test.
public enum BenchTheme: String, Sendable, CaseIterable, Codable {
    case overheads
    case avoidingFetches = "avoiding-fetches"
    case fetchShape = "fetch-shape"
    case nPlusOne = "n-plus-one"
    case indexes
    case predicates
    case sorting
    case schema
    case transformable
    case saving
    case importing = "import"
    case memory
    case concurrency
    case sqlite
    case startup
    case conflicts
    case migration
    case probes
    case yourModel = "your-model"

    /// The theme's heading in `--list` and on the results page.
    public var title: String {
        switch self {
        case .overheads: return "The stack's tiers and overheads"
        case .avoidingFetches: return "Avoiding fetches"
        case .fetchShape: return "Paging and fetch shape"
        case .nPlusOne: return "N+1 and its fixes"
        case .indexes: return "Index costs and benefits"
        case .predicates: return "Predicates, their order, text searches"
        case .sorting: return "Sorting"
        case .schema: return "Schema shape"
        case .transformable: return "Transformable encoding"
        case .saving: return "Inserting, changing and saving"
        case .importing: return "Import"
        case .memory: return "Memory"
        case .concurrency: return "Concurrency and contention"
        case .sqlite: return "SQLite's own levers"
        case .startup: return "Start-up and staleness"
        case .conflicts: return "Conflicts, delete rules, validation"
        case .migration: return "Migration"
        case .probes: return "Faultline's probes"
        case .yourModel: return "Your model (--model, --store)"
        }
    }

    /// The tags, for messages.
    public static var tags: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
