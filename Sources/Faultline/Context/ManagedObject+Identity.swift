/// Core Data's `isEqual:` and `hash` on a managed object: identity. Objects go into sets and dictionaries as they
/// are, faults included — neither fires a fault (Apple's guide, "Faulting and Uniquing": the methods that do not fire
/// faults), and a context's uniquing makes one object per row, so identity is the row's.
extension ManagedObject: Hashable {
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
