import Foundation
import Synchronization
import XCTest
@testable import Faultline

/// Contexts reading in parallel on pooled reader connections while the coordinator is busy (a save writing).
final class ReaderPoolTests: XCTestCase {
    private final class Box<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func with<R>(_ body: (inout Value) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    private func kennel(_ dir: TemporaryDirectory, dogs: Int, readers: Int = PersistentStoreCoordinator.defaultReaderConnections) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
        try coordinator.addPersistentStore(type: .sqlite, at: dir.file("kennel.sqlite"), readerConnections: readers)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            for i in 0..<dogs { try context.insertNewObject(forEntityName: "Dog").setValue("dog \(i)", forKey: "name") }
            try context.save()
        }
        return coordinator
    }

    func testTwoContextsReadTogetherWhileASaveHoldsTheStore() throws {
        let dir = TemporaryDirectory()
        let coordinator = try kennel(dir, dogs: 50)
        let pool = try XCTUnwrap(coordinator.readerPool, "a WAL store file has a reader pool")
        // Each pooled read waits (up to 10 s) until the other has started too: both finish only if they overlap.
        let arrivals = Box<[UInt64]>([])
        pool.readWillBegin = {
            arrivals.with { $0.append(ProbeClock.now()) }
            let deadline = Date().addingTimeInterval(10)
            while arrivals.with({ $0.count }) < 2 && Date() < deadline { usleep(500) }
        }
        let results = Box<[[String]]>([])
        let done = DispatchGroup()
        var held: (from: UInt64, to: UInt64) = (0, 0)
        try coordinator.withLock {
            // A save in progress: the coordinator's lock held and a write transaction open on the store's connection.
            held.from = ProbeClock.now()
            let store = try coordinator.requireStore()
            try store.connection.execute("BEGIN IMMEDIATE")
            try store.connection.execute("UPDATE ZDOG SET ZNAME = 'uncommitted', Z_OPT = Z_OPT + 1")
            for _ in 0..<2 {
                done.enter()
                Thread.detachNewThread {
                    let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                    let names = try? context.performAndWait {
                        try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")).map { $0.value(forKey: "name") as? String ?? "?" }
                    }
                    results.with { $0.append(names ?? []) }
                    done.leave()
                }
            }
            // Both readers have read (each waited for the other) before the writer commits.
            let deadline = Date().addingTimeInterval(20)
            while arrivals.with({ $0.count }) < 2 && Date() < deadline { usleep(1_000) }
            usleep(50_000)
            try store.connection.execute("ROLLBACK")
            held.to = ProbeClock.now()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "both fetches returned")
        let starts = arrivals.with { $0 }
        XCTAssertEqual(starts.count, 2, "two pooled reads")
        XCTAssertTrue(starts.allSatisfy { $0 > held.from && $0 < held.to }, "both read while the store was held: \(starts) in \(held)")
        XCTAssertEqual(coordinator.statistics.pooledReads, 2)
        for names in results.with({ $0 }) {
            XCTAssertEqual(names.count, 50)
            XCTAssertFalse(names.contains("uncommitted"), "a reader sees the last committed state, never a save in progress")
        }
        XCTAssertLessThanOrEqual(pool.opened, PersistentStoreCoordinator.defaultReaderConnections)
    }

    /// A third context's real save, held open inside its write transaction (rows written, not committed) until two
    /// other contexts have read — a count and an IDs-only fetch, which need nothing from the coordinator once read.
    func testTwoContextsFinishReadingWhileAThirdContextSaves() throws {
        let dir = TemporaryDirectory()
        let coordinator = try kennel(dir, dogs: 50)
        let pool = try XCTUnwrap(coordinator.readerPool)
        let store = try coordinator.withLock { try coordinator.requireStore() }
        let events = Box<[(String, UInt64)]>([])
        @Sendable func note(_ event: String) { events.with { $0.append((event, ProbeClock.now())) } }
        @Sendable func waitFor(_ count: Int, _ name: String) -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while events.with({ $0.filter { $0.0 == name }.count }) < count && Date() < deadline { usleep(500) }
            return events.with { $0.filter { $0.0 == name }.count } >= count
        }
        pool.readWillBegin = { note("read began") }
        store.willCommit = {
            // The save's write transaction (not its key allocation's): its 25 rows are in, uncommitted.
            guard let rows = try? store.connection.cachedStatement("SELECT count(*) FROM ZDOG"), (try? rows.step()) == true,
                  rows.int64(at: 0) == 75 else { return }
            rows.reset()
            note("save wrote")
            _ = waitFor(2, "read ended")
            note("save commits")
        }
        let saver = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let saved = DispatchSemaphore(value: 0)
        saver.perform {
            for i in 0..<25 { try? saver.insertNewObject(forEntityName: "Dog").setValue("new \(i)", forKey: "name") }
            try? saver.save()
            saved.signal()
        }
        XCTAssertTrue(waitFor(1, "save wrote"), "the save reached its commit")
        let counted = Box<Int>(-1), identified = Box<Int>(-1)
        let readers = DispatchGroup()
        for reader in 0..<2 {
            readers.enter()
            Thread.detachNewThread {
                let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                context.performAndWait {
                    let request = FetchRequest<ManagedObject>(entityName: "Dog")
                    if reader == 0 {
                        let count = (try? context.count(for: request)) ?? -2
                        counted.with { $0 = count }
                    } else {
                        request.includesPropertyValues = false
                        let ids = (try? context.fetch(request).count) ?? -2
                        identified.with { $0 = ids }
                    }
                }
                note("read ended")
                readers.leave()
            }
        }
        XCTAssertEqual(readers.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(saved.wait(timeout: .now() + 30), .success)
        let log = events.with { $0 }
        let wrote = try XCTUnwrap(log.first { $0.0 == "save wrote" }?.1), commits = try XCTUnwrap(log.first { $0.0 == "save commits" }?.1)
        let began = log.filter { $0.0 == "read began" }.map(\.1), ended = log.filter { $0.0 == "read ended" }.map(\.1)
        XCTAssertEqual(began.count, 2, "both reads ran on pooled readers")
        XCTAssertEqual(ended.count, 2)
        XCTAssertTrue((began + ended).allSatisfy { $0 > wrote && $0 < commits }, "both reads began and ended inside the save's transaction: \(log)")
        XCTAssertEqual(counted.with { $0 }, 50, "the count sees the last committed state, not the save's rows")
        XCTAssertEqual(identified.with { $0 }, 50)
        let after = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try after.performAndWait { try after.count(for: FetchRequest<ManagedObject>(entityName: "Dog")) }, 75, "the save committed")
    }

    func testAnUncontendedFetchUsesTheStoreConnectionAndSomeStoresHaveNoPool() throws {
        let dir = TemporaryDirectory()
        let coordinator = try kennel(dir, dogs: 3)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")) }, 3)
        _ = try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog")) }
        XCTAssertEqual(coordinator.statistics.pooledReads, 0, "no contention, no pooled read")
        XCTAssertEqual(coordinator.readerPool?.opened, 0, "connections are opened on first need")

        XCTAssertNil(try kennel(TemporaryDirectory(), dogs: 0, readers: 0).readerPool, "readerConnections 0: every read waits its turn")
        let memory = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
        try memory.addPersistentStore(type: .inMemory, at: nil)
        XCTAssertNil(memory.readerPool, "an in-memory store has one connection")
        let rollback = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: .disabled)
        try rollback.addPersistentStore(type: .sqlite, at: dir.file("journal.sqlite"), pragmas: [try StorePragma("journal_mode", "DELETE")])
        XCTAssertNil(rollback.readerPool, "readers would wait for the writer without WAL")
        let probed = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: Probes(recorders: [InMemoryProbeRecorder()]))
        try probed.addPersistentStore(type: .sqlite, at: dir.file("probed.sqlite"))
        XCTAssertNil(probed.readerPool, "with probes on, each fetch counts its statements on the store's connection")
    }

    func testARowReadBeforeASaveNeverReplacesTheSavedSnapshot() {
        let cache = RowCache()
        let key = ObjectKey(table: 1, key: 7)
        var newer = SlotRowWriter(rowsPerBlock: 1)
        let saved = newer.row(width: 1) { $0.initialize(to: .text("saved")) }
        _ = cache.upsertAndRetain(key, version: 3, entityNumber: 1, at: 0) { saved }
        var older = SlotRowWriter(rowsPerBlock: 1)
        let stale = older.row(width: 1) { $0.initialize(to: .text("read before")) }
        let kept = cache.upsertAndRetainUnlessNewer(key, version: 2, entityNumber: 1, at: 1) { stale }
        XCTAssertEqual("\(kept[0])", "\(Slot.text("saved"))")
        XCTAssertEqual(cache.entry(for: key)?.version, 3)
        XCTAssertEqual(cache.entry(for: key)?.holders, 2)
        let fresh = cache.upsertAndRetainUnlessNewer(key, version: 4, entityNumber: 1, at: 2) { stale }
        XCTAssertEqual("\(fresh[0])", "\(Slot.text("read before"))", "a newer read replaces it")
    }
}
