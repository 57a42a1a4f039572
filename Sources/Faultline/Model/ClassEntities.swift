import Synchronization

/// Which entity each `ManagedObject` subclass stands for, in the models made so far (Core Data's
/// `NSManagedObject.entity()` finds it the same way: from the models loaded). The latest model to name a class wins;
/// entities are held weakly, so a model going away takes its entries with it.
enum ClassEntities {
    private struct Entry {
        weak var entity: EntityDescription?
    }

    private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    static func note(_ entity: EntityDescription, for type: ManagedObject.Type) {
        entries.withLock { $0[ObjectIdentifier(type)] = Entry(entity: entity) }
    }

    static func entity(for type: ManagedObject.Type) -> EntityDescription? {
        entries.withLock { $0[ObjectIdentifier(type)]?.entity }
    }
}

extension ManagedObject {
    /// The entity this class stands for in the models loaded (Core Data's `entity()`): the one whose
    /// `representedClassName` names it, or that it was registered for. Traps when no model names the class, as Core
    /// Data's is nil there and fails on use; `EntityDescription.entity(forEntityName:in:)` answers without trapping.
    public class func entity() -> EntityDescription {
        guard let entity = ClassEntities.entity(for: self) else {
            preconditionFailure("no model loaded names the class \(self) (its entity's representedClassName, or register(_:forEntityName:))")
        }
        return entity
    }
}
