/// Fulfilling many faults with one statement: batched fetch results and explicit batch faulting.
extension ManagedObjectContext {
    /// A batched fetch result: touching one fault fulfils the faults of its whole batch.
    ///
    /// It does not keep its objects alive (the program's result array does): an object leaving memory takes itself
    /// out of `batchMembership`, so the members still there are the ones left to fulfil.
    final class FaultBatch {
        let objects: [Unmanaged<ManagedObject>]
        let size: Int

        init(objects: [ManagedObject], size: Int) {
            self.objects = objects.map { Unmanaged.passUnretained($0) }
            self.size = size
        }
    }

    func registerBatches(_ objects: [ManagedObject], size: Int) {
        let batch = FaultBatch(objects: objects, size: size)
        for (i, object) in objects.enumerated() where object.isFault {
            batchMembership[object.address] = (batch, i)
            object.flags.insert(.batched)
        }
    }

    /// Takes `object` out of its batch (fulfilled, forgotten, or leaving memory).
    func leaveBatch(_ object: ManagedObject) {
        batchMembership[object.address] = nil
        object.flags.remove(.batched)
    }

    /// Fulfils the batch `object` belongs to, if any (called when one of its faults fires).
    func fulfillBatch(containing object: ManagedObject) -> Bool {
        guard let (batch, index) = batchMembership[object.address] else { return false }
        let start = index - index % batch.size
        var members: [ManagedObject] = []
        for position in start..<min(start + batch.size, batch.objects.count) {
            // Only a member still in `batchMembership` at its own position is alive: one that left memory took
            // itself out, and a new object at its address would not be registered under this batch and position.
            let reference = batch.objects[position]
            guard let (owner, at) = batchMembership[reference.toOpaque()], owner === batch, at == position else { continue }
            members.append(reference.takeUnretainedValue())
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
            var request = FetchRequest<ManagedObject>(entityName: group[0].entity.root.name)
            request.objectIDs = group.map(\.objectID)
            request.returnsObjectsAsFaults = false
            request.includesPendingChanges = false
            _ = try fetch(request, file: file, line: line)
        }
    }
}
