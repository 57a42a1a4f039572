import Foundation
import XCTest
@testable import Faultline

/// Persistent history processed as Core Data code does it: fetch the transactions after the last token, merge each
/// one's object IDs into another context, keep the newest token, prune old history.
final class PersistentHistoryRequestTests: XCTestCase {
    func testHistoryAfterATokenMergedAndPruned() throws {
        let dir = TemporaryDirectory()
        let container = PersistentContainer(name: "Kennel", managedObjectModel: try makeTestModel(), probes: .disabled)
        let description = PersistentStoreDescription(url: dir.file("Kennel.sqlite"))
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        container.persistentStoreDescriptions = [description]
        try container.loadPersistentStores()
        let writer = container.newBackgroundContext()
        let reader = container.newBackgroundContext()
        var rexID: ManagedObjectID!
        try writer.performAndWait {
            let rex = EntityDescription.insertNewObject(forEntityName: "Dog", into: writer)
            try rex.setValue("Rex", forKey: "name")
            try EntityDescription.insertNewObject(forEntityName: "Dog", into: writer).setValue("Ada", forKey: "name")
            try writer.save()
            rexID = rex.objectID
        }
        // The reader holds Rex before the other saves.
        let heldName = try reader.performAndWait { try reader.existingObject(with: rexID).value(forKey: "name") as? String }
        XCTAssertEqual(heldName, "Rex")
        let firstToken = try reader.performAndWait { () -> PersistentHistoryToken? in
            let all = try reader.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
            return (all.result as? [PersistentHistoryTransaction])?.last?.token
        }
        XCTAssertNotNil(firstToken)
        try writer.performAndWait {
            let rex = try writer.existingObject(with: rexID)
            try rex.setValue("Rex II", forKey: "name")
            try writer.save()
            writer.delete(rex)
            try writer.save()
        }
        try reader.performAndWait {
            let result = try reader.execute(PersistentHistoryChangeRequest.fetchHistory(after: firstToken))
            let transactions = try XCTUnwrap(result.result as? [PersistentHistoryTransaction])
            XCTAssertEqual(transactions.count, 2, "the update and the delete, not the insert before the token")
            XCTAssertEqual(transactions.compactMap { $0.changes?.first?.changeType }, [.update, .delete])
            XCTAssertEqual(transactions[0].changes?.first?.changedObjectID, rexID)
            XCTAssertEqual(transactions[0].changes?.first?.updatedProperties?.map(\.name), ["name"])
            XCTAssertEqual(transactions.last?.token, container.persistentStoreCoordinator.currentPersistentHistoryToken())
            // Merged as Core Data merges it: the reader's Rex is gone.
            for transaction in transactions { reader.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
            XCTAssertNil(reader.registeredObject(for: rexID), "the deleted object left the reader")
            XCTAssertThrowsError(try reader.existingObject(with: rexID))
            // Counts, transactions only, and pruning.
            let counting = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
            counting.resultType = .count
            XCTAssertEqual(try reader.execute(counting).result as? Int, 3)
            let bare = PersistentHistoryChangeRequest.fetchHistory(after: Date.distantPast)
            bare.resultType = .transactionsOnly
            XCTAssertNil((try reader.execute(bare).result as? [PersistentHistoryTransaction])?.first?.changes)
            // Before a token: the transactions older than the token's go, the token's own stays; nil deletes nothing.
            let all = try XCTUnwrap(try reader.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).result as? [PersistentHistoryTransaction])
            let none = PersistentHistoryChangeRequest.deleteHistory(before: nil as PersistentHistoryToken?)
            none.resultType = .count
            XCTAssertEqual(try reader.execute(none).result as? Int, 0)
            let upTo = PersistentHistoryChangeRequest.deleteHistory(before: all[1])
            upTo.resultType = .count
            XCTAssertEqual(try reader.execute(upTo).result as? Int, 1)
            XCTAssertEqual(try reader.execute(counting).result as? Int, 2)
            _ = try reader.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date().addingTimeInterval(60)))
            XCTAssertEqual(try reader.execute(counting).result as? Int, 0)
        }
        // A token of another store is refused in words.
        let other = PersistentContainer(name: "Other", managedObjectModel: try makeTestModel(), probes: .disabled)
        other.persistentStoreDescriptions = [PersistentStoreDescription(url: dir.file("Other.sqlite"))]
        try other.loadPersistentStores()
        let context = other.newBackgroundContext()
        try context.performAndWait {
            XCTAssertThrowsError(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: firstToken))) { error in
                XCTAssertTrue("\(error)".contains("the history token is of the store"), "\(error)")
            }
        }
    }
}
