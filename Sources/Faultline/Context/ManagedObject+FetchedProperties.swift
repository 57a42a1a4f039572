/// Fetched properties' values: evaluated when first read, kept until the object is refreshed (Core Data's FP-05).
extension ManagedObject {
    /// The value of the fetched property `property`: the destination's objects matching its predicate for this
    /// object, in its order. Evaluated by a fetch when first read and kept until the object is refreshed or turns
    /// into a fault, as Core Data's (it does not follow later changes). Empty for an object outside a context, or
    /// when the fetch fails (the context's `lastFetchedPropertyError` says why).
    public func fetchedValue(for property: FetchedPropertyDescription) -> [ManagedObject] {
        let slot = -(property.index + 1)
        if let cached = transientObjects[slot] as? [ManagedObject] { return cached }
        guard let context = managedObjectContext, !flags.contains(.invalidated) else { return [] }
        let request = property.fetchRequest
        request.predicate = property.predicate(for: self)
        let value: [ManagedObject]
        do {
            value = try context.fetch(request)
        } catch {
            context.lastFetchedPropertyError = error
            return []
        }
        transientObjects[slot] = value
        return value
    }

    /// Forgets the fetched properties' values (a refresh): they are fetched again when next read.
    func forgetFetchedValues() {
        guard !entity.fetchedProperties.isEmpty else { return }
        for slot in transientObjects.keys where slot < 0 { transientObjects[slot] = nil }
    }
}
