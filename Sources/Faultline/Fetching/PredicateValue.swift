import Foundation

/// A constant in a predicate: what format arguments and literals become.
public indirect enum PredicateValue: Hashable, Sendable, CustomStringConvertible {
    /// `nil`.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer.
    case integer(Int64)
    /// A floating-point number.
    case double(Double)
    /// A string.
    case string(String)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// An object, by its ID.
    case objectID(ManagedObjectID)
    /// A collection (`IN`, `BETWEEN`, aggregates).
    case array([PredicateValue])

    /// The text `print` and `String(describing:)` show.
    public var description: String { PredicateFormatter.literal(self) }

    /// Converts a Swift value (a format argument, a `%@` value) to a predicate constant, or nil when it has no
    /// predicate form. Managed objects become their object IDs.
    public init?(_ value: Any?) {
        guard let value = ValueCoding.unwrap(value) else { self = .null; return }
        switch value {
        case let v as PredicateValue: self = v
        case let v as Bool: self = .bool(v)
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as UUID: self = .uuid(v)
        case let v as URL: self = .string(v.absoluteString)
        case let v as ManagedObjectID: self = .objectID(v)
        case let v as ManagedObject: self = .objectID(v.objectID)
        case let v as Double: self = .double(v)
        case let v as Float: self = .double(Double(v))
        case let v as Decimal: self = .double(NSDecimalNumber(decimal: v).doubleValue)
        case let v as [Any]:
            var items: [PredicateValue] = []
            for item in v {
                guard let converted = PredicateValue(item) else { return nil }
                items.append(converted)
            }
            self = .array(items)
        case let v as any Collection:
            var items: [PredicateValue] = []
            for item in v {
                guard let converted = PredicateValue(item) else { return nil }
                items.append(converted)
            }
            self = .array(items)
        default:
            if let n = ValueCoding.integer(value) { self = .integer(n); return }
            return nil
        }
    }

    var isNull: Bool { if case .null = self { return true }; return false }

    /// A name for the value's type in error messages.
    var typeName: String {
        switch self {
        case .null: return "nil"
        case .bool: return "Boolean"
        case .integer: return "Integer"
        case .double: return "Double"
        case .string: return "String"
        case .date: return "Date"
        case .data: return "Binary"
        case .uuid: return "UUID"
        case .objectID: return "object"
        case .array: return "collection"
        }
    }
}
