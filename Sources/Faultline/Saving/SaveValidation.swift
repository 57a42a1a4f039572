import Foundation

/// Property validation at save: required values, numeric and length bounds, patterns, relationship counts.
extension ManagedObjectContext {
    func validateForSave() throws {
        var failures: [ValidationFailure] = []
        let updated = updatedSet.values.sorted { $0.key < $1.key }
        for object in [pendingInsertions, updated].joined() where !object.entity.validatedSlots.isEmpty {
            failures += validate(object)
        }
        if model.hasCustomClasses {
            // Custom rules: every failure of every object, together with the model's.
            func run(_ object: ManagedObject, _ hook: () throws -> Void) {
                do { try hook() } catch let failure as ValidationFailure {
                    failures.append(failure)
                } catch SaveError.validation(let list) {
                    failures += list
                } catch {
                    failures.append(ValidationFailure(object: object.objectID, key: "", value: "", rule: "\(error)"))
                }
            }
            for object in pendingInsertions where object.entity.hasCustomClass { run(object, object.validateForInsert) }
            for object in updated where object.entity.hasCustomClass { run(object, object.validateForUpdate) }
            for object in deletedSet.values.sorted(by: { $0.key < $1.key }) where object.entity.hasCustomClass { run(object, object.validateForDelete) }
        }
        if !failures.isEmpty { throw SaveError.validation(failures) }
    }

    /// Calls `willSave()` on each changed object of a subclass, once per save, including objects the hooks
    /// themselves dirty, for at most `Limits.willSaveRounds` rounds. True when any hook ran.
    func callWillSaveHooks() throws -> Bool {
        guard model.hasCustomClasses else { return false }
        var called: Set<ObjectIdentifier> = []
        for _ in 0..<Limits.willSaveRounds {
            let dirty = (pendingInsertions + Array(updatedSet.values) + Array(deletedSet.values))
                .filter { $0.entity.hasCustomClass && !called.contains(ObjectIdentifier($0)) }
                .sorted { $0.key < $1.key }
            if dirty.isEmpty { return !called.isEmpty }
            for object in dirty {
                called.insert(ObjectIdentifier(object))
                object.willSave()
            }
        }
        let stillDirty = (pendingInsertions + Array(updatedSet.values) + Array(deletedSet.values))
            .contains { $0.entity.hasCustomClass && !called.contains(ObjectIdentifier($0)) }
        if stillDirty { throw SaveError.stillDirty(rounds: Limits.willSaveRounds) }
        return true
    }

    func validate(_ object: ManagedObject) -> [ValidationFailure] {
        var failures: [ValidationFailure] = []
        func fail(_ key: String, _ value: String, _ rule: String) {
            failures.append(ValidationFailure(object: object.objectID, key: key, value: value, rule: rule))
        }
        for slot in object.entity.validatedSlots {
            let property = object.entity.properties[slot]
            if let attribute = property as? AttributeDescription {
                let slot = object.values[attribute.index]
                let isNil = slot.isNull && (!attribute.isTransient || object.transientObjects[attribute.index] == nil)
                Self.checkRules(of: attribute, slot, isNil: isNil, fail)
            } else if let relationship = property as? RelationshipDescription {
                if relationship.isToMany {
                    let count: Int
                    switch object.values[relationship.index] {
                    case .many(let storage): count = storage.objects.filter { !$0.isDeleted }.count
                    case .null where object.isInserted: count = 0
                    default: continue // not loaded, so not changed
                    }
                    Self.checkCount(of: relationship, count, fail)
                } else if !relationship.isOptional && object.values[relationship.index].isNull {
                    fail(relationship.name, "nil", "required (not optional)")
                }
            }
        }
        return failures
    }

    /// An attribute's model rules (required, bounds, length, pattern) on a stored value: `fail(key, value, rule)`
    /// for each broken.
    static func checkRules(of attribute: AttributeDescription, _ slot: Slot, isNil: Bool, _ fail: (String, String, String) -> Void) {
        if isNil {
            // A derived attribute's value is the store's to compute.
            if !attribute.isOptional && attribute.derivationExpression == nil { fail(attribute.name, "nil", "required (not optional)") }
            return
        }
        switch slot {
        case .integer(let n) where attribute.type.isInteger || attribute.type == .double || attribute.type == .float:
            check(Double(n), attribute, fail)
        case .real(let d) where attribute.type != .date || attribute.minValue != nil || attribute.maxValue != nil:
            check(d, attribute, fail)
        case .text(let s) where attribute.type == .string:
            let length = Double(s.count)
            if let min = attribute.minValue, length < min { fail(attribute.name, quoted(s), "shorter than \(Int(min)) characters") }
            if let max = attribute.maxValue, length > max { fail(attribute.name, quoted(s), "longer than \(Int(max)) characters") }
            if let pattern = attribute.regularExpression {
                switch matches(s, pattern) {
                case true?: break
                case false?: fail(attribute.name, quoted(s), "does not match /\(pattern)/")
                case nil: fail(attribute.name, quoted(s), "cannot be checked: the model's pattern /\(pattern)/ is not a valid regular expression")
                }
            }
        default:
            break
        }
    }

    /// A to-many relationship's model rules (required, minimum and maximum count) on `count` members.
    static func checkCount(of relationship: RelationshipDescription, _ count: Int, _ fail: (String, String, String) -> Void) {
        if count == 0 && !relationship.isOptional { fail(relationship.name, "0 objects", "required (not optional)") }
        else if count > 0 && count < relationship.minCount { fail(relationship.name, "\(count) objects", "fewer than \(relationship.minCount)") }
        if relationship.maxCount > 0 && count > relationship.maxCount { fail(relationship.name, "\(count) objects", "more than \(relationship.maxCount)") }
    }

    private static func check(_ value: Double, _ attribute: AttributeDescription, _ fail: (String, String, String) -> Void) {
        let shown = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        if let min = attribute.minValue, value < min { fail(attribute.name, shown, "less than the minimum \(min)") }
        if let max = attribute.maxValue, value > max { fail(attribute.name, shown, "greater than the maximum \(max)") }
    }

    private static func quoted(_ s: String) -> String { "\"\(s.prefix(60))\"" }

    /// Whether the whole of `string` matches `pattern`; nil when the pattern does not compile (a value is never
    /// accepted unchecked).
    private static func matches(_ string: String, _ pattern: String) -> Bool? {
        guard let regex = try? NSRegularExpression(pattern: "^(?:\(pattern))$") else { return nil }
        return regex.firstMatch(in: string, range: NSRange(string.startIndex..., in: string)) != nil
    }
}
