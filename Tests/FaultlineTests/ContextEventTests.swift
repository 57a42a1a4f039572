import CFaultInjection
import CSQLite
import Foundation
import XCTest
@testable import Faultline

/// Core Data's behaviour around a context's events and lifetime — invalidation, the current event's changes,
/// delete propagation, permanent IDs before a save, unknown keys — each test naming the documented outcome.
final class ContextEventTests: XCTestCase {
    private func model(cascade: Bool = false) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Hooked", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "count", type: .integer32),
                AttributeDescription(name: "scratch", type: .string, isTransient: true),
                RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
            ], representedClassName: "FaultlineTests.HookedItem"),
            EntityDescription(name: "Owner", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "items", destination: "Hooked", inverse: "owner", isToMany: true,
                                        deleteRule: cascade ? .cascade : .nullify),
            ]),
        ])
    }

    private func stack(_ dir: TemporaryDirectory, cascade: Bool = false, recorder: InMemoryProbeRecorder? = nil)
        throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let probes = recorder.map { Probes(configuration: ProbeConfiguration(), recorders: [$0]) } ?? .shared
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model(cascade: cascade), probes: probes)
        try coordinator.addPersistentStore(at: dir.file("Events.sqlite"))
        return (coordinator, ManagedObjectContext(.privateQueue, coordinator: coordinator))
    }

    private func invalidations(_ recorder: InMemoryProbeRecorder) -> [InvalidateEvent] {
        recorder.events.compactMap { event -> InvalidateEvent? in if case .invalidate(let e) = event { return e }; return nil }
    }

    // MARK: Invalidation

    /// Core Data: objects that outlive their context are invalidated — turned into faults (their
    /// `willTurnIntoFault`/`didTurnIntoFault` called), `managedObjectContext` nil — so a value read afterwards is
    /// nil, never a stale one, and setting one is an error. The trace says how many and why.
    func testObjectsThatOutliveTheirContextAreInvalidated() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let (coordinator, setup) = try stack(dir, recorder: recorder)
        try setup.performAndWait {
            let item = try setup.insertNewObject(forEntityName: "Hooked")
            try item.setValue("kept", forKey: "name")
            try setup.save()
        }
        // The context lives only inside this function.
        func objectsOfAContextThatIsGone() throws -> [HookedItem] {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            let objects = try context.performAndWait { () -> [HookedItem] in
                let saved = try XCTUnwrap(try context.fetch(FetchRequest<ManagedObject>(entityName: "Hooked")).first as? HookedItem)
                XCTAssertEqual(saved.value(forKey: "name") as? String, "kept")
                let pending = try XCTUnwrap(try context.insertNewObject(forEntityName: "Hooked") as? HookedItem)
                try pending.setValue("pending", forKey: "name")
                return [saved, pending]
            }
            HookedItem.events = []
            return objects
        }
        let objects = try objectsOfAContextThatIsGone()
        // The context is gone: only the objects remain.
        XCTAssertEqual(HookedItem.events.sorted(), ["did kept", "did pending", "will kept", "will pending"])
        for object in objects {
            XCTAssertNil(object.managedObjectContext)
            XCTAssertTrue(object.isFault)
            XCTAssertFalse(object.hasChanges)
            XCTAssertNil(object.value(forKey: "name"), "never a stale value")
            XCTAssertThrowsError(try object.setValue("x", forKey: "name")) { XCTAssertTrue("\($0)".contains("invalidated"), "\($0)") }
            XCTAssertThrowsError(try object.checkedValue(forKey: "name")) { XCTAssertTrue("\($0)".contains("invalidated"), "\($0)") }
        }
        let events = invalidations(recorder)
        XCTAssertEqual(events.map(\.objects), [2])
        XCTAssertEqual(events.map(\.reason), [.contextDeallocated])
    }

    /// Core Data: a deleted object's `didSave()` still sees it deleted with its values (the common place to remove
    /// its files); after the save it is a fault that has left the context (`managedObjectContext` nil, `isDeleted`
    /// false, its fault hooks called), and setting a value on it is an error rather than a write nothing will save.
    func testASavedDeletionTurnsTheObjectIntoAFaultAfterItsDidSave() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let item = try XCTUnwrap(try context.insertNewObject(forEntityName: "Hooked") as? HookedItem)
            try item.setValue("gone", forKey: "name")
            try context.save()
            HookedItem.events = []
            context.delete(item)
            try context.save()
            XCTAssertEqual(HookedItem.events, ["saved gone deleted", "will gone", "did gone"])
            XCTAssertNil(item.managedObjectContext)
            XCTAssertTrue(item.isFault)
            XCTAssertFalse(item.isDeleted || item.hasChanges)
            XCTAssertNil(item.value(forKey: "name"))
            XCTAssertThrowsError(try item.setValue("again", forKey: "name")) { XCTAssertTrue("\($0)".contains("its deletion was saved"), "\($0)") }
            XCTAssertFalse(context.hasChanges)
        }
    }

    /// Core Data posts objects-did-change with every object invalidated (`invalidatedAll`) when a context resets;
    /// changes noted before the reset are not reported (they are lost with it).
    func testResetTellsObserversThatEveryObjectWasInvalidated() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let (_, context) = try stack(dir, recorder: recorder)
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "Hooked")
            try context.save()
            let other = try context.insertNewObject(forEntityName: "Hooked")
            var notes: [ObjectsDidChange] = []
            context.addObjectsDidChangeObserver { notes.append($0) }
            try item.setValue("changed", forKey: "name")
            context.reset()
            XCTAssertEqual(notes.count, 1)
            let note = try XCTUnwrap(notes.first)
            XCTAssertTrue(note.invalidatedAll)
            XCTAssertEqual(Set(note.invalidated.map(ObjectIdentifier.init)), Set([item, other].map(ObjectIdentifier.init)))
            XCTAssertTrue(note.updated.isEmpty && note.inserted.isEmpty, "the reset's lost changes are not reported")
            context.processPendingChanges()
            XCTAssertEqual(notes.count, 1, "nothing more to report")
        }
        XCTAssertEqual(invalidations(recorder).map(\.reason), [.reset])
        XCTAssertEqual(invalidations(recorder).map(\.objects), [2])
    }

    /// A remote save's dictionary with Core Data's `NSInvalidatedObjectsKey` (or `NSInvalidatedAllObjectsKey`): the
    /// documentation says only that the objects were invalidated; the merge refreshes them, keeping unsaved changes
    /// (the outcome that loses nothing, docs/contexts.md).
    func testARemoteSavesInvalidatedObjectsAreRefreshed() throws {
        for all in [false, true] {
            let dir = TemporaryDirectory()
            let (coordinator, context) = try stack(dir)
            let (plain, edited) = try context.performAndWait { () -> (ManagedObject, ManagedObject) in
                let plain = try context.insertNewObject(forEntityName: "Hooked"), edited = try context.insertNewObject(forEntityName: "Hooked")
                try plain.setValue("old", forKey: "name")
                try edited.setValue("old", forKey: "name")
                try context.save()
                return (plain, edited)
            }
            let writer = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try writer.performAndWait {
                for id in [plain.objectID, edited.objectID] {
                    let object = try writer.existingObject(with: id)
                    try object.setValue("new", forKey: "name")
                    try object.setValue(Int32(9), forKey: "count")
                }
                try writer.save()
            }
            try context.performAndWait {
                try edited.setValue(Int32(1), forKey: "count")
                XCTAssertEqual(plain.value(forKey: "name") as? String, "old", "not merged yet")
            }
            let dictionary: [AnyHashable: Any] = all ? [InvalidatedAllObjectsKey: [plain.objectID, edited.objectID]]
                                                     : [InvalidatedObjectsKey: [plain.objectID, edited.objectID]]
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: dictionary, into: [context])
            try context.performAndWait {
                XCTAssertEqual(plain.value(forKey: "name") as? String, "new", "all: \(all)")
                XCTAssertEqual(edited.value(forKey: "name") as? String, "new")
                XCTAssertEqual(edited.value(forKey: "count") as? Int32, 1, "the unsaved change is kept")
                XCTAssertTrue(edited.hasChanges)
            }
        }
    }

    /// The merge event counts the inserts it registered to report them (only with an observer: unobserved, no fault
    /// is made for them).
    func testTheMergeEventCountsTheInsertsItRegistered() throws {
        for observed in [false, true] {
            let dir = TemporaryDirectory()
            let recorder = InMemoryProbeRecorder()
            let (coordinator, view) = try stack(dir, recorder: recorder)
            if observed { view.performAndWait { _ = view.addObjectsDidChangeObserver { _ in } } }
            let background = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            var saved: SaveNotification?
            _ = background.addDidSaveObserver { saved = $0 }
            try background.performAndWait {
                for _ in 0..<3 { _ = try background.insertNewObject(forEntityName: "Hooked") }
                try background.save()
            }
            let note = try XCTUnwrap(saved)
            view.performAndWait { view.mergeChanges(fromContextDidSave: note) }
            let merges = recorder.events.compactMap { event -> MergeEvent? in if case .merge(let e) = event { return e }; return nil }
            XCTAssertEqual(merges.map(\.inserted), [3])
            XCTAssertEqual(merges.map(\.registered), [observed ? 3 : 0])
        }
    }

    // MARK: The current event

    /// Core Data's `changedValuesForCurrentEvent()`: the persistent properties changed since the last
    /// objects-did-change notification, with their new values (`changedValues()` keeps everything since the save).
    func testChangedValuesForCurrentEventStartAfterEachNotification() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "Hooked")
            try context.save()
            context.addObjectsDidChangeObserver { _ in }
            try item.setValue("first", forKey: "name")
            XCTAssertEqual(item.changedValuesForCurrentEvent().keys.sorted(), ["name"])
            context.processPendingChanges()
            XCTAssertTrue(item.changedValuesForCurrentEvent().isEmpty, "a new event")
            try item.setValue(Int32(4), forKey: "count")
            try item.setValue("note", forKey: "scratch")
            let current = item.changedValuesForCurrentEvent()
            XCTAssertEqual(current.keys.sorted(), ["count"], "transient properties are not reported")
            XCTAssertEqual(current["count"] as? Int32, 4)
            XCTAssertEqual(item.changedValues().keys.sorted(), ["count", "name", "scratch"], "changedValues() since the save")
        }
    }

    /// Without an observer the context has recorded no event yet: the first call answers with the changes since
    /// the save (said in docs/contexts.md) and starts recording, so that later calls are exact.
    func testChangedValuesForCurrentEventWithoutAnObserver() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "Hooked")
            try context.save()
            try item.setValue("first", forKey: "name")
            XCTAssertEqual(item.changedValuesForCurrentEvent().keys.sorted(), ["name"])
            context.processPendingChanges()
            try item.setValue(Int32(2), forKey: "count")
            XCTAssertEqual(item.changedValuesForCurrentEvent().keys.sorted(), ["count"])
        }
    }

    // MARK: Delete propagation

    /// Core Data's `propagatesDeletesAtEndOfEvent`: true (the default), a deleted object's delete rules apply at the
    /// end of the event (`processPendingChanges()`, the end of a `perform` block, a save); false, only when saving.
    func testDeleteRulesApplyAtTheEndOfTheEventOrTheSave() throws {
        for atEndOfEvent in [true, false] {
            let dir = TemporaryDirectory()
            let (coordinator, context) = try stack(dir, cascade: true)
            context.propagatesDeletesAtEndOfEvent = atEndOfEvent
            let (ownerID, itemID) = try context.performAndWait { () -> (ManagedObjectID, ManagedObjectID) in
                let owner = try context.insertNewObject(forEntityName: "Owner")
                let item = try context.insertNewObject(forEntityName: "Hooked")
                try item.setValue(owner, forKey: "owner")
                try context.save()
                return (owner.objectID, item.objectID)
            }
            try context.performAndWait {
                let owner = context.object(with: ownerID), item = context.object(with: itemID)
                context.delete(owner)
                XCTAssertTrue(owner.isDeleted)
                XCTAssertFalse(item.isDeleted, "the cascade waits for the end of the event")
                XCTAssertTrue(item.value(forKey: "owner") as? ManagedObject === owner)
                context.processPendingChanges()
                XCTAssertEqual(item.isDeleted, atEndOfEvent, "end of event: cascaded only when propagatesDeletesAtEndOfEvent")
                try context.save()
                XCTAssertNil(item.managedObjectContext, "the save applies the rules either way: the cascaded item's deletion is saved")
                XCTAssertFalse(context.hasChanges)
            }
            let check = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try check.performAndWait {
                XCTAssertEqual(try check.count(for: FetchRequest<ManagedObject>(entityName: "Hooked")), 0, "cascaded (\(atEndOfEvent))")
                XCTAssertEqual(try check.count(for: FetchRequest<ManagedObject>(entityName: "Owner")), 0)
            }
        }
    }

    /// A delete undone before the event ends applies no rules (the object is not deleted any more); a rollback
    /// forgets the pending rules with the delete.
    func testADeleteRolledBackBeforeTheEventEndsAppliesNoRules() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir, cascade: true)
        try context.performAndWait {
            let owner = try context.insertNewObject(forEntityName: "Owner")
            let item = try context.insertNewObject(forEntityName: "Hooked")
            try item.setValue(owner, forKey: "owner")
            try context.save()
            context.delete(owner)
            context.rollback()
            context.processPendingChanges()
            XCTAssertFalse(owner.isDeleted || item.isDeleted)
            XCTAssertTrue(item.value(forKey: "owner") as? ManagedObject === owner)
            XCTAssertFalse(context.hasChanges)
        }
    }

    // MARK: Permanent IDs

    /// Core Data's `obtainPermanentIDs(for:)`: the objects' IDs become permanent before the save and stay so; they
    /// are still inserted; the save stores the rows under those keys; objects with permanent IDs are ignored.
    func testObtainPermanentIDsBeforeTheSave() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try stack(dir)
        try context.performAndWait {
            let owner = try context.insertNewObject(forEntityName: "Owner")
            let item = try context.insertNewObject(forEntityName: "Hooked")
            try item.setValue(owner, forKey: "owner")
            let temporary = item.objectID
            XCTAssertTrue(temporary.isTemporaryID)
            try context.obtainPermanentIDs(for: [item, owner, item])
            let permanent = item.objectID
            XCTAssertFalse(permanent.isTemporaryID)
            XCTAssertEqual(permanent.uriString, "x-coredata://\(coordinator.storeIdentifier ?? "?")/Hooked/p\(permanent.primaryKey ?? 0)")
            XCTAssertTrue(item.isInserted, "still inserted until saved")
            XCTAssertTrue(context.registeredObject(for: permanent) === item)
            XCTAssertTrue(context.object(with: permanent) === item)
            XCTAssertTrue(try context.existingObject(with: permanent) === item)
            // Asking again changes nothing.
            try context.obtainPermanentIDs(for: [item])
            XCTAssertEqual(item.objectID, permanent)
            try context.save()
            XCTAssertEqual(item.objectID, permanent, "the save keeps the ID given")
            XCTAssertFalse(owner.objectID.isTemporaryID)
            try context.obtainPermanentIDs(for: [item])
            XCTAssertEqual(item.objectID, permanent, "an object with a permanent ID is ignored")
            let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try other.performAndWait {
                let found = try other.existingObject(with: permanent)
                XCTAssertTrue((found.value(forKey: "owner") as? ManagedObject)?.objectID == owner.objectID)
            }
        }
    }

    /// objc.io (P-86): the store gives permanent IDs in an SQLite transaction of its own, before the save's. With
    /// `obtainPermanentIDs(for:)` that transaction runs at the call, and the save runs only its own.
    func testPermanentIDsComeFromATransactionOfTheirOwn() throws {
        for obtaining in [false, true] {
            let dir = TemporaryDirectory()
            let recorder = InMemoryProbeRecorder()
            let (_, context) = try stack(dir, recorder: recorder)
            try context.performAndWait {
                let items = try (0..<3).map { _ in try context.insertNewObject(forEntityName: "Hooked") }
                recorder.removeAll()
                if obtaining { try context.obtainPermanentIDs(for: items) }
                let beforeSave = recorder.events.count
                try context.save()
                let statements = recorder.events.enumerated().compactMap { index, event -> (Bool, StatementEvent)? in
                    if case .statement(let e) = event { return (index < beforeSave, e) }
                    return nil
                }
                let keys = statements.filter { $0.1.purpose == .keyAllocation }
                XCTAssertTrue(keys.contains { $0.1.sql.hasPrefix("UPDATE Z_PRIMARYKEY") }, "obtaining \(obtaining)")
                XCTAssertEqual(keys.first?.1.sql, "BEGIN EXCLUSIVE", "its own transaction")
                XCTAssertEqual(keys.last?.1.sql, "COMMIT")
                XCTAssertTrue(keys.allSatisfy { $0.0 == obtaining }, "at the call when obtained first, else in the save")
                // The save's transaction follows the key transaction.
                let firstSave = try XCTUnwrap(statements.firstIndex { $0.1.purpose == .save && $0.1.sql.hasPrefix("INSERT") })
                XCTAssertLessThan(try XCTUnwrap(statements.lastIndex { $0.1.purpose == .keyAllocation }), firstSave)
            }
        }
    }

    /// A child context's object keeps the permanent ID it obtained through the child's save into its parent and the
    /// parent's save to the store.
    func testAChildContextsObtainedIDSurvivesBothSaves() throws {
        let dir = TemporaryDirectory()
        let (coordinator, parent) = try stack(dir)
        let child = ManagedObjectContext(.privateQueue, parent: parent)
        let id = try child.performAndWait { () -> ManagedObjectID in
            let item = try child.insertNewObject(forEntityName: "Hooked")
            try item.setValue("child", forKey: "name")
            try child.obtainPermanentIDs(for: [item])
            try child.save()
            XCTAssertFalse(item.objectID.isTemporaryID)
            XCTAssertTrue(child.registeredObject(for: item.objectID) === item)
            return item.objectID
        }
        try parent.performAndWait {
            let pushed = try XCTUnwrap(parent.registeredObject(for: id), "the parent knows the object by the permanent ID")
            XCTAssertTrue(pushed.isInserted)
            try parent.save()
            XCTAssertEqual(pushed.objectID, id)
        }
        let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try other.performAndWait { XCTAssertEqual(try other.existingObject(with: id).value(forKey: "name") as? String, "child") }
    }

    /// An object this context cannot give a permanent ID (another context's, a deleted one) is an error, and no
    /// object of the call gets a key.
    func testObtainPermanentIDsRefusesObjectsItCannotGiveIDs() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try stack(dir)
        let stranger = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let foreign = try stranger.performAndWait { try stranger.insertNewObject(forEntityName: "Hooked") }
        try context.performAndWait {
            let mine = try context.insertNewObject(forEntityName: "Hooked")
            XCTAssertThrowsError(try context.obtainPermanentIDs(for: [mine, foreign])) {
                XCTAssertTrue("\($0)".contains("not an unsaved object of this context"), "\($0)")
            }
            XCTAssertTrue(mine.objectID.isTemporaryID, "no object of the call got a key")
        }
    }

    /// The keys come from the store in their own transaction: when a write or sync fails at any k, the call throws,
    /// the objects keep their temporary IDs, and a later save stores them (with keys after any the store gave).
    func testObtainPermanentIDsFailingAtEveryKLeavesTheObjectsTemporary() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("Events.sqlite")
        try withFaultInjection {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
            try coordinator.addPersistentStore(at: url)
            let faults = try InjectedFault.everyK { kinds in
                let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                return try context.performAndWait {
                    let item = try context.insertNewObject(forEntityName: "Hooked")
                    return try countingFaults(kinds) { try context.obtainPermanentIDs(for: [item]) }
                }
            }
            XCTAssertFalse(faults.isEmpty)
            for k in faultSample(faults.count) {
                let fault = faults[k - 1]
                let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                try context.performAndWait {
                    let item = try context.insertNewObject(forEntityName: "Hooked")
                    try item.setValue("k", forKey: "name")
                    fault.arm()
                    XCTAssertThrowsError(try context.obtainPermanentIDs(for: [item]), "\(fault)")
                    faultinjection_disarm()
                    XCTAssertTrue(item.objectID.isTemporaryID, "\(fault)")
                    XCTAssertTrue(item.isInserted)
                    try context.save()
                    XCTAssertFalse(item.objectID.isTemporaryID, "\(fault)")
                }
            }
        }
    }

    // MARK: Unknown keys

    /// Core Data raises `NSUnknownKeyException` for a key the entity does not have; `checkedValue(forKey:)` is the
    /// throwing form (for keys from input), naming the entity and the key.
    func testAnUnknownKeyIsAnErrorNamingTheEntityAndKey() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try stack(dir)
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "Hooked")
            try item.setValue("x", forKey: "name")
            XCTAssertEqual(try item.checkedValue(forKey: "name") as? String, "x")
            XCTAssertThrowsError(try item.checkedValue(forKey: "nmae")) { XCTAssertEqual("\($0)", "entity 'Hooked' has no property 'nmae'") }
            XCTAssertThrowsError(try item.setValue(1, forKey: "nmae")) { XCTAssertEqual("\($0)", "entity 'Hooked' has no property 'nmae'") }
            XCTAssertNil(item.value(forKeyPath: "owner.nmae"), "a key path through nil reads nil, as Core Data")
        }
    }
}
