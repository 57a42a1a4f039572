/// Delete rules: Nullify and Cascade at the end of the event in which the object was deleted (or at the save, see
/// `propagatesDeletesAtEndOfEvent`), Deny when saving.
extension ManagedObjectContext {
    /// Applies the delete rules of objects deleted since the last time, and of the objects their cascades delete.
    func propagatePendingDeletes() {
        while !pendingDeletePropagation.isEmpty {
            let deleted = pendingDeletePropagation
            pendingDeletePropagation = []
            // An object undeleted since (undo, refresh) or gone from the context (a merge) has no rules to apply.
            for object in deleted where object.isDeleted && object.managedObjectContext === self { propagateDelete(of: object) }
        }
    }

    func propagateDelete(of object: ManagedObject) {
        for relationship in object.entity.relationships {
            switch relationship.deleteRule {
            case .noAction, .deny:
                continue
            case .nullify:
                guard let inverse = relationship.inverse else { continue }
                for destination in destinations(of: object, through: relationship) {
                    destination.removeInverse(inverse, pointingAt: object)
                }
            case .cascade:
                let targets = destinations(of: object, through: relationship)
                if let inverse = relationship.inverse {
                    for destination in targets { destination.removeInverse(inverse, pointingAt: object) }
                }
                for destination in targets where !destination.isDeleted { delete(destination) }
            }
        }
    }

    func destinations(of object: ManagedObject, through relationship: RelationshipDescription) -> [ManagedObject] {
        if relationship.isToMany { return object.objects(for: relationship) }
        return object.destination(of: relationship).map { [$0] } ?? []
    }

    /// Deny rules: a deleted object must not keep live destinations through a Deny relationship.
    func checkDenyRules() throws {
        for object in deletedSet.values {
            for relationship in object.entity.relationships where relationship.deleteRule == .deny {
                let live = destinations(of: object, through: relationship).filter { !$0.isDeleted }
                if !live.isEmpty {
                    throw SaveError.deleteDenied(object: object.objectID, relationship: relationship.name, destinations: live.count)
                }
            }
        }
    }
}
