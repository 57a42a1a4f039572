/// Contexts that merge another's saves by themselves: the children of a context, or the root contexts of a
/// coordinator, that set `automaticallyMergesChangesFromParent`. Held weakly; each merge runs on the merging
/// context's own queue, after the save that caused it.
final class AutoMergers: @unchecked Sendable {
    private struct Entry {
        weak var context: ManagedObjectContext?
    }

    private let lock = PlainLock()
    private var entries: [Entry] = []

    func add(_ context: ManagedObjectContext) {
        lock.lock()
        defer { lock.unlock() }
        entries.removeAll { $0.context == nil || $0.context === context }
        entries.append(Entry(context: context))
    }

    func remove(_ context: ManagedObjectContext) {
        lock.lock()
        defer { lock.unlock() }
        entries.removeAll { $0.context == nil || $0.context === context }
    }

    var isEmpty: Bool {
        lock.lock()
        defer { lock.unlock() }
        return entries.isEmpty
    }

    /// Queues a merge of `changes` on each context but `source`. `permanentKeys` gives the permanent ID of each
    /// temporary key a root save replaced, so that children can adopt them.
    func notify(_ changes: RemoteChanges, permanentKeys: [Int64: ManagedObjectID] = [:], except source: ManagedObjectContext) {
        lock.lock()
        let contexts = entries.compactMap(\.context).filter { $0 !== source }
        lock.unlock()
        for context in contexts {
            context.perform { context.merge(changes, permanentKeys: permanentKeys) }
        }
    }
}
