/// A context's saved objects by row, held as Core Data holds them: weakly, so that an object the program no longer
/// references goes away (its `deinit` takes it out), unless `retainsObjects` is set.
///
/// Objects with unsaved changes are held strongly elsewhere (the context's inserted, updated and deleted sets), so
/// they stay registered until saved or rolled back whatever this registry does.
///
/// The weak side is an unretained reference cleared by the object's own `deinit`, not a Swift `weak` one: a lookup
/// stays one load from a page, where a weak reference would go through the object's side table on every fault.
final class ObjectRegistry {
    /// The objects' map, held by this registry (released in `deinit`) and used unretained: reached through a
    /// `let`, each per-object call retained and released it.
    private let map = Unmanaged.passRetained(PagedMap<Unmanaged<ManagedObject>>(maxSpares: ObjectRegistry.sparePages))
    /// Emptied pages kept for the next objects, at most (`SparePages`): about 0.3 MB.
    static let sparePages = 512
    @inline(__always) private func objects<R>(_ body: (PagedMap<Unmanaged<ManagedObject>>) -> R) -> R {
        map._withUnsafeGuaranteedRef(body)
    }

    deinit { map.release() }
    /// The strong references of `retainsRegisteredObjects`; nil when the registry holds weakly.
    @exclusivity(unchecked) private var retained: PagedMap<ManagedObject>?

    /// True when every registered object is also held strongly.
    var retainsObjects: Bool {
        get { retained != nil }
        set {
            guard newValue != retainsObjects else { return }
            if newValue {
                let strong = PagedMap<ManagedObject>()
                objects { $0.forEachKeyed { key, object in strong[key] = object.takeUnretainedValue() } }
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
    var count: Int { objects { $0.count } }
    var isEmpty: Bool { objects { $0.isEmpty } }

    /// The object registered for `key`, or nil; assigning nil unregisters it.
    subscript(key: ObjectKey) -> ManagedObject? {
        @inline(__always) get { objects { $0[key]?.takeUnretainedValue() } }
        set {
            objects { $0[key] = newValue.map { Unmanaged.passUnretained($0) } }
            if let retained { retained[key] = newValue }
        }
    }

    /// Unregisters `object` if it is the one registered for `key` (also from its `deinit`: it is never retained
    /// here); false when it was not.
    @discardableResult
    func remove(_ object: ManagedObject, at key: ObjectKey) -> Bool {
        var removed = false
        objects { objects in
            objects.modifyOrRemove(key) { registered in
                removed = registered.toOpaque() == object.address
                return removed
            }
        }
        if removed, let retained { retained[key] = nil }
        return removed
    }

    /// Every registered object, held strongly by the array (iterate this rather than the pages, which an object's
    /// `deinit` may change).
    var values: [ManagedObject] {
        var result: [ManagedObject] = []
        objects { objects in
            result.reserveCapacity(objects.count)
            objects.forEach { result.append($0.takeUnretainedValue()) }
        }
        return result
    }

    /// Forgets every object (without releasing any: the caller clears their context first).
    func removeAll() {
        objects { $0.removeAll() }
        retained?.removeAll()
    }
}
