/// Core Data's `NSFetchedResultsChangeType`: what happened to a section or an object of a fetched results controller.
public enum FetchedResultsChangeType: UInt, Sendable, CustomStringConvertible {
    /// It joined the results (an object now matching, a new section).
    case insert = 1
    /// It left the results.
    case delete = 2
    /// A changed object that now sorts elsewhere (another index, another section).
    case move = 3
    /// A changed object that stays where it was.
    case update = 4

    public var description: String {
        switch self {
        case .insert: return "insert"
        case .delete: return "delete"
        case .move: return "move"
        case .update: return "update"
        }
    }
}
