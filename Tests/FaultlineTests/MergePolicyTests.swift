import Foundation
import XCTest
@testable import Faultline

/// Merge policies on real conflicts: two contexts on one coordinator (context vs row cache), two coordinators on
/// one file (row cache vs store), and uniqueness constraints within a save and against stored rows.
final class MergePolicyTests: XCTestCase {
    /// The `code` of an item (an Int32 attribute).
    static func code(of item: ManagedObject) -> Int { (item.value(forKey: "code") as? Int32).map(Int.init) ?? -1 }

    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "price", type: .double),
                AttributeDescription(name: "note", type: .string),
                AttributeDescription(name: "updatedAt", type: .date),
                AttributeDescription(name: "code", type: .integer32),
                RelationshipDescription(name: "box", destination: "Box", inverse: "items"),
            ], uniquenessConstraints: [["code"]]),
            EntityDescription(name: "Box", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "items", destination: "Item", inverse: "box", isToMany: true),
            ]),
        ])
    }

    struct Stack {
        let dir = TemporaryDirectory()
        let model: ManagedObjectModel
        let coordinator: PersistentStoreCoordinator

        init(_ model: ManagedObjectModel) throws {
            self.model = model
            coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        }

        func context(separateCoordinator: Bool = false) throws -> ManagedObjectContext {
            guard separateCoordinator else { return ManagedObjectContext(.privateQueue, coordinator: coordinator) }
            let other = PersistentStoreCoordinator(managedObjectModel: model)
            try other.addPersistentStore(at: dir.file("store.sqlite"))
            return ManagedObjectContext(.privateQueue, coordinator: other)
        }

        /// Saves items 1 and 2 as ("t0", 1, "n0").
        func seed() throws {
            let setup = try context()
            try setup.performAndWait {
                for code in [1, 2] {
                    let item = try setup.insertNewObject(forEntityName: "Item")
                    try item.setValue("t0", forKey: "title")
                    try item.setValue(1.0, forKey: "price")
                    try item.setValue("n0", forKey: "note")
                    try item.setValue(code, forKey: "code")
                }
                try setup.save()
            }
        }

        /// The stored items by code, read by a fresh coordinator: (title, price, note, primary key).
        func stored() throws -> [Int: (String?, Double, String?, Int64)] {
            let reader = try context(separateCoordinator: true)
            return try reader.performAndWait {
                var result: [Int: (String?, Double, String?, Int64)] = [:]
                for item in try reader.fetch(FetchRequest<ManagedObject>(entityName: "Item")) {
                    result[MergePolicyTests.code(of: item)] = (item.value(forKey: "title") as? String, item.value(forKey: "price") as? Double ?? 0,
                                                                          item.value(forKey: "note") as? String, item.objectID.key)
                }
                return result
            }
        }
    }

    private func item(code: Int, in context: ManagedObjectContext) throws -> ManagedObject {
        let request = FetchRequest<ManagedObject>(entityName: "Item", predicate: try ObjectPredicate(parsing: "code == %d", code))
        request.returnsObjectsAsFaults = false
        return try XCTUnwrap(try context.fetch(request).first)
    }

    /// Item 1 saved as ("t0", 1, "n0"); the other writer changes title and price, the context under test changes
    /// title and note (and item 2's title, which conflicts with nothing). Returns the context and its save's error.
    private func conflictingSave(_ policy: MergePolicy, separateCoordinator: Bool) throws -> (Stack, ManagedObjectContext, Error?) {
        let stack = try Stack(try model())
        try stack.seed()
        let mine = try stack.context(), theirs = try stack.context(separateCoordinator: separateCoordinator)
        let (one, two) = try mine.performAndWait { (try item(code: 1, in: mine), try item(code: 2, in: mine)) }
        try theirs.performAndWait {
            let item = try item(code: 1, in: theirs)
            try item.setValue("B", forKey: "title")
            try item.setValue(2.0, forKey: "price")
            try theirs.save()
        }
        mine.mergePolicy = policy
        let error: Error? = mine.performAndWait {
            do {
                try one.setValue("C", forKey: "title")
                try one.setValue("C", forKey: "note")
                try two.setValue("C2", forKey: "title")
                try mine.save()
                return nil
            } catch { return error }
        }
        return (stack, mine, error)
    }

    func testErrorPolicyReportsTheConflictWithItsSnapshots() throws {
        // Two contexts on one coordinator: the conflict is with the row cache; no persisted snapshot.
        var (stack, mine, error) = try conflictingSave(.error, separateCoordinator: false)
        guard case SaveError.conflicts(let conflicts)? = error as? SaveError else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(conflicts.count, 1)
        XCTAssertEqual(conflicts[0].oldVersionNumber, 1)
        XCTAssertEqual(conflicts[0].newVersionNumber, 2)
        XCTAssertEqual(conflicts[0].objectSnapshot?["title"] as? String, "t0")
        XCTAssertEqual(conflicts[0].cachedSnapshot?["title"] as? String, "B")
        XCTAssertNil(conflicts[0].persistedSnapshot)
        XCTAssertTrue(mine.performAndWait { mine.hasChanges })
        XCTAssertEqual(try stack.stored()[1]?.0, "B", "nothing written")
        XCTAssertEqual(try stack.stored()[2]?.0, "t0", "nothing written, not even the object without a conflict")

        // Two coordinators: the conflict is between the row cache and the store; no object snapshot.
        (stack, mine, error) = try conflictingSave(.error, separateCoordinator: true)
        guard case SaveError.conflicts(let storeConflicts)? = error as? SaveError else { return XCTFail("\(String(describing: error))") }
        XCTAssertNil(storeConflicts[0].objectSnapshot)
        XCTAssertEqual(storeConflicts[0].cachedSnapshot?["title"] as? String, "t0")
        XCTAssertEqual(storeConflicts[0].persistedSnapshot?["title"] as? String, "B")
        XCTAssertEqual(storeConflicts[0].persistedSnapshot?["price"] as? Double, 2)
        // Resolving by hand: refresh keeping the changes, save again.
        try mine.performAndWait {
            let one = try XCTUnwrap(mine.updatedObjects.first { MergePolicyTests.code(of: $0) == 1 })
            mine.refresh(one, mergeChanges: true)
            try mine.save()
        }
        XCTAssertEqual(try stack.stored()[1].map { [$0.0, "\($0.1)", $0.2] }, ["C", "2.0", "C"])
    }

    func testPredefinedPoliciesOnBothConflictSites() throws {
        // (title, price, note) of item 1 after the save; item 2 always gets its change.
        let expected: [(MergePolicy, String, [String?])] = [
            (.rollback, "rollback", ["B", "2.0", "n0"]),
            (.overwrite, "overwrite", ["C", "1.0", "C"]),
            (.mergeByPropertyStoreTrump, "store trump", ["B", "2.0", "C"]),
            (.mergeByPropertyObjectTrump, "object trump", ["C", "2.0", "C"]),
        ]
        for separate in [false, true] {
            for (policy, name, values) in expected {
                let (stack, mine, error) = try conflictingSave(policy, separateCoordinator: separate)
                let site = separate ? "two coordinators" : "one coordinator"
                XCTAssertNil(error, "\(name), \(site)")
                let stored = try stack.stored()
                XCTAssertEqual(stored[1].map { [$0.0, "\($0.1)", $0.2] }, values, "\(name), \(site)")
                XCTAssertEqual(stored[2]?.0, "C2", "\(name), \(site): the object without a conflict is saved")
                try mine.performAndWait {
                    XCTAssertFalse(mine.hasChanges, "\(name), \(site)")
                    let one = try item(code: 1, in: mine)
                    XCTAssertEqual(one.value(forKey: "title") as? String, values[0], "\(name), \(site): the object shows what was saved")
                }
            }
        }
    }

    func testConflictWithADeletedRow() throws {
        for policy in [MergePolicy.error, .rollback, .overwrite, .mergeByPropertyStoreTrump, .mergeByPropertyObjectTrump] {
            let stack = try Stack(try model())
            try stack.seed()
            let mine = try stack.context(), theirs = try stack.context(separateCoordinator: true)
            let (one, two) = try mine.performAndWait { (try item(code: 1, in: mine), try item(code: 2, in: mine)) }
            try theirs.performAndWait {
                theirs.delete(try item(code: 1, in: theirs))
                try theirs.save()
            }
            mine.mergePolicy = policy
            try mine.performAndWait {
                try one.setValue("gone", forKey: "title")
                try two.setValue("kept", forKey: "title")
                if policy.type == .error {
                    XCTAssertThrowsError(try mine.save()) { error in
                        guard case SaveError.conflicts(let conflicts) = error else { return XCTFail("\(error)") }
                        XCTAssertTrue(conflicts[0].rowWasDeleted)
                        XCTAssertNil(conflicts[0].persistedSnapshot)
                    }
                    return
                }
                try mine.save()
                XCTAssertNil(one.managedObjectContext, "the object of the deleted row left the context")
            }
            if policy.type != .error {
                XCTAssertEqual(try stack.stored().keys.sorted(), [2])
                XCTAssertEqual(try stack.stored()[2]?.0, "kept")
            }
        }
    }

    /// A delete against the other writer's saved change of the same row, for every policy. Core Data's documented
    /// outcomes: the error policy fails the save; rollback discards the context's change (the delete) for the
    /// object in conflict; overwrite and object-trump let the context's change win (the row goes); store-trump lets
    /// the store's win (the documentation is silent on a delete against an update: the row stays, the choice that
    /// loses nothing). Against the other writer's delete of the same row, every policy saves: nothing is left to
    /// delete, so there is no conflict.
    func testADeleteAgainstTheOtherWritersUpdateOrDeleteForEveryPolicy() throws {
        let outcomes: [(MergePolicy, String, rowStays: Bool?)] = [
            (.error, "error", nil), (.rollback, "rollback", true), (.overwrite, "overwrite", false),
            (.mergeByPropertyStoreTrump, "store trump", true), (.mergeByPropertyObjectTrump, "object trump", false),
        ]
        for separate in [false, true] {
            for (policy, name, rowStays) in outcomes {
                for theirsDeletes in [false, true] {
                    let stack = try Stack(try model())
                    try stack.seed()
                    let mine = try stack.context(), theirs = try stack.context(separateCoordinator: separate)
                    let one = try mine.performAndWait { try item(code: 1, in: mine) }
                    try theirs.performAndWait {
                        let item = try item(code: 1, in: theirs)
                        if theirsDeletes { theirs.delete(item) } else { try item.setValue("theirs", forKey: "title") }
                        try theirs.save()
                    }
                    mine.mergePolicy = policy
                    let label = "\(name), \(theirsDeletes ? "their delete" : "their update"), \(separate ? "two coordinators" : "one coordinator")"
                    let outcome = Result { try mine.performAndWait { mine.delete(one); try mine.save() } }
                    if theirsDeletes {
                        XCTAssertNoThrow(try outcome.get(), "\(label): nothing left to delete is no conflict")
                        XCTAssertEqual(try stack.stored().keys.sorted(), [2], label)
                    } else if let rowStays {
                        XCTAssertNoThrow(try outcome.get(), label)
                        XCTAssertEqual(try stack.stored().keys.sorted(), rowStays ? [1, 2] : [2], label)
                        if rowStays { XCTAssertEqual(try stack.stored()[1]?.0, "theirs", "\(label): the other writer's value stays") }
                    } else {
                        XCTAssertThrowsError(try outcome.get(), label) { error in
                            guard case SaveError.conflicts = error else { return XCTFail("\(label): \(error)") }
                        }
                        XCTAssertEqual(try stack.stored().keys.sorted(), [1, 2], label)
                    }
                    let saved = theirsDeletes || rowStays != nil
                    XCTAssertEqual(mine.performAndWait { mine.hasChanges }, !saved, "\(label): a failed save keeps the delete pending, a save clears it")
                }
            }
        }
    }

    /// Core Data's `detectConflicts(for:)`: an unchanged object marked for conflict detection makes the next save
    /// check its row's version — another writer's change is then a conflict, resolved by the merge policy; unmarked,
    /// the save does not look at it.
    func testDetectConflictsChecksAnUnchangedObject() throws {
        for (marked, policy) in [(false, MergePolicy.error), (true, .error), (true, .mergeByPropertyObjectTrump)] {
            let stack = try Stack(try model())
            try stack.seed()
            let mine = try stack.context(), theirs = try stack.context(separateCoordinator: true)
            mine.mergePolicy = policy
            let (one, two) = try mine.performAndWait { (try item(code: 1, in: mine), try item(code: 2, in: mine)) }
            try theirs.performAndWait {
                try item(code: 1, in: theirs).setValue("theirs", forKey: "title")
                try theirs.save()
            }
            let label = "marked \(marked), \(policy.type)"
            let outcome = Result {
                try mine.performAndWait {
                    if marked { mine.detectConflicts(for: one) }
                    try two.setValue("mine", forKey: "title")
                    try mine.save()
                }
            }
            if marked && policy.type == .error {
                XCTAssertThrowsError(try outcome.get(), label) { error in
                    guard case SaveError.conflicts(let conflicts) = error else { return XCTFail("\(label): \(error)") }
                    XCTAssertEqual(conflicts.map(\.object), [mine.performAndWait { one.objectID }], label)
                }
                XCTAssertEqual(try stack.stored()[2]?.0, "t0", "\(label): nothing was written")
            } else {
                XCTAssertNoThrow(try outcome.get(), label)
                XCTAssertEqual(try stack.stored()[2]?.0, "mine", label)
                XCTAssertEqual(try stack.stored()[1]?.0, "theirs", label)
                if marked {
                    XCTAssertEqual(mine.performAndWait { one.value(forKey: "title") as? String }, "theirs", "\(label): the object took the store's values")
                }
            }
        }
    }

    func testUniquenessWithinOneSaveKeepsTheFirstAndMovesItsRelationships() throws {
        let stack = try Stack(try model())
        let context = try stack.context()
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait {
            let first = try context.insertNewObject(forEntityName: "Item")
            try first.setValue(7, forKey: "code")
            try first.setValue("first", forKey: "title")
            let second = try context.insertNewObject(forEntityName: "Item")
            try second.setValue(7, forKey: "code")
            try second.setValue("second", forKey: "title")
            let box = try context.insertNewObject(forEntityName: "Box")
            try box.setValue([second], forKey: "items")
            try context.save()
            XCTAssertTrue(first.managedObjectContext === context)
            XCTAssertNil(second.managedObjectContext)
            XCTAssertTrue((box.value(forKey: "items") as? [ManagedObject])?.first === first)
        }
        let stored = try stack.stored()
        XCTAssertEqual(stored.count, 1)
        XCTAssertEqual(stored[7]?.0, "first")
        // The error policy reports both objects of the pair.
        let strict = try stack.context()
        try strict.performAndWait {
            for title in ["a", "b"] {
                let item = try strict.insertNewObject(forEntityName: "Item")
                try item.setValue(8, forKey: "code")
                try item.setValue(title, forKey: "title")
            }
            XCTAssertThrowsError(try strict.save()) { error in
                guard case SaveError.constraintConflicts(let conflicts) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(conflicts.count, 2)
                XCTAssertTrue(conflicts.allSatisfy { $0.conflictingObject != nil && $0.databaseObject == nil && $0.constraint == ["code"] })
            }
        }
    }

    func testUniquenessAgainstAStoredRowPerPolicy() throws {
        // (rows with code 5 after the save: title, note, same primary key as before)
        let expected: [(MergePolicy, String, String, String?, Bool)] = [
            (.rollback, "rollback", "stored", "stored note", true),
            (.mergeByPropertyStoreTrump, "store trump", "stored", "stored note", true),
            (.overwrite, "overwrite", "new", nil, false),
            (.mergeByPropertyObjectTrump, "object trump", "new", "stored note", true),
        ]
        for (policy, name, title, note, samePK) in expected {
            let stack = try Stack(try model())
            let setup = try stack.context()
            try setup.performAndWait {
                let item = try setup.insertNewObject(forEntityName: "Item")
                try item.setValue(5, forKey: "code")
                try item.setValue("stored", forKey: "title")
                try item.setValue("stored note", forKey: "note")
                try setup.save()
            }
            let before = try XCTUnwrap(try stack.stored()[5]?.3)
            let context = try stack.context()
            context.mergePolicy = policy
            try context.performAndWait {
                let box = try context.insertNewObject(forEntityName: "Box")
                let item = try context.insertNewObject(forEntityName: "Item")
                try item.setValue(5, forKey: "code")
                try item.setValue("new", forKey: "title")
                try item.setValue(box, forKey: "box")
                try context.save()
                XCTAssertFalse(context.hasChanges, name)
            }
            let stored = try stack.stored()
            XCTAssertEqual(stored.count, 1, name)
            XCTAssertEqual(stored[5]?.0, title, name)
            XCTAssertEqual(stored[5]?.2, note, name)
            XCTAssertEqual(stored[5]?.3 == before, samePK, "\(name): primary key kept?")
            if policy.type == .mergeByPropertyObjectTrump {
                let reader = try stack.context(separateCoordinator: true)
                try reader.performAndWait {
                    let item = try item(code: 5, in: reader)
                    XCTAssertNotNil(item.value(forKey: "box"), "the new object's relationship moved to the stored one")
                }
            }
        }
        // The error policy names the stored row.
        let stack = try Stack(try model())
        let context = try stack.context()
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "Item")
            try item.setValue(5, forKey: "code")
            try context.save()
            let duplicate = try context.insertNewObject(forEntityName: "Item")
            try duplicate.setValue(5, forKey: "code")
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.constraintConflicts(let conflicts) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(conflicts.map(\.databaseObject), [item.objectID])
                XCTAssertEqual(conflicts.map(\.object), [duplicate.objectID])
            }
        }
    }

    /// Seed 001 L3913–3971: a policy built on object-trump where the newest `updatedAt` wins, whatever side it is on.
    final class NewestUpdateWins: MergePolicy, @unchecked Sendable {
        init() { super.init(merge: .mergeByPropertyObjectTrump) }

        override func resolve(optimisticLockingConflicts conflicts: [MergeConflict], in context: ManagedObjectContext) throws {
            try super.resolve(optimisticLockingConflicts: conflicts, in: context)
            for conflict in conflicts {
                let object = context.object(with: conflict.object)
                let dates = [object.value(forKey: "updatedAt"), conflict.objectSnapshot?["updatedAt"],
                             conflict.cachedSnapshot?["updatedAt"], conflict.persistedSnapshot?["updatedAt"]].compactMap { $0 as? Date }
                try object.setValue(dates.max() ?? Date(timeIntervalSince1970: 0), forKey: "updatedAt")
            }
        }
    }

    func testACustomPolicyBuildsOnAPredefinedOne() throws {
        let stack = try Stack(try model())
        let setup = try stack.context()
        let t0 = Date(timeIntervalSinceReferenceDate: 1000), older = Date(timeIntervalSinceReferenceDate: 2000), newer = Date(timeIntervalSinceReferenceDate: 3000)
        try setup.performAndWait {
            let item = try setup.insertNewObject(forEntityName: "Item")
            try item.setValue(1, forKey: "code")
            try item.setValue(t0, forKey: "updatedAt")
            try setup.save()
        }
        let mine = try stack.context(), theirs = try stack.context(separateCoordinator: true)
        let one = try mine.performAndWait { try item(code: 1, in: mine) }
        try theirs.performAndWait {
            let item = try item(code: 1, in: theirs)
            try item.setValue("theirs", forKey: "note")
            try item.setValue(newer, forKey: "updatedAt")
            try theirs.save()
        }
        mine.mergePolicy = NewestUpdateWins()
        try mine.performAndWait {
            try one.setValue("mine", forKey: "title")
            try one.setValue(older, forKey: "updatedAt")
            try mine.save()
        }
        let reader = try stack.context(separateCoordinator: true)
        try reader.performAndWait {
            let item = try item(code: 1, in: reader)
            XCTAssertEqual(item.value(forKey: "updatedAt") as? Date, newer)
            XCTAssertEqual(item.value(forKey: "title") as? String, "mine")
            XCTAssertEqual(item.value(forKey: "note") as? String, "theirs")
        }
    }

    func testConflictsResolutionsAndRefusalsAreSaveEvents() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let lines = LineCollector()
        let probes = Probes(configuration: ProbeConfiguration(), recorders: [recorder, SQLDebugLogger(level: 1) { lines.append($0) }])
        let model = try model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let mine = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let item = try mine.performAndWait { () throws -> ManagedObject in
            let item = try mine.insertNewObject(forEntityName: "Item")
            try item.setValue(1, forKey: "code")
            try mine.save()
            return item
        }
        let other = PersistentStoreCoordinator(managedObjectModel: model)
        try other.addPersistentStore(at: dir.file("store.sqlite"))
        let theirs = ManagedObjectContext(.privateQueue, coordinator: other)
        try theirs.performAndWait {
            try self.item(code: 1, in: theirs).setValue("theirs", forKey: "note")
            try theirs.save()
        }
        recorder.removeAll()
        lines.removeAll()
        mine.mergePolicy = .mergeByPropertyObjectTrump
        try mine.performAndWait {
            try item.setValue("mine", forKey: "title")
            try mine.save()
        }
        var saves = recorder.events.compactMap { event -> SaveEvent? in if case .save(let e) = event { return e }; return nil }
        XCTAssertEqual(saves.map(\.conflicts), [1, 0], "the conflicting attempt, then the resolved one")
        XCTAssertNotNil(saves[0].error)
        XCTAssertNil(saves[1].error)
        XCTAssertEqual(lines.lines.filter { $0.contains("save execution time") && $0.contains("(failed: optimistic locking failed") }.count, 1)

        // A save refused by validation writes nothing but is an event with the reason.
        // A save refused by validation writes nothing but is an event with the reason.
        recorder.removeAll()
        let strict = try ManagedObjectModel(entities: [EntityDescription(name: "Thing", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false)])])
        let strictCoordinator = PersistentStoreCoordinator(managedObjectModel: strict, probes: probes)
        try strictCoordinator.addPersistentStore(at: dir.file("strict.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: strictCoordinator)
        try context.performAndWait {
            _ = try context.insertNewObject(forEntityName: "Thing")
            XCTAssertThrowsError(try context.save())
        }
        saves = recorder.events.compactMap { event -> SaveEvent? in if case .save(let e) = event { return e }; return nil }
        XCTAssertEqual(saves.count, 1)
        XCTAssertEqual(saves.first?.statements, 0)
        XCTAssertEqual(saves.first?.inserted, ["Thing": 1])
        XCTAssertTrue(saves.first?.error?.contains("required") == true, saves.first?.error ?? "no error")
    }
}
