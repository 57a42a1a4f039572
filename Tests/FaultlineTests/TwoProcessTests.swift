import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// Two processes on one store file: this test process, and a second process running this same test binary in the
/// writer's role (`testWriterRole`), which uses the engine (or, to hold a write lock, raw SQLite).
final class TwoProcessTests: XCTestCase {
    private static let storeVariable = "FAULTLINE_TEST_WRITER_STORE"
    private static let modeVariable = "FAULTLINE_TEST_WRITER_MODE"

    /// Runs the second process's role and waits for it to end.
    private func runWriter(store: URL, mode: String, ready: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["FaultlineTests.TwoProcessTests/testWriterRole"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.storeVariable] = store.path
        environment[Self.modeVariable] = mode
        environment["FAULTLINE_TEST_WRITER_READY"] = ready?.path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The second process. In the normal test run it is skipped.
    func testWriterRole() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment[Self.storeVariable], let mode = environment[Self.modeVariable] else {
            throw XCTSkip("the second process of TwoProcessTests; runs only when that test starts it")
        }
        switch mode {
        case "update":
            // Alice's age changes in another process, through the engine.
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel())
            try coordinator.addPersistentStore(at: URL(fileURLWithPath: path))
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                let alice = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(entityName: "Person", predicate: try ObjectPredicate(parsing: "name == 'Alice'"))).first)
                try alice.setValue(Int16(40), forKey: "age")
                try context.save()
            }
        case "hold":
            // Holds the write lock for a while (another program in the middle of a long transaction).
            var db: OpaquePointer?
            XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
            defer { sqlite3_close(db) }
            XCTAssertEqual(sqlite3_exec(db, "BEGIN IMMEDIATE; UPDATE ZPERSON SET ZAGE = 41, Z_OPT = Z_OPT + 1 WHERE ZNAME = 'Bob'", nil, nil, nil), SQLITE_OK)
            _ = FileManager.default.createFile(atPath: try XCTUnwrap(environment["FAULTLINE_TEST_WRITER_READY"]), contents: nil)
            Thread.sleep(forTimeInterval: 1.0)
            XCTAssertEqual(sqlite3_exec(db, "COMMIT", nil, nil, nil), SQLITE_OK)
        default:
            XCTFail("unknown writer mode \(mode)")
        }
    }

    /// Alice and Bob saved; Alice read (materialized) by a context of this process.
    private func setUp(_ dir: TemporaryDirectory) throws -> (URL, ManagedObjectContext, ManagedObject) {
        let (_, context) = try makeStack(try makeTestModel(), in: dir)
        let alice = try context.performAndWait { () throws -> ManagedObject in
            for name in ["Alice", "Bob"] {
                let person = try context.insertNewObject(forEntityName: "Person")
                try person.setValue(name, forKey: "name")
                try person.setValue(Int16(30), forKey: "age")
            }
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "Person", predicate: try ObjectPredicate(parsing: "name == 'Alice'"))
            request.returnsObjectsAsFaults = false
            return try XCTUnwrap(try context.fetch(request).first)
        }
        return (dir.file("store.sqlite"), context, alice)
    }

    private func stored(_ store: URL) throws -> [String: Int] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel())
        try coordinator.addPersistentStore(at: store)
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        return try reader.performAndWait {
            Dictionary(uniqueKeysWithValues: try reader.fetch(FetchRequest<ManagedObject>(entityName: "Person")).map {
                ($0.value(forKey: "name") as? String ?? "?", Int($0.value(forKey: "age") as? Int16 ?? -1))
            })
        }
    }

    func testEachPolicyAgainstAnotherProcess() throws {
        // After this process renames Alice to Alicia (age untouched) and the other process set her age to 40:
        let expected: [(MergePolicy, [String: Int]?)] = [
            (.error, nil),
            (.rollback, ["Alice": 40, "Bob": 30]),
            (.overwrite, ["Alicia": 30, "Bob": 30]),
            (.mergeByPropertyStoreTrump, ["Alicia": 40, "Bob": 30]),
            (.mergeByPropertyObjectTrump, ["Alicia": 40, "Bob": 30]),
        ]
        for (policy, outcome) in expected {
            let dir = TemporaryDirectory()
            let (store, context, alice) = try setUp(dir)
            let writer = try runWriter(store: store, mode: "update")
            writer.waitUntilExit()
            XCTAssertEqual(writer.terminationStatus, 0, "the second process failed")
            context.mergePolicy = policy
            try context.performAndWait {
                try alice.setValue("Alicia", forKey: "name")
                guard outcome != nil else {
                    XCTAssertThrowsError(try context.save()) { error in
                        guard case SaveError.conflicts(let conflicts) = error else { return XCTFail("\(error)") }
                        XCTAssertEqual(conflicts.map(\.newVersionNumber), [2])
                        XCTAssertNil(conflicts[0].objectSnapshot, "a conflict with the store, not with another context")
                        XCTAssertEqual(conflicts[0].persistedSnapshot?["age"] as? Int16, 40)
                    }
                    return
                }
                try context.save()
            }
            XCTAssertEqual(try stored(store), outcome ?? ["Alice": 40, "Bob": 30], "\(policy.type)")
        }
    }

    func testASaveWaitsForAnotherProcesssWriteLock() throws {
        let dir = TemporaryDirectory()
        let (store, context, alice) = try setUp(dir)
        let ready = dir.file("ready")
        let writer = try runWriter(store: store, mode: "hold", ready: ready)
        // Wait until the other process holds the lock (at most 10 s).
        for _ in 0..<1000 where !FileManager.default.fileExists(atPath: ready.path) { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: ready.path), "the second process never took the lock")
        try context.performAndWait {
            try alice.setValue(Int16(31), forKey: "age")
            try context.save()   // busy until the other process commits, then written
        }
        writer.waitUntilExit()
        XCTAssertEqual(writer.terminationStatus, 0)
        XCTAssertEqual(try stored(store), ["Alice": 31, "Bob": 41], "both writes landed, neither was lost")
    }
}
