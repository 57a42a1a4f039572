extension ManagedObject {
    /// The persistent properties changed since the context last sent its objects-did-change notification
    /// (`processPendingChanges()`: the end of a `perform` block, a save, a merge), with their new values — Core
    /// Data's `changedValuesForCurrentEvent()`. Transient properties are not included.
    ///
    /// A context records changes event by event once something asks: an objects-did-change observer, an undo
    /// manager, or the first call of this method. Until then it keeps only the changes since the last save, and
    /// that first call answers with those (docs/contexts.md).
    public func changedValuesForCurrentEvent() -> [String: Any?] {
        guard let context = managedObjectContext, !flags.contains(.invalidated) else { return [:] }
        let mask: ChangeMask?
        let sinceSave = context.changeTracker == nil
        if let tracker = context.changeTracker {
            mask = tracker.eventChanges(of: self)
        } else {
            context.startTrackingChanges()
            mask = changes
        }
        var result: [String: Any?] = [:]
        guard let mask else { return result }
        for property in entity.properties where mask.contains(property.index) || (sinceSave && isToManyChanged(property)) {
            if let attribute = property as? AttributeDescription, attribute.isTransient { continue }
            result[property.name] = value(for: property)
        }
        return result
    }
}
