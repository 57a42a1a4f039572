import Faultline

extension ManagedObjectContext {
    /// Fetches the object of `entity` whose primary key is `key` as an app fetching one object by ID does: the ID
    /// parsed from its URI, then a new request (`SELF == %@`) that returns the object materialized. Returns how many
    /// were found (0 or 1). Call it on the context's queue.
    func fetchOne(_ entity: String, key: Int, store: String) throws -> Int {
        guard let id = objectID(forURIString: "x-coredata://\(store)/\(entity)/p\(key)") else { return 0 }
        let request = FetchRequest<ManagedObject>(entityName: entity, predicate: .comparison(Comparison(.evaluatedObject, .equal, .constant(.objectID(id)))))
        request.returnsObjectsAsFaults = false
        return try fetch(request).count
    }
}
