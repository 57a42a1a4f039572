/// The live contents of a fired to-many relationship.
@usableFromInline
final class ToManyStorage {
    /// Members, in order for ordered relationships (insertion order for unordered ones).
    private(set) var objects: [ManagedObject]
    private var members: Set<ObjectIdentifier>
    /// Members as of the last load or save, for join-table diffs.
    private(set) var original: [ManagedObject]
    /// True when the members or their order changed since the last save or load.
    private(set) var changed = false

    init(objects: [ManagedObject]) {
        self.objects = objects
        self.original = objects
        self.members = Set(objects.lazy.map(ObjectIdentifier.init))
    }

    /// Members that differ from the stored ones (`original`): changed unless they are the same.
    init(objects: [ManagedObject], original: [ManagedObject]) {
        self.objects = objects
        self.original = original
        self.members = Set(objects.lazy.map(ObjectIdentifier.init))
        self.changed = objects.count != original.count || !zip(objects, original).allSatisfy { $0 === $1 }
    }

    var count: Int { objects.count }

    func contains(_ object: ManagedObject) -> Bool {
        members.contains(ObjectIdentifier(object))
    }

    /// Adds `object` at `index` (the end when nil); false when it was already a member.
    @discardableResult
    func insert(_ object: ManagedObject, at index: Int? = nil) -> Bool {
        guard members.insert(ObjectIdentifier(object)).inserted else { return false }
        if let index { objects.insert(object, at: Swift.min(Swift.max(index, 0), objects.count)) } else { objects.append(object) }
        changed = true
        return true
    }

    @discardableResult
    func remove(_ object: ManagedObject) -> Bool {
        guard members.remove(ObjectIdentifier(object)) != nil else { return false }
        if let i = objects.lastIndex(where: { $0 === object }) { objects.remove(at: i) }
        changed = true
        return true
    }

    /// Makes `objects` the members (an undo), keeping `original`.
    func replaceMembers(_ objects: [ManagedObject]) {
        self.objects = objects
        members = Set(objects.lazy.map(ObjectIdentifier.init))
        changed = objects.count != original.count || !zip(objects, original).allSatisfy { $0 === $1 }
    }

    func markSaved() {
        original = objects
        changed = false
    }

    func revert() {
        objects = original
        members = Set(objects.lazy.map(ObjectIdentifier.init))
        changed = false
    }
}
