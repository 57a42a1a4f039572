/// Fulfilling many faults with one statement: batched fetch results and explicit batch faulting.
extension ManagedObjectContext {
    /// A batched fetch result: touching one fault fulfils the faults of its whole batch.
    ///
    /// It does not keep its members alive (the program's result array does; each member keeps its batch): a member
    /// that is fulfilled, forgotten or leaves memory clears its position, so the members still there are the ones
    /// left to fulfil. Each member knows its batch and position (`ManagedObject.batch`, `batchIndex`): no table of
    /// members, which cost a fetch of 200,000 rows 14 MB and every release a lookup.
    final class FaultBatch {
        /// The members by position; nil once a member has left.
        var members: [Unmanaged<ManagedObject>?]
        let size: Int

        init(objects: [ManagedObject], size: Int) {
            self.members = objects.map { Unmanaged.passUnretained($0) }
            self.size = size
        }
    }

    /// Makes the faults among `objects` a batched result of batches of `size`.
    func registerBatches(_ objects: [ManagedObject], size: Int) {
        let batch = FaultBatch(objects: objects, size: size)
        for (i, object) in objects.enumerated() {
            guard object.isFault, let index = UInt32(exactly: i) else {
                batch.members[i] = nil
                continue
            }
            if object.flags.contains(.batched) { leaveBatch(object) }
            object.batch = batch
            object.batchIndex = index
            object.flags.insert(.batched)
        }
    }

    /// Takes `object` out of its batch (fulfilled, forgotten, or leaving memory).
    func leaveBatch(_ object: ManagedObject) {
        if let batch = object.batch { batch.members[Int(object.batchIndex)] = nil }
        object.batch = nil
        object.flags.remove(.batched)
    }

    /// Fulfils the batch `object` belongs to, if any (called when one of its faults fires).
    func fulfillBatch(containing object: ManagedObject) -> Bool {
        guard object.flags.contains(.batched), let batch = object.batch else { return false }
        let index = Int(object.batchIndex)
        let start = index - index % batch.size
        var members: [ManagedObject] = []
        for position in start..<min(start + batch.size, batch.members.count) {
            // A member still at its position is alive: one that left memory cleared it on its way out.
            if let reference = batch.members[position] { members.append(reference.takeUnretainedValue()) }
        }
        for member in members { leaveBatch(member) }
        try? fulfillFaults(for: members)
        return !object.isFault
    }

    /// Fulfils every fault among `objects` with one statement per table (per 500 objects): Core Data's batch
    /// faulting (`self IN %@` with `returnsObjectsAsFaults = false`).
    public func fulfillFaults(for objects: [ManagedObject], file: StaticString = #fileID, line: UInt = #line) throws {
        var byRoot: [Int: [ManagedObject]] = [:]
        for object in objects where object.isFault && object.key > 0 && object.managedObjectContext === self {
            byRoot[object.entity.root.entityNumber, default: []].append(object)
        }
        for (_, group) in byRoot.sorted(by: { $0.key < $1.key }) {
            let request = FetchRequest<ManagedObject>(entityName: group[0].entity.root.name)
            request.objectIDs = group.map(\.objectID)
            request.returnsObjectsAsFaults = false
            request.includesPendingChanges = false
            _ = try fetch(request, file: file, line: line)
        }
    }
}
