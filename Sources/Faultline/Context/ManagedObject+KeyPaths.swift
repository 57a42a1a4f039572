import Foundation

/// Key-value coding through relationships (`value(forKeyPath:)`, `setValue(_:forKeyPath:)`), as Core Data's objects
/// answer it.
extension ManagedObject {
    /// The value at a dotted key path: `"department.name"` follows the to-one `department`; through a to-many the
    /// value is an array with one value per member (a Swift array where Core Data gives a set). Nil when a step is
    /// nil or names no property.
    public func value(forKeyPath keyPath: String) -> Any? {
        var current: [Any] = [self]
        var throughToMany = false
        for key in keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            var next: [Any] = []
            for item in current {
                guard let object = item as? ManagedObject else { continue }
                let found: Any?
                if let property = object.entity.property(named: key) {
                    found = object.value(for: property)
                } else if let fetched = object.entity.fetchedProperty(named: key) {
                    found = object.fetchedValue(for: fetched)
                } else {
                    found = nil
                }
                guard let value = found else { continue }
                if let members = value as? [ManagedObject] {
                    throughToMany = true
                    next.append(contentsOf: members as [Any])
                } else {
                    next.append(value)
                }
            }
            current = next
        }
        return throughToMany ? current : current.first
    }

    /// Sets the value at a dotted key path: every step but the last must lead to an object through a to-one.
    public func setValue(_ value: Any?, forKeyPath keyPath: String) throws {
        let keys = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var object: ManagedObject = self
        for key in keys.dropLast() {
            guard let next = object.entity.property(named: key).flatMap(object.value(for:)) as? ManagedObject else {
                throw ManagedObjectError.invalidValue(entity: object.entity.name, key: keyPath, problem: "'\(key)' leads to no object (each step but the last must be a to-one holding one)")
            }
            object = next
        }
        try object.setValue(value, forKey: keys.last ?? keyPath)
    }
}

extension EntityDescription {
    /// Core Data's `NSEntityDescription.insertNewObject(forEntityName:into:)`: a new object of the entity named
    /// `name`, inserted into `context`. Traps when the model has no such entity or it is abstract, as Core Data
    /// does; `context.insertNewObject(forEntityName:)` throws instead.
    public static func insertNewObject(forEntityName name: String, into context: ManagedObjectContext) -> ManagedObject {
        do {
            return try context.insertNewObject(forEntityName: name)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Core Data's `NSEntityDescription.entity(forEntityName:in:)`: the entity named `name` in `context`'s model, or
    /// nil.
    public static func entity(forEntityName name: String, in context: ManagedObjectContext) -> EntityDescription? {
        context.model.entity(named: name)
    }
}
