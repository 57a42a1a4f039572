import Foundation
import Synchronization
import XCTest
@testable import Faultline

/// `perform(schedule:_:)` and `performBackgroundTask` awaited from tasks, as a Swift server uses them.
final class AsyncContextTests: XCTestCase {
    /// A value shared between tasks and queues, behind a lock ThreadSanitizer sees (it does not see a `Mutex`'s
    /// futex).
    private final class Locked<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    private struct Refused: Error, Equatable { let name: String }

    private func container(dogs: Int) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            for i in 0..<dogs { try context.insertNewObject(forEntityName: "Dog").setValue("dog \(i)", forKey: "name") }
            try context.save()
        }
        return container
    }

    func testManyTasksAwaitPerformOnTheirOwnContexts() async throws {
        let container = try container(dogs: 40)
        // The contexts themselves, kept alive to the end: a released context's address (its ObjectIdentifier) can
        // be a later context's.
        let contexts = Locked<[ManagedObjectContext]>([])
        let counts = try await withThrowingTaskGroup(of: (Int, Int, Bool).self) { group in
            for task in 0..<8 {
                group.addTask {
                    let context = container.newBackgroundContext()
                    let (count, onQueue) = try await context.perform {
                        // The body runs on this context's queue, not the task's thread.
                        (try context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), context.isOnQueue)
                    }
                    contexts.withLock { $0.append(context) }
                    return (task, count, onQueue)
                }
            }
            var counts: [Int: Int] = [:]
            for try await (task, count, onQueue) in group {
                XCTAssertTrue(onQueue, "task \(task)'s body ran off its context's queue")
                counts[task] = count
            }
            return counts
        }
        XCTAssertEqual(counts.count, 8)
        XCTAssertTrue(counts.values.allSatisfy { $0 == 40 }, "\(counts)")
        XCTAssertEqual(Set(contexts.withLock { $0.map(ObjectIdentifier.init) }).count, 8, "each task its own context")
    }

    func testOneContextAwaitedFromManyTasksRunsBodiesOneAtATime() async throws {
        let container = try container(dogs: 0)
        let context = container.newBackgroundContext()
        let running = Locked((now: 0, most: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<16 {
                group.addTask {
                    try await context.perform {
                        running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                        try context.insertNewObject(forEntityName: "Dog").setValue("dog \(i)", forKey: "name")
                        Thread.sleep(forTimeInterval: 0.001)
                        running.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(running.withLock { $0.most }, 1, "a context is one isolation domain: its bodies never overlap")
        let saved = try await context.perform { () throws -> Int in
            let inserted = context.insertedObjects.count
            try context.save()
            return inserted
        }
        XCTAssertEqual(saved, 16)
        let ids = try await container.performBackgroundTask { context in
            try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "Dog"))
        }
        XCTAssertEqual(ids.count, 16)
        XCTAssertTrue(ids.allSatisfy { !$0.isTemporaryID })
        // IDs cross tasks and contexts; objects are found again on the context that reads them.
        let names = try await container.performBackgroundTask { context in
            try ids.map { try context.existingObject(with: $0).value(forKey: "name") as? String ?? "" }.sorted()
        }
        XCTAssertEqual(names.count, 16)
        XCTAssertEqual(names.first, "dog 0")
    }

    func testErrorsReachTheAwaitingTaskTyped() async throws {
        let container = try container(dogs: 1)
        let context = container.newBackgroundContext()
        do {
            try await context.perform { () throws(Refused) -> Void in throw Refused(name: "nope") }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error, Refused(name: "nope"), "the body's error type, not `any Error`")
        }
        do {
            // Objects stay on their context: the body returns a count, not the objects (returning them does not compile).
            _ = try await container.performBackgroundTask { context in try context.fetch(FetchRequest<ManagedObject>(entityName: "Cat")).count }
            XCTFail("no error")
        } catch {
            XCTAssertTrue("\(error)".contains("Cat"), "\(error)")
        }
    }

    func testEnqueuedRunsAfterWorkAlreadyQueued() async throws {
        let container = try container(dogs: 0)
        let context = container.newBackgroundContext()
        let order = Locked<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        // The callback `perform(_:)` (a synchronous call: in an async function `perform` is the awaited one).
        let enqueueFirst = {
            context.perform {
                gate.wait()
                order.withLock { $0.append("queued first") }
            }
        }
        enqueueFirst()
        async let later: Void = context.perform(schedule: .enqueued) { order.withLock { $0.append("enqueued") } }
        gate.signal()
        await later
        XCTAssertEqual(order.withLock { $0 }, ["queued first", "enqueued"])
        // The blocking API stays, and `.immediate` from off the queue queues as well.
        let blocking = context.performAndWait { context.insertedObjects.count }
        let immediate = await context.perform(schedule: .immediate) { context.insertedObjects.count }
        XCTAssertEqual(blocking, immediate)
    }

    func testPerformProcessesPendingChangesWhenTheBodyReturns() async throws {
        let container = try container(dogs: 0)
        let context = container.newBackgroundContext()
        let notified = Locked(0)
        context.performAndWait {
            _ = context.addObjectsDidChangeObserver { note in notified.withLock { $0 += note.inserted.count } }
        }
        try await context.perform { try context.insertNewObject(forEntityName: "Dog").setValue("Rex", forKey: "name") }
        XCTAssertEqual(notified.withLock { $0 }, 1, "objects-did-change sent as the body returned")
    }
}
