import CFaultInjection
import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// A vacuum, history pruning and a migration, each failed at SQLite's k-th write, sync and truncate: the store is
/// left as it was (a migration's old store untouched, no scratch file left beside it), and the operation succeeds
/// when tried again. `make test` tries a sample of k; `make test-faults` (`FAULTLINE_FAULTS=all`) every k.
final class FaultSweepTests: XCTestCase {
    private static func model(extraAttribute: Bool = false) throws -> ManagedObjectModel {
        var properties: [PropertyDescription] = [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "notes", type: .string),
        ]
        if extraAttribute { properties.append(AttributeDescription(name: "born", type: .integer32)) }
        return try ManagedObjectModel(entities: [EntityDescription(name: "Author", properties: properties)])
    }

    /// A store of 60 authors, 40 of them deleted again (free pages for a vacuum), with history.
    private func makeStore(_ url: URL, pragmas: [String: String]) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [PersistentHistoryTrackingKey: true, SQLitePragmasOption: pragmas])
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            var authors: [ManagedObject] = []
            for i in 0..<60 {
                let author = try context.insertNewObject(forEntityName: "Author")
                try author.setValue("Author \(i)", forKey: "name")
                try author.setValue(String(repeating: "n", count: 400), forKey: "notes")
                authors.append(author)
            }
            try context.save()
            for author in authors.prefix(40) { context.delete(author) }
            try context.save()
        }
    }

    /// Every table's rows, and the integrity check.
    private func rows(of url: URL) throws -> [String] { try storeRows(of: url, excluding: []) }

    /// The files beside the store but its own siblings: `-wal`, `-shm`, and a hot `-journal` (a rollback that could
    /// not write — the disk still full — leaves it for the next open to roll the transaction back, as SQLite does).
    private func files(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-journal") }.sorted()
    }


    /// Runs `operation` on a fresh store at every sampled k of each fault kind, under WAL and a rollback journal;
    /// `check` judges a failure (the store as it was) and the retry. Returns (failed, tried).
    private func sweep(_ name: String, operation: @escaping (URL) throws -> Void,
                       after: (URL, _ before: [String], _ fault: String) throws -> Void) throws -> (Int, Int) {
        let dir = TemporaryDirectory()
        var tried = 0, failed = 0, run = 0
        let journals: [[String: String]] = [[:], ["journal_mode": "DELETE", "synchronous": "FULL"]]
        try withFaultInjection {
            for pragmas in journals {
                for (kinds, code) in [(InjectedFault.write, SQLITE_IOERR | (3 << 8)), (InjectedFault.write, SQLITE_FULL),
                                      (InjectedFault.sync, SQLITE_IOERR | (4 << 8)), (InjectedFault.truncate, SQLITE_IOERR | (6 << 8))] {
                    run += 1
                    let folder = dir.url.appendingPathComponent("count-\(run)")
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    let counting = folder.appendingPathComponent("Store.sqlite")
                    faultinjection_disarm()
                    try makeStore(counting, pragmas: pragmas)
                    let n = try countingFaults(kinds) { try operation(counting) }
                    for k in faultSample(n) {
                        let fault = InjectedFault(kinds: kinds, code: code, k: k)
                        let folder = dir.url.appendingPathComponent("\(name)-\(run)-\(k)")
                        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                        let url = folder.appendingPathComponent("Store.sqlite")
                        faultinjection_disarm()
                        try makeStore(url, pragmas: pragmas)
                        let before = try rows(of: url)
                        let filesBefore = files(in: folder)
                        fault.arm()
                        let outcome = Result { try operation(url) }
                        faultinjection_disarm()
                        tried += 1
                        if case .failure(let error) = outcome {
                            failed += 1
                            XCTAssertEqual(files(in: folder), filesBefore, "\(name), \(fault): no file left beside the store (\(error))")
                            try after(url, before, "\(fault)")
                        }
                    }
                }
            }
        }
        return (failed, tried)
    }

    /// Core Data's stores are SQLite's: a `VACUUM` or `incremental_vacuum` that fails is rolled back.
    func testAVacuumFailingAtAnyWriteLeavesTheStoreWhole() throws {
        for kind in [StoreVacuum.full, .incremental()] {
            let (failed, tried) = try sweep("vacuum", operation: { url in
                let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model(), probes: .disabled)
                try coordinator.addPersistentStore(at: url)
                _ = try coordinator.vacuum(kind)
            }, after: { url, before, fault in
                let rowsAfter = try self.rows(of: url)
                XCTAssertEqual(rowsAfter.first, "integrity ok", "\(kind), \(fault)")
                XCTAssertEqual(rowsAfter.dropFirst().filter { $0.hasPrefix("ZAUTHOR") }, before.dropFirst().filter { $0.hasPrefix("ZAUTHOR") }, "\(kind), \(fault): every row kept")
                let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model(), probes: .disabled)
                try coordinator.addPersistentStore(at: url)
                XCTAssertNoThrow(try coordinator.vacuum(kind), "\(kind), \(fault): the vacuum succeeds when tried again")
            })
            XCTAssertGreaterThan(failed, 0, "\(kind): \(failed) of \(tried)")
        }
    }

    /// Core Data's `deleteHistory(before:)`: a failed purge deletes nothing; tried again, it deletes.
    func testHistoryPruningFailingAtAnyWriteDeletesNothing() throws {
        let (failed, tried) = try sweep("prune", operation: { url in
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model(), probes: .disabled)
            try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [PersistentHistoryTrackingKey: true])
            _ = try coordinator.deleteHistory(before: Date.distantFuture)
        }, after: { url, before, fault in
            XCTAssertEqual(try self.rows(of: url), before, "\(fault): the history is as it was")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model(), probes: .disabled)
            try coordinator.addPersistentStore(ofType: SQLiteStoreType, at: url, options: [PersistentHistoryTrackingKey: true])
            XCTAssertEqual(try coordinator.deleteHistory(before: Date.distantFuture), 2, "\(fault): both transactions go when tried again")
        })
        XCTAssertGreaterThan(failed, tried / 2, "\(failed) of \(tried)")
    }

    /// A migration that fails leaves the old store untouched and no scratch file beside it; tried again, it
    /// migrates.
    func testAMigrationFailingAtAnyWriteLeavesTheOldStore() throws {
        let source = try Self.model(), destination = try Self.model(extraAttribute: true)
        let (failed, tried) = try sweep("migrate", operation: { url in
            try PersistentStoreCoordinator.migrateStore(at: url, from: source, to: destination, probes: .disabled)
        }, after: { url, before, fault in
            XCTAssertEqual(try self.rows(of: url), before, "\(fault): the old store is untouched")
            XCTAssertNoThrow(try PersistentStoreCoordinator.migrateStore(at: url, from: source, to: destination, probes: .disabled), "\(fault)")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: destination, probes: .disabled)
            try coordinator.addPersistentStore(at: url)
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            XCTAssertEqual(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Author")) }, 20, "\(fault)")
        })
        XCTAssertGreaterThan(failed, tried / 2, "\(failed) of \(tried)")
    }
}
