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
            let entities = context.model.entities.filter { !$0.isAbstract }
            let each = max(1, limit / max(1, entities.count))
            for entity in entities {
                var request = FetchRequest<ManagedObject>(entityName: entity.name)
                request.includesSubentities = false
                request.fetchLimit = each
                request.returnsObjectsAsFaults = false
                _ = try context.fetch(request)
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
                        _ = destination.value(forKey: destination.entity.attributes.first?.name ?? "")
                        next.append(destination)
                    }
                }
            }
            frontier = next
        }
    }
}
