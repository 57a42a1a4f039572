import Foundation

/// Core Data's `NSFetchedPropertyDescription`: a weak, one-way "relationship" computed by a fetch — an array of the
/// destination entity's objects that match a predicate, ordered by the request's sort descriptors. In the predicate,
/// `$FETCH_SOURCE` is the object whose property is read and `$FETCHED_PROPERTY` this description (its `userInfo`
/// reachable as `$FETCHED_PROPERTY.userInfo.key`). The value is evaluated when first read and kept until the object is
/// refreshed; it has no column, no inverse, and takes no part in version hashes, as in Core Data.
public final class FetchedPropertyDescription: @unchecked Sendable, CustomStringConvertible {
    /// The property's name.
    public let name: String
    /// The entity whose objects the fetch returns.
    public let destinationEntityName: String
    /// The predicate (with `$FETCH_SOURCE` and `$FETCHED_PROPERTY` unbound), nil for every object of the entity.
    public let predicate: ObjectPredicate?
    /// The order of the value (nil or empty: the store's order).
    public let sortDescriptors: [FetchSortDescriptor]
    /// As Core Data's: a fetched property is always read as optional.
    public var isOptional: Bool
    /// At most this many objects (0: no limit), the request's `fetchLimit`.
    public var fetchLimit = 0
    /// The model's user info for the property.
    public var userInfo: [String: String]
    /// The entity that declares it (set when the model is built).
    public internal(set) unowned(unsafe) var entity: EntityDescription!
    /// The destination entity (set when the model is built).
    public internal(set) unowned(unsafe) var destination: EntityDescription!
    /// Its position among the entity's fetched properties (its cache slot in each object).
    var index = 0

    /// A fetched property named `name`: the objects of `destinationEntityName` matching `predicate`, in the order of
    /// `sortDescriptors`.
    public init(name: String, destinationEntityName: String, predicate: ObjectPredicate? = nil,
                sortDescriptors: [FetchSortDescriptor] = [], isOptional: Bool = true, userInfo: [String: String] = [:]) {
        self.name = name
        self.destinationEntityName = destinationEntityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.isOptional = isOptional
        self.userInfo = userInfo
    }

    /// The fetch request it runs, before `$FETCH_SOURCE` and `$FETCHED_PROPERTY` are substituted (Core Data's
    /// `fetchRequest`).
    public var fetchRequest: FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: destinationEntityName, predicate: predicate, sortDescriptors: sortDescriptors)
        request.fetchLimit = fetchLimit
        return request
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        "\(name): fetched \(destinationEntityName)" + (predicate.map { " where \($0.predicateFormat)" } ?? "")
    }

    /// The predicate for `source`: `$FETCH_SOURCE.path` replaced by the source's value at `path` (`$FETCH_SOURCE`
    /// alone by the object), `$FETCHED_PROPERTY.userInfo.key` by the user info's value.
    func predicate(for source: ManagedObject) -> ObjectPredicate? {
        guard let predicate else { return nil }
        let userInfo = userInfo, name = name
        let substitution = PredicateSubstitution(values: [:], resolve: { variable, components in
            switch variable {
            case "FETCH_SOURCE":
                let value: Any? = components.isEmpty ? source : source.value(forKeyPath: components.joined(separator: "."))
                return .constant(PredicateValue(value) ?? .null)
            case "FETCHED_PROPERTY":
                if components.isEmpty { return .constant(.string(name)) }
                guard components.count == 2, components[0] == "userInfo" else { return nil }
                return .constant(userInfo[components[1]].map(PredicateValue.string) ?? .null)
            default:
                return nil
            }
        })
        return substitution.predicate(predicate)
    }
}
