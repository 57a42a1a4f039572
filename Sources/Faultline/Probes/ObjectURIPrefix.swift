/// The URI prefix (`x-coredata://<store>/<Entity>/p`) of permanent object IDs, kept for the last entity and store
/// asked about: the IDs a trace writes are of a few entities, and the entity compared by reference and the store
/// string by its storage (when it is the same string) cost far less than building the prefix again.
struct ObjectURIPrefix {
    private var entity: EntityDescription?
    private var store = ""
    /// The prefix of the last ID that `update(for:)` accepted.
    private(set) var bytes: [UInt8] = []

    /// Makes `bytes` the URI prefix of `id`; false when the ID's URI is not its prefix and key, or needs escaping:
    /// temporary IDs, IDs of no store, and entity or store names that a URI or JSON escapes.
    @inline(__always) mutating func update(for id: ManagedObjectID) -> Bool {
        guard let store = id.storeIdentifier, id.key > 0 else { return false }
        if id.entity === entity && store == self.store { return true }
        return rebuild(entity: id.entity, store: store)
    }

    private mutating func rebuild(entity: EntityDescription, store: String) -> Bool {
        guard PredicateFormatter.hasPlainURIParts(store: store, entity: entity.name) else { return false }
        bytes = Array(ManagedObjectID.permanentURIPrefix(store: store, entity: entity.name).utf8)
        self.store = store
        self.entity = entity
        return true
    }
}
