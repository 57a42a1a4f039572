import Foundation

/// What a store's persistent history adds up to: transactions and changes by author, context and entity, the
/// largest transactions, the busiest second (`faultline history`, the report's history section).
public struct HistorySummary: Sendable {
    /// Transactions and changes of one author or context.
    public struct Group: Sendable {
        /// The author's or context's name.
        public var name: String
        /// Transactions it made.
        public var transactions = 0
        /// Changes those transactions recorded.
        public var changes = 0
    }
    /// Changes to one entity's objects.
    public struct EntityChanges: Sendable {
        /// The entity's name.
        public var name: String
        /// Its changes, of every kind.
        public var changes = 0
        /// Its changes by kind.
        public var inserts = 0, updates = 0, deletes = 0
        /// "3 inserts, 2 updates, 0 deletes".
        public var kinds: String { ["\(inserts) inserts", "\(updates) updates", "\(deletes) deletes"].joined(separator: ", ") }
    }

    /// Transactions in the history.
    public var transactions: Int
    /// Changes in them.
    public var changes: Int
    /// Changes by kind (`inserts`, `updates`, `deletes`).
    public var kinds: [String: Int]
    /// When the first transaction was recorded.
    public var first: Date?
    /// When the last one was.
    public var last: Date?
    /// Most transactions that began within one second.
    public var peakPerSecond: Int
    /// By transaction author, most transactions first.
    public var byAuthor: [Group]
    /// By context name, most transactions first.
    public var byContext: [Group]
    /// By entity, most changes first.
    public var byEntity: [EntityChanges]
    /// The five transactions with the most changes.
    public var largest: [PersistentHistory.Transaction]

    /// The summary of a store's history.
    public init(_ history: PersistentHistory) {
        let all = history.transactions
        transactions = all.count
        changes = all.reduce(0) { $0 + $1.changes.count }
        var kinds: [String: Int] = [:]
        var entities: [String: EntityChanges] = [:]
        for change in all.lazy.flatMap(\.changes) {
            kinds[change.kind.rawValue + "s", default: 0] += 1
            var e = entities[change.entity] ?? EntityChanges(name: change.entity)
            e.changes += 1
            switch change.kind {
            case .insert: e.inserts += 1
            case .update: e.updates += 1
            case .delete: e.deletes += 1
            }
            entities[change.entity] = e
        }
        self.kinds = kinds
        byEntity = entities.values.sorted { $0.changes != $1.changes ? $0.changes > $1.changes : $0.name < $1.name }
        first = all.map(\.timestamp).min()
        last = all.map(\.timestamp).max()
        func groups(_ name: (PersistentHistory.Transaction) -> String?) -> [Group] {
            var result: [String: Group] = [:]
            for t in all {
                let key = name(t) ?? "(none)"
                var g = result[key] ?? Group(name: key)
                g.transactions += 1
                g.changes += t.changes.count
                result[key] = g
            }
            return result.values.sorted { $0.transactions != $1.transactions ? $0.transactions > $1.transactions : $0.name < $1.name }
        }
        byAuthor = groups(\.author)
        byContext = groups(\.contextName)
        var seconds: [Int64: Int] = [:]
        for t in all {
            let second = t.timestamp.timeIntervalSinceReferenceDate.rounded(.down)
            seconds[second.isFinite && abs(second) < 1e15 ? Int64(second) : 0, default: 0] += 1
        }
        peakPerSecond = seconds.values.max() ?? 0
        largest = Array(all.sorted { $0.changes.count != $1.changes.count ? $0.changes.count > $1.changes.count : $0.number < $1.number }.prefix(5))
    }
}
