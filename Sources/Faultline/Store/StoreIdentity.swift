/// What identifies a coordinator's store without touching it: its UUID and file (nil in memory).
struct StoreIdentity: Sendable {
    let identifier: String
    let path: String?

    init(_ store: SQLiteStore) {
        identifier = store.identifier
        path = store.filePath
    }
}
