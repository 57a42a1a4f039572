/// The objects one save writes. Built and used on the saving context's queue while the coordinator holds its
/// lock, so the (non-Sendable) objects never cross threads.
extension ManagedObject {
    /// Makes the current values the committed ones after a write; returns them in stored form for the row cache.
    func commitValues() -> SlotRow {
        let stored = SaveChanges.storedForm(of: self)
        if entity.snapshotNeedsStoredForm { committed = stored } else { valuesAreCommitted() }
        return stored
    }
}

struct SaveChanges {
    var inserted: [ManagedObject]
    var updated: [ManagedObject]
    var deleted: [ManagedObject]
    /// Unchanged objects marked by `detectConflicts(for:)`: their rows' versions are checked too.
    var checked: [ManagedObject] = []
    /// For persistent history: the context's `transactionAuthor` and `name`.
    var author: String? = nil
    var contextName: String? = nil

    /// An object's values as a row-cache snapshot holds them: to-ones as stored keys, to-many and transient
    /// slots empty (transient attributes at their defaults). Shares the live array when nothing differs.
    static func storedForm(of object: ManagedObject) -> SlotRow {
        storedForm(object.sharedValues, entity: object.entity)
    }

    /// `values` of an object of `entity` in stored form (see `storedForm(of:)`).
    static func storedForm(_ values: SlotRow, entity: EntityDescription) -> SlotRow {
        guard entity.snapshotNeedsStoredForm else { return values }
        var values = values
        for (i, property) in entity.properties.enumerated() where i < values.count {
            if let relationship = property as? RelationshipDescription {
                if relationship.isToMany || relationship.isTransient { values[i] = .null; continue }
                if case .object(let destination) = values[i] {
                    let key = destination.primaryKeyForStorage ?? 0
                    values[i] = .integer(ToOneReference.pack(key: key, entityNumber: relationship.entityColumnName == nil ? nil : Int64(destination.entity.entityNumber)))
                }
            } else if let attribute = property as? AttributeDescription, attribute.isTransient {
                values[i] = attribute.defaultSlot
            }
        }
        return values
    }

    /// The probe event for a save of these changes (object counts by entity).
    func event(statements: Int, duration: Double, conflicts: Int = 0, error: String? = nil, callSite: CallSite?,
               context: Int, parent: Int? = nil) -> SaveEvent {
        func counts(_ objects: [ManagedObject]) -> [String: Int] {
            objects.reduce(into: [:]) { $0[$1.entity.name, default: 0] += 1 }
        }
        var event = SaveEvent(inserted: counts(inserted), updated: counts(updated), deleted: counts(deleted), statements: statements,
                              duration: duration, conflicts: conflicts, error: error, callSite: callSite, context: context, parent: parent)
        for object in [inserted, updated].joined() {
            for i in 0..<object.values.count {
                switch object.values[i] {
                case .text(let text): event.bytes += text.utf8.count
                case .blob(let data): event.bytes += data.count
                case .integer, .real, .object: event.bytes += 8
                case .null, .many: break
                }
            }
        }
        return event
    }
}
