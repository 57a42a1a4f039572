import Foundation
import XCTest
@testable import Faultline

/// Child contexts: reading through the parent, saving into it, discarding, nesting, automatic merges.
final class NestedContextTests: XCTestCase {
    private func dogs(_ context: ManagedObjectContext, _ format: String? = nil) throws -> [String] {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog", predicate: try format.map { try ObjectPredicate(parsing: $0) },
                                                      sortDescriptors: [FetchSortDescriptor(keyPath: "name")])
            return try context.fetch(request).map { $0.value(forKey: "name") as? String ?? "?" }
        }
    }

    private func dog(_ name: String, in context: ManagedObjectContext) throws -> ManagedObject {
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Dog", predicate: try ObjectPredicate(parsing: "name == %@", name))
            return try XCTUnwrap(try context.fetch(request).first, "no dog \(name)")
        }
    }

    /// A root context holding Rex, Fido and Bello, saved; Rex belongs to Alice.
    private func savedKennel(_ dir: TemporaryDirectory) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (coordinator, root) = try makeStack(try makeTestModel(), in: dir)
        try root.performAndWait {
            let alice = try root.insertNewObject(forEntityName: "Person")
            try alice.setValue("Alice", forKey: "name")
            for name in ["Rex", "Fido", "Bello"] {
                let dog = try root.insertNewObject(forEntityName: "Dog")
                try dog.setValue(name, forKey: "name")
                if name == "Rex" { try dog.setValue(alice, forKey: "owner") }
            }
            try root.save()
        }
        return (coordinator, root)
    }

    func testChildSeesItsParentsUnsavedChanges() throws {
        let dir = TemporaryDirectory()
        let (coordinator, root) = try savedKennel(dir)
        let bob = try root.performAndWait { () throws -> ManagedObject in
            try dog("Rex", in: root).setValue("Rex II", forKey: "name")
            root.delete(try dog("Fido", in: root))
            let bob = try root.insertNewObject(forEntityName: "Person")
            try bob.setValue("Bob", forKey: "name")
            let max = try root.insertNewObject(forEntityName: "Dog")
            try max.setValue("Max", forKey: "name")
            try max.setValue(bob, forKey: "owner")
            return bob
        }
        let child = ManagedObjectContext(.privateQueue, parent: root)
        XCTAssertTrue(child.parent === root)
        XCTAssertTrue(child.coordinator === coordinator)
        XCTAssertEqual(try dogs(child), ["Bello", "Max", "Rex II"])
        XCTAssertEqual(try dogs(child, "name BEGINSWITH 'R'"), ["Rex II"])
        XCTAssertEqual(try dogs(child, "name == 'Rex'"), [], "the stored name no longer matches in the parent")
        try child.performAndWait {
            XCTAssertEqual(try child.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), 3)
            let ids = try child.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "Dog"))
            XCTAssertEqual(ids.filter(\.isTemporaryID).count, 1, "Max has a temporary ID until the root saves")
            let max = try dog("Max", in: child)
            XCTAssertFalse(max.isInserted, "the parent's insert is not the child's")
            XCTAssertEqual(max.objectID, root.performAndWait { root.insertedObjects.first { $0.entity.name == "Dog" }!.objectID })
            let owner = try XCTUnwrap(max.value(forKey: "owner") as? ManagedObject)
            XCTAssertEqual(owner.value(forKey: "name") as? String, "Bob")
            XCTAssertEqual(owner.objectID, root.performAndWait { bob.objectID })
            XCTAssertEqual((owner.value(forKey: "dogs") as? [ManagedObject])?.map(\.objectID), [max.objectID])
            // Objects reached by ID read through the parent too.
            let rex = try child.existingObject(with: root.performAndWait { try dog("Rex II", in: root).objectID })
            XCTAssertEqual(rex.value(forKey: "name") as? String, "Rex II")
            XCTAssertFalse(child.hasChanges)
        }
    }

    func testChildEditDiscardAndSaveCycle() throws {
        let dir = TemporaryDirectory()
        let (coordinator, root) = try savedKennel(dir)
        let child = ManagedObjectContext(.privateQueue, parent: root)
        func edit() throws {
            try child.performAndWait {
                let rex = try dog("Rex", in: child)
                try rex.setValue("Rex II", forKey: "name")
                child.delete(try dog("Bello", in: child))
                let max = try child.insertNewObject(forEntityName: "Dog")
                try max.setValue("Max", forKey: "name")
                let walk = try child.insertNewObject(forEntityName: "Walk")
                try walk.setValue(max, forKey: "dog")
                let alice = try XCTUnwrap(rex.value(forKey: "owner") as? ManagedObject)
                try max.setValue(alice, forKey: "owner")
            }
        }
        // Edit, then discard: the child is back to the parent's state and the parent never changed.
        try edit()
        XCTAssertEqual(try dogs(child), ["Fido", "Max", "Rex II"])
        XCTAssertFalse(root.performAndWait { root.hasChanges })
        child.performAndWait { child.rollback() }
        XCTAssertEqual(try dogs(child), ["Bello", "Fido", "Rex"])
        XCTAssertFalse(child.performAndWait { child.hasChanges })

        // Edit again and save: the changes move into the parent, not the store.
        try edit()
        try child.performAndWait { try child.save() }
        XCTAssertFalse(child.performAndWait { child.hasChanges })
        try root.performAndWait {
            XCTAssertTrue(root.hasChanges)
            XCTAssertEqual(Set(root.insertedObjects.map(\.entity.name)), ["Dog", "Walk"])
            XCTAssertTrue(root.insertedObjects.allSatisfy(\.objectID.isTemporaryID))
            XCTAssertEqual(root.updatedObjects.compactMap { $0.value(forKey: "name") as? String }.sorted(), ["Alice", "Rex II"],
                           "Alice's dogs changed too (inverse of Max's owner)")
            XCTAssertEqual(root.deletedObjects.map { $0.value(forKey: "name") as? String }, ["Bello"])
            let alice = try XCTUnwrap(try dog("Rex II", in: root).value(forKey: "owner") as? ManagedObject)
            XCTAssertEqual((alice.value(forKey: "dogs") as? [ManagedObject])?.compactMap { $0.value(forKey: "name") as? String }.sorted(), ["Max", "Rex II"])
            let max = try dog("Max", in: root)
            XCTAssertEqual((max.value(forKey: "walks") as? [ManagedObject])?.count, 1)
        }
        XCTAssertEqual(try dogs(ManagedObjectContext(.privateQueue, coordinator: coordinator)), ["Bello", "Fido", "Rex"],
                       "nothing reached the store yet")

        // The root's save writes everything; a fresh context reads it back.
        try root.performAndWait { try root.save() }
        let fresh = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try dogs(fresh), ["Fido", "Max", "Rex II"])
        try fresh.performAndWait {
            let max = try dog("Max", in: fresh)
            XCTAssertEqual((max.value(forKey: "owner") as? ManagedObject)?.value(forKey: "name") as? String, "Alice")
            XCTAssertEqual((max.value(forKey: "walks") as? [ManagedObject])?.count, 1)
        }
        // Without automatic merging the child keeps the temporary ID of its Max (as Core Data does) and still
        // reaches it through the parent.
        try child.performAndWait {
            let max = try XCTUnwrap(child.registeredObjects.first { $0.objectID.isTemporaryID && $0.entity.name == "Dog" })
            try max.setValue("Maximus", forKey: "name")
            try child.save()
        }
        try root.performAndWait {
            XCTAssertEqual(root.updatedObjects.map { $0.value(forKey: "name") as? String }, ["Maximus"])
            XCTAssertFalse(root.updatedObjects[0].objectID.isTemporaryID)
            try root.save()
        }
        XCTAssertEqual(try dogs(ManagedObjectContext(.privateQueue, coordinator: coordinator)), ["Fido", "Maximus", "Rex II"])
    }

    func testGrandchildReadsAndSavesThroughTheChain() throws {
        let dir = TemporaryDirectory()
        let (coordinator, root) = try savedKennel(dir)
        let child = ManagedObjectContext(.privateQueue, parent: root)
        let grandchild = ManagedObjectContext(.privateQueue, parent: child)
        try root.performAndWait { try dog("Fido", in: root).setValue("Fido (root)", forKey: "name") }
        try child.performAndWait {
            try dog("Rex", in: child).setValue("Rex (child)", forKey: "name")
            let max = try child.insertNewObject(forEntityName: "Dog")
            try max.setValue("Max (child)", forKey: "name")
        }
        XCTAssertEqual(try dogs(grandchild), ["Bello", "Fido (root)", "Max (child)", "Rex (child)"])
        try grandchild.performAndWait {
            try dog("Max (child)", in: grandchild).setValue("Max (grandchild)", forKey: "name")
            grandchild.delete(try dog("Bello", in: grandchild))
            try grandchild.save()
        }
        XCTAssertEqual(try dogs(child), ["Fido (root)", "Max (grandchild)", "Rex (child)"])
        XCTAssertEqual(try dogs(root), ["Bello", "Fido (root)", "Rex"])
        try child.performAndWait { try child.save() }
        try root.performAndWait { try root.save() }
        XCTAssertEqual(try dogs(ManagedObjectContext(.privateQueue, coordinator: coordinator)), ["Fido (root)", "Max (grandchild)", "Rex (child)"])
    }

    func testRelationshipMoveInAChildIsSavedWhole() throws {
        let dir = TemporaryDirectory()
        let (coordinator, root) = try savedKennel(dir)
        let child = ManagedObjectContext(.privateQueue, parent: root)
        try child.performAndWait {
            let rex = try dog("Rex", in: child), fido = try dog("Fido", in: child)
            let tag = try child.insertNewObject(forEntityName: "Tag")
            try tag.setValue("good", forKey: "label")
            try tag.setValue([rex, fido], forKey: "dogs")
            let carol = try child.insertNewObject(forEntityName: "Person")
            try carol.setValue("Carol", forKey: "name")
            try rex.setValue(carol, forKey: "owner")   // Alice loses Rex
            try child.save()
        }
        try root.performAndWait { try root.save() }
        let fresh = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try fresh.performAndWait {
            let people = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Person", sortDescriptors: [FetchSortDescriptor(keyPath: "name")]))
            XCTAssertEqual(people.map { ($0.value(forKey: "dogs") as? [ManagedObject])?.count }, [0, 1])
            let tag = try XCTUnwrap(try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Tag")).first)
            XCTAssertEqual((tag.value(forKey: "dogs") as? [ManagedObject])?.compactMap { $0.value(forKey: "name") as? String }.sorted(), ["Fido", "Rex"])
        }
    }

    func testAutomaticMergesFromTheParentAndTheCoordinator() throws {
        let dir = TemporaryDirectory()
        let (coordinator, root) = try savedKennel(dir)
        let viewer = ManagedObjectContext(.privateQueue, parent: root)
        viewer.automaticallyMergesChangesFromParent = true
        let editor = ManagedObjectContext(.privateQueue, parent: root)
        let rex = try dog("Rex", in: viewer)
        XCTAssertEqual(viewer.performAndWait { rex.value(forKey: "name") as? String }, "Rex")

        // A sibling's save into the parent reaches the viewer.
        try editor.performAndWait {
            try dog("Rex", in: editor).setValue("Rex II", forKey: "name")
            try editor.save()
        }
        viewer.performAndWait {}   // the merge was queued on the viewer's queue
        XCTAssertEqual(viewer.performAndWait { rex.value(forKey: "name") as? String }, "Rex II")

        // The viewer's own insert gets its permanent ID when the root saves.
        let max = try viewer.performAndWait { () throws -> ManagedObject in
            let max = try viewer.insertNewObject(forEntityName: "Dog")
            try max.setValue("Max", forKey: "name")
            try viewer.save()
            return max
        }
        XCTAssertTrue(viewer.performAndWait { max.objectID.isTemporaryID })
        try root.performAndWait { try root.save() }
        viewer.performAndWait {}
        try viewer.performAndWait {
            XCTAssertFalse(max.objectID.isTemporaryID, "adopted the permanent ID")
            XCTAssertTrue(try dog("Max", in: viewer) === max, "a fetch finds the same object")
        }

        // Root contexts on one coordinator: another root's save is merged.
        let main = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        main.automaticallyMergesChangesFromParent = true
        let mainFido = try dog("Fido", in: main)
        XCTAssertEqual(main.performAndWait { mainFido.value(forKey: "name") as? String }, "Fido")
        let background = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try background.performAndWait {
            try dog("Fido", in: background).setValue("Fido II", forKey: "name")
            background.delete(try dog("Bello", in: background))
            try background.save()
        }
        main.performAndWait {}
        XCTAssertEqual(main.performAndWait { mainFido.value(forKey: "name") as? String }, "Fido II")
        XCTAssertEqual(try dogs(main), ["Fido II", "Max", "Rex II"])
        main.automaticallyMergesChangesFromParent = false
        try background.performAndWait {
            try dog("Fido II", in: background).setValue("Fido III", forKey: "name")
            try background.save()
        }
        main.performAndWait {}
        XCTAssertEqual(main.performAndWait { mainFido.value(forKey: "name") as? String }, "Fido II", "no longer merging")
    }

    func testChildSaveIsTracedAsASaveIntoItsParent() throws {
        let dir = TemporaryDirectory()
        let recorder = InMemoryProbeRecorder()
        let lines = LineCollector()
        let probes = Probes(configuration: ProbeConfiguration(), recorders: [recorder, SQLDebugLogger(level: 1) { lines.append($0) }])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: probes)
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let root = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try root.performAndWait {
            let dog = try root.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Rex", forKey: "name")
            try root.save()
        }
        recorder.removeAll()
        lines.removeAll()
        let child = ManagedObjectContext(.privateQueue, parent: root)
        try child.performAndWait {
            try dog("Rex", in: child).setValue("Rex II", forKey: "name")
            try child.save()
        }
        let saves = recorder.events.compactMap { event -> SaveEvent? in if case .save(let e) = event { return e }; return nil }
        XCTAssertEqual(saves.count, 1)
        XCTAssertEqual(saves[0].parent, root.serialNumber)
        XCTAssertEqual(saves[0].context, child.serialNumber)
        XCTAssertEqual(saves[0].statements, 0)
        XCTAssertEqual(saves[0].updated, ["Dog": 1])
        let saveLine = try XCTUnwrap(lines.lines.first { $0.contains("save execution time") })
        XCTAssertTrue(saveLine.hasSuffix("for 0 inserted, 1 updated, 0 deleted objects. (into parent context \(root.serialNumber))"), saveLine)
    }
}

extension NestedContextTests {
    /// With probes on, a child's fault waits for its parent's queue; the probe site must not hold the coordinator's
    /// lock meanwhile, or a parent busy in a fetch (which needs the lock) and the child wait for each other forever.
    func testATracedChildFaultDoesNotDeadlockWithItsBusyParent() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        do {
            let (_, writer) = try makeStack(model, in: dir)
            try writer.performAndWait {
                try writer.insertNewObject(forEntityName: "Dog").setValue("Rex", forKey: "name")
                try writer.save()
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(), recorders: [InMemoryProbeRecorder()]))
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let parent = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let child = ManagedObjectContext(.privateQueue, parent: parent)
        let id = try parent.performAndWait { try parent.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))[0].objectID }
        let parentBusy = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        parent.perform {
            parentBusy.signal()
            release.wait()
            _ = try? parent.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
        }
        parentBusy.wait()
        let done = expectation(description: "the child's fault fired")
        DispatchQueue.global().async {
            child.performAndWait { XCTAssertEqual(child.object(with: id).value(forKey: "name") as? String, "Rex") }
            done.fulfill()
        }
        // Let the child reach its parent's queue, then let the parent fetch.
        Thread.sleep(forTimeInterval: 0.1)
        release.signal()
        wait(for: [done], timeout: 20)
    }
}
