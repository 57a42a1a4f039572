/// A context's saved objects by row, held as Core Data holds them: weakly, so that an object the program no longer
/// references goes away (its `deinit` takes it out), unless `retainsObjects` is set.
///
/// Objects with unsaved changes are held strongly elsewhere (the context's inserted, updated and deleted sets), so
/// they stay registered until saved or rolled back whatever this registry does.
///
/// The weak side is an unretained reference cleared by the object's own `deinit`, not a Swift `weak` one: a lookup
/// stays one load from a page, where a weak reference would go through the object's side table on every fault.
final class ObjectRegistry {
    private let objects = PagedMap<Unmanaged<ManagedObject>>()
    /// The strong references of `retainsRegisteredObjects`; nil when the registry holds weakly.
    private var retained: PagedMap<ManagedObject>?

    /// True when every registered object is also held strongly.
    var retainsObjects: Bool {
        get { retained != nil }
        set {
            guard newValue != retainsObjects else { return }
            if newValue {
                let strong = PagedMap<ManagedObject>()
                objects.forEachKeyed { key, object in strong[key] = object.takeUnretainedValue() }
                retained = strong
            } else {
                // Released once detached: the objects' deinits then take them out of `objects` (not `retained`).
                guard let strong = retained else { return }
                retained = nil
                withExtendedLifetime(strong) {}
            }
        }
    }

    /// Number of registered objects.
    var count: Int { objects.count }
    var isEmpty: Bool { objects.isEmpty }

    /// The object registered for `key`, or nil; assigning nil unregisters it.
    subscript(key: ObjectKey) -> ManagedObject? {
        @inline(__always) get { objects[key]?.takeUnretainedValue() }
        set {
            objects[key] = newValue.map { Unmanaged.passUnretained($0) }
            if let retained { retained[key] = newValue }
        }
    }

    /// Unregisters `object` if it is the one registered for `key` (also from its `deinit`: it is never retained
    /// here); false when it was not.
    @discardableResult
    func remove(_ object: ManagedObject, at key: ObjectKey) -> Bool {
        var removed = false
        objects.modifyOrRemove(key) { registered in
            removed = registered.toOpaque() == object.address
            return removed
        }
        if removed, let retained { retained[key] = nil }
        return removed
    }

    /// Every registered object, held strongly by the array (iterate this rather than the pages, which an object's
    /// `deinit` may change).
    var values: [ManagedObject] {
        var result: [ManagedObject] = []
        result.reserveCapacity(objects.count)
        objects.forEach { result.append($0.takeUnretainedValue()) }
        return result
    }

    /// Forgets every object (without releasing any: the caller clears their context first).
    func removeAll() {
        objects.removeAll()
        retained?.removeAll()
    }
}
