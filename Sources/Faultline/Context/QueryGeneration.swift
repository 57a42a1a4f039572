import Foundation

/// Which store generation a context reads (Core Data's `NSQueryGenerationToken`): `.current` pins the context to
/// the store as it is now.
public enum QueryGenerationToken: Sendable, Equatable {
    /// The store as it is when the context is pinned.
    case current
}

extension PersistentStoreCoordinator {
    /// A reader of its own on the same file whose connection holds a read transaction open: with WAL, its reads see
    /// the store as it was when the transaction began. It has its own row cache and never writes.
    func makeGenerationReader() throws -> PersistentStoreCoordinator {
        if storeType == .inMemory {
            throw StoreError.invalidConfiguration("query generations need a store file in WAL mode (a reader of its own on the file); an in-memory store has none")
        }
        guard let path = storePath else { throw StoreError.noStore }
        let reader = PersistentStoreCoordinator(managedObjectModel: managedObjectModel, probes: probes)
        try reader.addPersistentStore(at: URL(fileURLWithPath: path))
        try reader.beginGeneration()
        return reader
    }

    /// Starts the read transaction that pins this reader to the store's current state.
    func beginGeneration() throws {
        try withLock {
            let store = try requireStore()
            try store.connection.execute("BEGIN DEFERRED")
            // The snapshot is taken by the first read, not by BEGIN.
            try store.connection.execute("SELECT count(*) FROM Z_PRIMARYKEY")
        }
    }

    /// Ends the read transaction and forgets the cached rows of the old generation.
    func endGeneration() {
        withLock {
            try? (try? requireStore())?.connection.execute("COMMIT")
            rowCacheRemoveAll()
        }
    }
}

extension ManagedObjectContext {
    /// The generation the context reads, or nil when it reads the latest state (the default).
    public var queryGenerationToken: QueryGenerationToken? { generation == nil ? nil : .current }

    /// Pins the context's reads — fetches and faults — to one store generation (`.current`: the store as it is
    /// now), or unpins it (`nil`). Other contexts' and processes' saves stay invisible until the context saves,
    /// merges a did-save notification, or is pinned again; each of those moves it to the latest generation.
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws {
        if checksQueue { checkQueue(touching: nil) }
        dropSnapshotHolds()
        generation?.endGeneration()
        generation = nil
        if token != nil { generation = try coordinator.makeGenerationReader() }
    }

    /// Moves a pinned context to the store's latest generation (after its own save or a merge).
    func advanceGeneration() {
        guard let generation else { return }
        dropSnapshotHolds()
        generation.endGeneration()
        do { try generation.beginGeneration() } catch { self.generation = nil }
    }

    /// Lets go of every row-cache snapshot the context's objects hold (before the reader they came from changes).
    private func dropSnapshotHolds() {
        var held: [ObjectKey] = []
        for object in registry.values where object.flags.contains(.holdsSnapshot) {
            held.append(object.objectKeyForCache)
            object.flags.remove(.holdsSnapshot)
        }
        reader.releaseSnapshots(held)
    }
}
