extension ManagedObjectContext {
    /// Gives the unsaved objects among `objects` their permanent IDs now (Core Data's `obtainPermanentIDs(for:)`):
    /// keys from the store's Z_PRIMARYKEY, in a transaction of their own, that the save then uses. The objects
    /// stay inserted until saved; `object(with:)` and `existingObject(with:)` find them here by the new IDs, and
    /// other contexts once they are saved. Objects that already have permanent IDs are ignored.
    ///
    /// Throws, giving no object a key, when an object is not this context's (another context's, or deleted), or
    /// when the store cannot give keys (read-only, an I/O error). Keys given are not given again, even if the
    /// objects are never saved, as in Core Data.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        if checksQueue { checkQueue(touching: nil) }
        var wanted: [ManagedObject] = []
        var seen: Set<ObjectIdentifier> = []
        for object in objects where !object.flags.contains(.keyObtained) && object.key <= 0 {
            guard object.managedObjectContext === self, object.isInserted, !object.isDeleted else {
                throw ManagedObjectError.noPermanentID(entity: object.entity.name, reason: object.isDeleted
                    ? "the object is deleted" : "the object is not an unsaved object of this context (only a context that inserted an object can give it a permanent ID)")
            }
            if seen.insert(ObjectIdentifier(object)).inserted { wanted.append(object) }
        }
        guard !wanted.isEmpty else { return }
        do {
            try coordinator.allocateKeys(for: wanted)
        } catch let error as StoreError {
            throw SaveError.store(error)
        }
        for object in wanted {
            object.flags.insert(.keyObtained)
            obtainedKeys[object.obtainedObjectKey] = object
        }
    }
}
