import Foundation

extension ManagedObject {
    /// Core Data's `validateValue(_:forKey:)`: checks `value` for `key` against the model's rules (type, required,
    /// bounds, length, pattern; a to-one's destination) and gives it back coerced to the attribute's type (an `Int`
    /// for an Integer 16 attribute comes back an `Int16`). Throws `ManagedObjectError` for an unknown key or a value
    /// of the wrong kind, `SaveError.validation` for a broken rule. The value is not set. (Core Data passes an
    /// Objective-C pointer, which Swift on Linux lacks: the value is `inout` instead.)
    public func validateValue(_ value: inout Any?, forKey key: String) throws {
        guard let property = entity.property(named: key) else {
            throw ManagedObjectError.unknownKey(entity: entity.name, key: key)
        }
        var failures: [ValidationFailure] = []
        let id = objectID
        func fail(_ key: String, _ shown: String, _ rule: String) {
            failures.append(ValidationFailure(object: id, key: key, value: shown, rule: rule))
        }
        if let attribute = property as? AttributeDescription {
            let slot: Slot
            do {
                slot = try ValueCoding.slot(for: value, attribute: attribute)
            } catch let error as ValueError {
                throw ManagedObjectError.invalidValue(entity: entity.name, key: key, problem: error.problem)
            }
            ManagedObjectContext.checkRules(of: attribute, slot, isNil: slot.isNull, fail)
            if failures.isEmpty && !attribute.isTransient {
                value = ValueCoding.value(of: slot, type: attribute.type, transformer: attribute.valueTransformerName)
            }
        } else if let relationship = property as? RelationshipDescription {
            let unwrapped = ValueCoding.unwrap(value)
            if relationship.isToMany {
                let count = (unwrapped as? [ManagedObject])?.count ?? (unwrapped as? Set<ManagedObject>)?.count ?? (unwrapped == nil ? 0 : -1)
                guard count >= 0 else {
                    throw ManagedObjectError.invalidValue(entity: entity.name, key: key, problem: "expected an array or set of objects, got \(type(of: unwrapped!))")
                }
                ManagedObjectContext.checkCount(of: relationship, count, fail)
            } else if let object = unwrapped {
                guard let destination = object as? ManagedObject, let expected = relationship.destination,
                      destination.entity.isKind(of: expected) || destination.entity.name == expected.name else {
                    throw ManagedObjectError.invalidValue(entity: entity.name, key: key, problem: "expected an object of \(relationship.destination?.name ?? "?"), got \(type(of: object))")
                }
            } else if !relationship.isOptional {
                fail(key, "nil", "required (not optional)")
            }
        }
        if !failures.isEmpty { throw SaveError.validation(failures) }
    }

    /// Core Data's `committedValues(forKeys:)`: the values as of the last fetch or save, for `keys` (nil: every
    /// property); a nil value is `NSNull`, as in Core Data. Empty for an inserted object.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        guard !isInserted else { return [:] }
        var result: [String: Any] = [:]
        for name in keys ?? entity.properties.map(\.name) where entity.property(named: name) != nil {
            result[name] = committedValue(forKey: name) ?? NSNull()
        }
        return result
    }

    /// Core Data's `hasPersistentChangedValues`: true when a property the store keeps (not a transient one) has
    /// changed since the last fetch or save.
    public var hasPersistentChangedValues: Bool {
        entity.properties.contains { !$0.isTransient && (changes.contains($0.index) || isToManyChanged($0)) }
    }
}
