/// An object's state handed between a parent context and its child: its values with relationships as
/// (entity, key) references, so that no object crosses from one context to another.
///
/// Built on the owning context's queue; the references are resolved to the receiver's own objects on its queue.
struct ObjectState: @unchecked Sendable {
    typealias Reference = (entity: EntityDescription, key: Int64)

    let entity: EntityDescription
    let key: Int64
    /// The permanent key an unsaved object was given early (`obtainPermanentIDs(for:)`), else 0.
    let obtainedKey: Int64
    let version: Int64
    /// The values, with `.object` and `.many` slots set to `.null` (see `toOne` and `toMany`).
    var values: SlotRow
    var toOne: [(slot: Int, destination: Reference)] = []
    var toMany: [(slot: Int, members: [Reference])] = []
    var transientObjects: [Int: Any]

    /// The state of `object` (not a fault). An inserted object's unloaded to-many is empty, said so explicitly.
    init(of object: ManagedObject) {
        entity = object.entity
        key = object.key
        obtainedKey = object.key < 0 && object.flags.contains(.keyObtained) ? object.pendingKey : 0
        version = object.version
        values = object.sharedValues
        // Fetched properties' cached values (negative slots) hold the owner context's objects: they stay behind.
        transientObjects = object.transientObjects.filter { $0.key >= 0 }
        for relationship in object.entity.relationships where relationship.index < values.count {
            switch values[relationship.index] {
            case .object(let destination):
                toOne.append((relationship.index, (destination.entity, destination.key)))
                values[relationship.index] = .null
            case .many(let storage):
                toMany.append((relationship.index, storage.objects.lazy.filter { !$0.isDeleted }.map { ($0.entity, $0.key) }))
                values[relationship.index] = .null
            case .null where relationship.isToMany && object.isInserted:
                toMany.append((relationship.index, []))
            default:
                break
            }
        }
    }

    /// The values with references resolved to objects of `context` (faults where not registered there).
    func values(in context: ManagedObjectContext) -> SlotRow {
        var resolved = values
        for (slot, destination) in toOne {
            resolved[slot] = .object(context.faultingObject(entity: destination.entity, key: destination.key))
        }
        for (slot, members) in toMany {
            resolved[slot] = .many(ToManyStorage(objects: members.map { context.faultingObject(entity: $0.entity, key: $0.key) }))
        }
        return resolved
    }

    /// The value of one relationship slot resolved in `context`, or nil when the state holds a plain value there.
    func relationshipValue(at slot: Int, in context: ManagedObjectContext) -> [ManagedObject]? {
        if let members = toMany.first(where: { $0.slot == slot })?.members {
            return members.map { context.faultingObject(entity: $0.entity, key: $0.key) }
        }
        if let destination = toOne.first(where: { $0.slot == slot })?.destination {
            return [context.faultingObject(entity: destination.entity, key: destination.key)]
        }
        return nil
    }
}
