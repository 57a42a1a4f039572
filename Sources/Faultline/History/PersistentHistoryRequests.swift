import Foundation

/// A point in a store's persistent history (Core Data's `NSPersistentHistoryToken`): the transaction it follows.
/// Keep the last one processed, and fetch the history after it next time.
public final class PersistentHistoryToken: Hashable, Sendable, CustomStringConvertible {
    /// The store's UUID.
    public let storeIdentifier: String
    /// The transaction's number (`Z_PK` of `ATRANSACTION`).
    public let transactionNumber: Int64

    init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    public static func == (a: PersistentHistoryToken, b: PersistentHistoryToken) -> Bool {
        a.storeIdentifier == b.storeIdentifier && a.transactionNumber == b.transactionNumber
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeIdentifier)
        hasher.combine(transactionNumber)
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String { "<PersistentHistoryToken \(storeIdentifier) \(transactionNumber)>" }
}

/// Core Data's `NSPersistentHistoryChangeType`.
public enum PersistentHistoryChangeType: Sendable {
    /// The object was inserted.
    case insert
    /// Some of its properties changed.
    case update
    /// It was deleted.
    case delete
}

/// One object a transaction inserted, updated or deleted (Core Data's `NSPersistentHistoryChange`).
public final class PersistentHistoryChange: @unchecked Sendable {
    /// The object changed.
    public let changedObjectID: ManagedObjectID
    /// What happened to it.
    public let changeType: PersistentHistoryChangeType
    /// For updates: the properties the change recorded (Core Data gives a set of property descriptions; here they
    /// are the entity's descriptions, in Core Data's column order), nil otherwise.
    public let updatedProperties: [PropertyDescription]?
    /// The change's number in the store (Core Data's `changeID`), increasing with each change recorded.
    public let changeID: Int64
    /// Core Data's `tombstone`: the values a deleted object's attributes marked "preserve after deletion" kept.
    /// Faultline does not record such values yet, so it is nil (docs/core-data-api.md).
    public let tombstone: [AnyHashable: Any]? = nil

    init(changedObjectID: ManagedObjectID, changeType: PersistentHistoryChangeType, updatedProperties: [PropertyDescription]?, changeID: Int64 = 0) {
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.updatedProperties = updatedProperties
        self.changeID = changeID
    }
}

/// One save that recorded history (Core Data's `NSPersistentHistoryTransaction`).
public final class PersistentHistoryTransaction: @unchecked Sendable {
    /// When it was recorded.
    public let timestamp: Date
    /// The point after it, for the next fetch.
    public let token: PersistentHistoryToken
    /// Its number in the store.
    public let transactionNumber: Int64
    /// The store's UUID.
    public let storeID: String
    /// The saving context's `transactionAuthor`, as recorded.
    public let author: String?
    /// The saving context's `name`.
    public let contextName: String?
    /// The saving app's bundle identifier.
    public let bundleID: String?
    /// The saving process's ID, as Core Data records it.
    public let processID: String?
    /// Its changes (nil when the request asked for transactions only).
    public let changes: [PersistentHistoryChange]?

    init(transaction: PersistentHistory.Transaction, storeID: String, changes: [PersistentHistoryChange]?) {
        timestamp = transaction.timestamp
        transactionNumber = transaction.number
        token = PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: transaction.number)
        self.storeID = storeID
        author = transaction.author
        contextName = transaction.contextName
        bundleID = transaction.bundleID
        processID = transaction.process
        self.changes = changes
    }

    /// Core Data's `objectIDNotification()`: a notification whose user info holds the transaction's object IDs under
    /// `InsertedObjectIDsKey`, `UpdatedObjectIDsKey` and `DeletedObjectIDsKey`, for `mergeChanges(fromContextDidSave:)`.
    public func objectIDNotification() -> Notification {
        func ids(_ type: PersistentHistoryChangeType) -> [ManagedObjectID] {
            (changes ?? []).filter { $0.changeType == type }.map(\.changedObjectID)
        }
        return Notification(name: Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification"), object: nil,
                            userInfo: [InsertedObjectIDsKey: ids(.insert), UpdatedObjectIDsKey: ids(.update), DeletedObjectIDsKey: ids(.delete)])
    }
}

/// Core Data's `NSPersistentHistoryResultType`.
public enum PersistentHistoryResultType: Sendable {
    /// `true`.
    case statusOnly
    /// The changed objects' IDs, `[ManagedObjectID]`.
    case objectIDs
    /// The number of transactions (for a delete: deleted), an `Int`.
    case count
    /// `[PersistentHistoryTransaction]` without their changes.
    case transactionsOnly
    /// `[PersistentHistoryChange]`, every transaction's.
    case changesOnly
    /// `[PersistentHistoryTransaction]` with their changes (the default).
    case transactionsAndChanges
}

/// Core Data's `NSPersistentHistoryChangeRequest`: fetch the history after a date, token or transaction, or delete
/// the history before a date; executed by `context.execute(_:)`.
public final class PersistentHistoryChangeRequest: PersistentStoreRequest {
    enum Operation {
        case fetchAfterDate(Date), fetchAfterNumber(Int64, store: String?), deleteBeforeDate(Date), deleteBeforeNumber(Int64, store: String?)
    }
    let operation: Operation
    /// What the result holds (default: transactions with their changes).
    public var resultType: PersistentHistoryResultType = .transactionsAndChanges

    init(_ operation: Operation) {
        self.operation = operation
    }

    /// The transactions recorded after `date`.
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.fetchAfterDate(date))
    }

    /// The transactions after `token` (all of them when nil).
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.fetchAfterNumber(token?.transactionNumber ?? 0, store: token?.storeIdentifier))
    }

    /// The transactions after `transaction` (all of them when nil).
    public static func fetchHistory(after transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        fetchHistory(after: transaction?.token)
    }

    /// Deletes the transactions recorded before `date`, and their changes.
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.deleteBeforeDate(date))
    }

    /// Deletes the transactions before `token`'s — the token's own transaction stays (the documentation says
    /// "older than" the token; Faultline keeps the bookmark's transaction, which loses nothing not yet processed).
    /// With nil nothing is deleted.
    public static func deleteHistory(before token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(.deleteBeforeNumber(token?.transactionNumber ?? 0, store: token?.storeIdentifier))
    }

    /// Deletes the transactions before `transaction` (it stays); with nil nothing is deleted.
    public static func deleteHistory(before transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        deleteHistory(before: transaction?.token)
    }
}

/// What a history request returned (Core Data's `NSPersistentHistoryResult`).
public final class PersistentHistoryResult: PersistentStoreResult {
    /// What `result` holds.
    public let resultType: PersistentHistoryResultType
    /// `[PersistentHistoryTransaction]`, `[PersistentHistoryChange]`, `[ManagedObjectID]`, a count (`Int`) or
    /// `true`, as `resultType` says.
    public let result: Any?

    init(resultType: PersistentHistoryResultType, result: Any?) {
        self.resultType = resultType
        self.result = result
    }
}

extension PersistentStoreCoordinator {
    /// The token after the store's latest transaction (Core Data's `currentPersistentHistoryToken(fromStores:)`),
    /// or nil without history or a store file.
    public func currentPersistentHistoryToken(fromStores stores: [PersistentStore]? = nil) -> PersistentHistoryToken? {
        guard let path = storePath, let identifier = storeIdentifier,
              let history = try? PersistentHistory.read(storeAt: URL(fileURLWithPath: path), model: managedObjectModel),
              let last = history.transactions.last else { return nil }
        return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: last.number)
    }
}

extension ManagedObjectContext {
    /// Runs a history request against the coordinator's store (on this context's queue).
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        if checksQueue { checkQueue(touching: nil) }
        guard let path = coordinator.storePath, let identifier = coordinator.storeIdentifier else {
            throw StoreError.invalidConfiguration("persistent history needs a store on file (an in-memory store keeps none)")
        }
        switch request.operation {
        case .deleteBeforeDate, .deleteBeforeNumber:
            var deleted = 0
            if case .deleteBeforeDate(let date) = request.operation { deleted = try coordinator.deleteHistory(before: date) }
            if case .deleteBeforeNumber(let number, let store) = request.operation {
                if let store, store != identifier {
                    throw StoreError.invalidConfiguration("the history token is of the store \(store), not of this store (\(identifier))")
                }
                if number > 0 { deleted = try coordinator.deleteHistory(beforeTransaction: number) }
            }
            return PersistentHistoryResult(resultType: request.resultType, result: request.resultType == .count ? deleted : true)
        default:
            break
        }
        let history = try PersistentHistory.read(storeAt: URL(fileURLWithPath: path), model: model)
        let chosen: [PersistentHistory.Transaction]
        switch request.operation {
        case .fetchAfterDate(let date): chosen = history.transactions.filter { $0.timestamp > date }
        case .fetchAfterNumber(let number, let store):
            if let store, store != identifier {
                throw StoreError.invalidConfiguration("the history token is of the store \(store), not of this store (\(identifier))")
            }
            chosen = history.transactions.filter { $0.number > number }
        case .deleteBeforeDate, .deleteBeforeNumber: chosen = []
        }
        let withChanges = request.resultType != .transactionsOnly
        let transactions = try chosen.map { transaction in
            PersistentHistoryTransaction(transaction: transaction, storeID: identifier,
                                         changes: withChanges ? try transaction.changes.map { try change(of: $0, store: identifier) } : nil)
        }
        let result: Any
        switch request.resultType {
        case .statusOnly: result = true
        case .count: result = transactions.count
        case .transactionsOnly, .transactionsAndChanges: result = transactions
        case .changesOnly: result = transactions.flatMap { $0.changes ?? [] }
        case .objectIDs: result = transactions.flatMap { ($0.changes ?? []).map(\.changedObjectID) }
        }
        return PersistentHistoryResult(resultType: request.resultType, result: result)
    }

    /// A history change as Core Data's object; a change of an entity the model does not have is an error naming it.
    private func change(of change: PersistentHistory.Change, store: String) throws -> PersistentHistoryChange {
        guard let entity = model.entity(named: change.entity) else {
            throw StoreError.invalidConfiguration("the store's history changes entity '\(change.entity)', which the model does not have")
        }
        let type: PersistentHistoryChangeType = change.kind == .insert ? .insert : change.kind == .update ? .update : .delete
        return PersistentHistoryChange(changedObjectID: ManagedObjectID(entity: entity, key: change.key, storeIdentifier: store),
                                       changeType: type, updatedProperties: change.updatedProperties.map { $0.compactMap { entity.property(named: $0) } },
                                       changeID: change.changeID)
    }

    /// Core Data's `mergeChanges(fromContextDidSave:)` with a Foundation notification — a history transaction's
    /// `objectIDNotification()`: its object IDs (under the `…ObjectIDsKey` or `…ObjectsKey` keys) are merged as
    /// another writer's changes (call on this context's queue).
    public func mergeChanges(fromContextDidSave notification: Notification) {
        let changes = RemoteChanges(notification.userInfo ?? [:])
        coordinator.forgetCachedRows(of: changes.updated + changes.deleted)
        merge(changes)
    }
}
