import Foundation
import XCTest
@testable import Faultline

/// Many contexts on many threads (and one on Swift concurrency) for a fixed number of seeded operations — fetches,
/// optimistic-locking deposits, inserts, batch updates and deletes merged by ID, refreshes, resets, history pruning —
/// on one coordinator whose reader pool serves the fetches while a save holds the store; sibling contexts merge each
/// other's saves (`automaticallyMergesChangesFromParent`). Invariants are checked after every step, and at the end
/// against the store's rows: no deposit lost or applied twice, every context's accounts equal to the store's (merges
/// converge), memory bounded by the data (one object a row; none held after a refresh). `make test-tsan` runs it under ThreadSanitizer, as CI does.
/// `FAULTLINE_SOAK_OPERATIONS` and `FAULTLINE_SOAK_SEED` make a longer or another run.
final class SoakTests: XCTestCase {
    static let accounts = 8
    static let threadWorkers = 3
    static let operations = ProcessInfo.processInfo.environment["FAULTLINE_SOAK_OPERATIONS"].flatMap(Int.init) ?? 150
    static let seed = ProcessInfo.processInfo.environment["FAULTLINE_SOAK_SEED"].flatMap { UInt64($0) } ?? 0x50A4
    /// Attempts a deposit makes before it gives up (each conflict refreshes the account and tries again).
    static let depositAttempts = 50

    private static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Account", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false),
                AttributeDescription(name: "balance", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                RelationshipDescription(name: "entries", destination: "Entry", inverse: "account", isToMany: true),
            ]),
            EntityDescription(name: "Entry", properties: [
                AttributeDescription(name: "amount", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                RelationshipDescription(name: "account", destination: "Account", inverse: "entries"),
            ]),
            EntityDescription(name: "Note", properties: [
                AttributeDescription(name: "text", type: .string),
                AttributeDescription(name: "flagged", type: .boolean, isOptional: false, defaultValue: false),
            ]),
        ])
    }

    /// What the workers did, counted only when it reached the store.
    struct Tally: Sendable {
        var deposited: Int64 = 0
        var deposits = 0
        var conflicts = 0
        var notesInserted = 0
        var notesDeleted = 0
        var pooledBefore = 0
        var steps: [String: Int] = [:]
        var failures: [String] = []
    }

    /// A value behind an `NSLock` (ThreadSanitizer follows pthread mutexes; `Synchronization.Mutex` on Linux locks
    /// with futexes it does not see, and would be reported as racing).
    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<R>(_ body: (inout Value) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    final class Shared: Sendable {
        let tally = Locked(Tally())
        func fail(_ text: String) { tally.withLock { if $0.failures.count < 50 { $0.failures.append(text) } } }
        func count(_ step: String) { tally.withLock { $0.steps[step, default: 0] += 1 } }
    }

    func testManyContextsOnManyThreadsKeepEveryInvariant() async throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Soak.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model(), probes: .disabled)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: [.persistentHistoryTracking],
                                           readerConnections: PersistentStoreCoordinator.defaultReaderConnections)
        XCTAssertNotNil(coordinator.readerPool, "the fetches may read on pooled connections")
        let setup = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try setup.performAndWait {
            for i in 0..<Self.accounts { try setup.insertNewObject(forEntityName: "Account").setValue("acct-\(i)", forKey: "name") }
            try setup.save()
        }
        let shared = Shared()
        let contexts = (0...Self.threadWorkers).map { worker -> ManagedObjectContext in
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            context.name = "worker \(worker)"
            context.automaticallyMergesChangesFromParent = true
            return context
        }
        // Threads, each driving its context with performAndWait…
        let done = DispatchGroup()
        for worker in 0..<Self.threadWorkers {
            done.enter()
            let context = contexts[worker]
            Thread.detachNewThread {
                var random = SplitMix(seed: Self.seed &+ UInt64(worker) &* 0x9E37)
                for step in 0..<Self.operations {
                    let choice = random.next(), amount = Int64(random.next() % 100) + 1
                    context.performAndWait { Self.step(choice, amount: amount, context: context, shared: shared, at: "worker \(worker) step \(step)") }
                }
                done.leave()
            }
        }
        // …and one on Swift concurrency, each step an awaited perform.
        let asyncContext = contexts[Self.threadWorkers]
        var random = SplitMix(seed: Self.seed &+ 0xA5A5)
        for step in 0..<Self.operations {
            let choice = random.next(), amount = Int64(random.next() % 100) + 1
            await asyncContext.perform { Self.step(choice, amount: amount, context: asyncContext, shared: shared, at: "async step \(step)") }
        }
        let finished = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: done.wait(timeout: .now() + 600)) }
        }
        XCTAssertEqual(finished, .success, "every worker finished")

        let tally = shared.tally.withLock { $0 }
        XCTAssertEqual(tally.failures, [], "invariants broken during the run")
        print("soak: \(Self.threadWorkers + 1) contexts × \(Self.operations) steps (seed \(Self.seed)): \(tally.deposits) deposits (\(tally.conflicts) conflicts retried), \(tally.notesInserted) notes inserted, \(tally.notesDeleted) batch-deleted, \(coordinator.statistics.pooledReads) pooled reads; steps \(tally.steps.sorted { $0.key < $1.key })")

        // The store's rows, read with SQLite directly.
        let connection = try SQLiteConnection(path: url.path, create: false)
        func integers(_ sql: String) throws -> [Int64] {
            let rows = try connection.prepare(sql)
            var values: [Int64] = []
            while try rows.step() { values.append(rows.int64(at: 0)) }
            return values
        }
        let balances = try integers("SELECT ZBALANCE FROM ZACCOUNT ORDER BY ZNAME")
        XCTAssertEqual(balances.count, Self.accounts)
        XCTAssertEqual(balances.reduce(0, +), tally.deposited, "no deposit lost or applied twice")
        XCTAssertEqual(try integers("SELECT TOTAL(ZAMOUNT) FROM ZENTRY").first, tally.deposited)
        XCTAssertEqual(try integers("SELECT COUNT(*) FROM ZENTRY").first, Int64(tally.deposits))
        XCTAssertEqual(try integers("SELECT COUNT(*) FROM ZENTRY WHERE ZACCOUNT IS NULL").first, 0)
        XCTAssertEqual(try integers("SELECT COUNT(*) FROM ZNOTE").first, Int64(tally.notesInserted - tally.notesDeleted),
                       "every note inserted and not batch-deleted, once")
        for (name, balance) in try Self.accountsByName(connection) {
            let entries = try integers("SELECT TOTAL(e.ZAMOUNT) FROM ZENTRY e JOIN ZACCOUNT a ON e.ZACCOUNT = a.Z_PK WHERE a.ZNAME = '\(name)'")
            XCTAssertEqual(entries.first, balance, "\(name): its balance is the sum of its entries")
        }
        XCTAssertGreaterThan(tally.deposits, 0)
        XCTAssertGreaterThan(tally.notesDeleted, 0, "batch deletes ran on rows")

        let truth = try Self.accountsByName(connection)
        for context in contexts {
            // Merges converge: the accounts a context holds have the store's balances once its queue has drained…
            let merged = context.performAndWait { Self.accounts(in: context) }
            for (name, balance) in merged where truth[name] != balance {
                XCTFail("\(context.name ?? "?"): \(name) reads \(balance) after the merges, the store holds \(truth[name] ?? -1)")
            }
            // …and after a refresh every account equals the store's.
            let refreshed = context.performAndWait {
                context.refreshAllObjects()
                return Self.accounts(in: context)
            }
            XCTAssertEqual(refreshed, truth, context.name ?? "?")
        }
        let rows = try integers("SELECT (SELECT COUNT(*) FROM ZACCOUNT) + (SELECT COUNT(*) FROM ZENTRY) + (SELECT COUNT(*) FROM ZNOTE)")[0]
        XCTAssertLessThanOrEqual(Int64(coordinator.statistics.rowCacheCount), rows, "the row cache holds at most one snapshot a row")
    }

    private static func accountsByName(_ connection: SQLiteConnection) throws -> [String: Int64] {
        let rows = try connection.prepare("SELECT ZNAME, ZBALANCE FROM ZACCOUNT")
        var result: [String: Int64] = [:]
        while try rows.step() { result[rows.text(at: 0)] = rows.int64(at: 1) }
        return result
    }

    /// The context's accounts by name (fetched: registered objects keep their values, as in Core Data).
    private static func accounts(in context: ManagedObjectContext) -> [String: Int64] {
        let all = (try? context.fetch(FetchRequest<ManagedObject>(entityName: "Account"))) ?? []
        return Dictionary(all.map { ($0.value(forKey: "name") as? String ?? "?", $0.value(forKey: "balance") as? Int64 ?? -1) }, uniquingKeysWith: { a, _ in a })
    }

    /// One step, chosen by `choice`, on the context's queue; a broken invariant is written down with `at`.
    static func step(_ choice: UInt64, amount: Int64, context: ManagedObjectContext, shared: Shared, at: String) {
        func check(_ condition: Bool, _ what: @autoclosure () -> String) { if !condition { shared.fail("\(at): \(what())") } }
        do {
            switch choice % 100 {
            case 0..<35:
                // A deposit: the account's balance and an entry, saved together; a conflict (another context saved
                // the account first) rolls back, refreshes and tries again, so the store sees each deposit once.
                shared.count("deposit")
                let name = "acct-\(Int(choice / 100 % UInt64(accounts)))"
                let request = FetchRequest<ManagedObject>(entityName: "Account", predicate: ObjectPredicate(format: "name == %@", name))
                guard let account = try context.fetch(request).first else { return check(false, "\(name) is missing") }
                for attempt in 1...depositAttempts {
                    let before = account.value(forKey: "balance") as? Int64 ?? -1
                    try account.setValue(before + amount, forKey: "balance")
                    let entry = try context.insertNewObject(forEntityName: "Entry")
                    try entry.setValue(amount, forKey: "amount")
                    try entry.setValue(account, forKey: "account")
                    do {
                        try context.save()
                    } catch {
                        shared.tally.withLock { $0.conflicts += 1 }
                        context.rollback()
                        check(!context.hasChanges, "changes left after a rollback")
                        context.refresh(account, mergeChanges: false)
                        check(attempt < depositAttempts, "a deposit to \(name) conflicted \(depositAttempts) times: \(error)")
                        continue
                    }
                    shared.tally.withLock { $0.deposited += amount; $0.deposits += 1 }
                    check(!context.hasChanges, "changes left after a save")
                    check(account.value(forKey: "balance") as? Int64 == before + amount, "the saved balance is not what was set")
                    check(!entry.objectID.isTemporaryID, "a saved entry kept its temporary ID")
                    break
                }
            case 35..<55:
                shared.count("fetch")
                let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Account", sortDescriptors: [FetchSortDescriptor(key: "name")]))
                check(all.map { $0.value(forKey: "name") as? String ?? "?" } == (0..<accounts).map { "acct-\($0)" }.sorted(), "the accounts fetched are not the eight")
                check(all.allSatisfy { ($0.value(forKey: "balance") as? Int64 ?? -1) >= 0 }, "a negative balance")
                let flagged = try context.count(for: FetchRequest<ManagedObject>(entityName: "Note", predicate: ObjectPredicate(format: "flagged == YES")))
                check(flagged >= 0, "a negative count")
            case 55..<70:
                shared.count("insert notes")
                let count = Int(choice / 100 % 3) + 1
                for i in 0..<count { try context.insertNewObject(forEntityName: "Note").setValue("note \(i) of \(at)", forKey: "text") }
                try context.save()
                shared.tally.withLock { $0.notesInserted += count }
                check(!context.hasChanges, "changes left after a save")
            case 70..<78:
                // A batch update, merged into this context by the IDs it returns (as Core Data's documentation shows).
                shared.count("batch update")
                let update = BatchUpdateRequest(entityName: "Note", predicate: ObjectPredicate(format: "flagged == NO"), propertiesToUpdate: ["flagged": true])
                update.resultType = .objectIDs
                let result = try context.execute(update)
                ManagedObjectContext.mergeChanges(fromRemoteContextSave: [UpdatedObjectsKey: result.objectIDs], into: [context])
                for id in result.objectIDs.prefix(20) {
                    if let note = context.registeredObject(for: id) {
                        check(note.value(forKey: "flagged") as? Bool == true, "a batch-updated note reads unflagged after the merge")
                    }
                }
            case 78..<86:
                shared.count("batch delete")
                let delete = BatchDeleteRequest(entityName: "Note", predicate: ObjectPredicate(format: "flagged == YES"))
                delete.resultType = .objectIDs
                let result = try context.execute(delete)
                shared.tally.withLock { $0.notesDeleted += result.objectIDs.count }
                ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: result.objectIDs], into: [context])
                for id in result.objectIDs.prefix(20) {
                    check(context.registeredObject(for: id) == nil, "a batch-deleted note is still registered after the merge")
                }
            case 86..<92:
                // Objects with relationships hold each other (an account its entries, each entry its account), as
                // in Core Data, until a refresh turns them into faults: then nothing holds them.
                shared.count("refresh")
                context.refreshAllObjects()
                check(!context.hasChanges, "a refresh left changes")
                check(context.registeredObjects.count <= accounts, "\(context.registeredObjects.count) objects registered after a refresh")
            case 92..<96:
                shared.count("reset")
                context.reset()
                check(context.registeredObjects.isEmpty, "objects registered after a reset")
            default:
                shared.count("prune history")
                _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date()))
            }
        } catch {
            shared.fail("\(at): \(error)")
            context.rollback()
        }
        // Memory bounded by the data, not by the run: at most one object for each row there has been.
        let rows = shared.tally.withLock { accounts + $0.deposits + $0.notesInserted }
        check(context.registeredObjects.count <= rows, "\(context.registeredObjects.count) objects registered, for at most \(rows) rows")
    }
}
