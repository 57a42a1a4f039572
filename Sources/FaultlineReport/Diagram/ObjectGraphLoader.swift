import Faultline
import Foundation

/// Loads the part of a store an object-graph diagram shows into a context: from a root object out to a depth
/// (breadth first, firing the faults on the way), or the first objects of each entity.
public struct ObjectGraphLoader {
    public let context: ManagedObjectContext
    public let limit: Int

    public init(context: ManagedObjectContext, limit: Int) {
        self.context = context
        self.limit = limit
    }

    /// Call on the context's queue.
    public func load(root: String?, depth: Int) throws {
        guard let root else {
            // Shares of the limit, the share of an entity with fewer objects going to the others.
            var open = context.model.entities.filter { !$0.isAbstract }.map { (entity: $0, loaded: 0) }
            var room = limit
            while room > 0 && !open.isEmpty {
                let each = max(1, room / open.count)
                var next: [(entity: EntityDescription, loaded: Int)] = []
                for (entity, loaded) in open where room > 0 {
                    let request = FetchRequest<ManagedObject>(entityName: entity.name)
                    request.includesSubentities = false
                    request.fetchOffset = loaded
                    request.fetchLimit = min(each, room)
                    request.returnsObjectsAsFaults = false
                    let count = try context.fetch(request).count
                    room -= count
                    if count == request.fetchLimit { next.append((entity, loaded + count)) }
                }
                open = next
            }
            return
        }
        guard let id = context.objectID(forURIString: root) else {
            throw ReportError("'\(root)' is not an object URI of this store (x-coredata://\(context.coordinator.storeIdentifier ?? "STORE")/Entity/p1)")
        }
        var frontier = [try context.existingObject(with: id)]
        var seen: Set<ManagedObjectID> = [id]
        for _ in 0..<depth {
            var next: [ManagedObject] = []
            for object in frontier {
                for relationship in object.entity.relationships where !relationship.isTransient {
                    let destinations = relationship.isToMany ? object.objects(forRelationship: relationship.name)
                        : (object.value(for: relationship) as? ManagedObject).map { [$0] } ?? []
                    for destination in destinations where seen.count < limit && seen.insert(destination.objectID).inserted {
                        _ = destination.entity.attributes.first.map(destination.value(for:))
                        next.append(destination)
                    }
                }
            }
            frontier = next
        }
    }
}
