/// Fulfilling many faults with one statement: batched fetch results and explicit batch faulting.
extension ManagedObjectContext {
    /// A batched fetch result: touching one fault fulfils the faults of its whole batch.
    final class FaultBatch {
        let objects: [ManagedObject]
        let size: Int

        init(objects: [ManagedObject], size: Int) {
            self.objects = objects
            self.size = size
        }
    }

    func registerBatches(_ objects: [ManagedObject], size: Int) {
        let batch = FaultBatch(objects: objects, size: size)
        for (i, object) in objects.enumerated() where object.isFault {
            batchMembership[ObjectIdentifier(object)] = (batch, i)
        }
    }

    /// Fulfils the batch `object` belongs to, if any (called when one of its faults fires).
    func fulfillBatch(containing object: ManagedObject) -> Bool {
        guard let (batch, index) = batchMembership[ObjectIdentifier(object)] else { return false }
        let start = index - index % batch.size
        let members = Array(batch.objects[start..<min(start + batch.size, batch.objects.count)])
        for member in members { batchMembership[ObjectIdentifier(member)] = nil }
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
