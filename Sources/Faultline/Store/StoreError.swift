/// Why a store could not be opened, read or written.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    /// The file is not an SQLite database (or is damaged).
    case notADatabase(path: String, detail: String)
    /// The file is an SQLite database without Faultline's (Core Data's) tables.
    case notAStore(path: String, detail: String)
    /// The store was made for another model version; migration is needed.
    case modelMismatch(path: String, differences: [String])
    /// An SQLite error while working with the store.
    case sqlite(path: String, error: SQLiteError)
    /// An object's row is gone from the store (deleted elsewhere).
    case objectNotFound(ManagedObjectID)
    /// An object ID from another store or model.
    case foreignObjectID(String)
    /// The coordinator has no store yet.
    case noStore
    /// A store opened read only does not exist.
    case noSuchStore(path: String)
    /// No version of a model bundle fits the store: what differs, version by version.
    case noMatchingModelVersion(path: String, bundle: String, mismatches: [String])
    /// A key column holds what Core Data never writes (see `StoredKeyRule`): the table, column and row, the value
    /// and what was expected.
    case invalidStoredValue(table: String, column: String, row: String, value: String, expected: String)
    /// A store description, option or pragma that cannot be used as given: what and why.
    case invalidConfiguration(String)
    /// Destroying, replacing or moving a store's files failed or was refused: the operation, the file, why, and
    /// what the files are now.
    case storeFiles(operation: String, path: String, detail: String)

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        switch self {
        case .notADatabase(let path, let detail):
            return "'\(path)' is not a Faultline store: not an SQLite database (\(detail))"
        case .notAStore(let path, let detail):
            return "'\(path)' is not a Faultline store: \(detail)"
        case .modelMismatch(let path, let differences):
            return "the store '\(path)' was made with a different model (migration needed): " + differences.joined(separator: "; ")
        case .sqlite(let path, let error):
            return "store '\(path)': \(error)"
        case .objectNotFound(let id):
            return "object \(id.uriString) no longer exists in the store"
        case .foreignObjectID(let text):
            return "object ID \(text) does not belong to this store or model"
        case .noStore:
            return "the coordinator has no persistent store"
        case .noSuchStore(let path):
            return "no store at '\(path)'"
        case .noMatchingModelVersion(let path, let bundle, let mismatches):
            return "no version of '\(bundle)' fits the store '\(path)': " + mismatches.joined(separator: " | ")
        case .invalidStoredValue(let table, let column, let row, let value, let expected):
            return "the store is damaged: table \(table), column \(column), \(row): \(value) — \(expected)"
        case .invalidConfiguration(let detail):
            return "the store cannot be added: \(detail)"
        case .storeFiles(let operation, let path, let detail):
            return "\(operation) '\(path)': \(detail)"
        }
    }
}
