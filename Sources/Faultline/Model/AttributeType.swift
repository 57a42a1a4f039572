/// The type of an attribute, with Core Data's names (as in an Xcode model's `attributeType`).
public enum AttributeType: String, Sendable, CaseIterable, Codable {
    /// A 16-bit integer (`INTEGER`).
    case integer16 = "Integer 16"
    /// A 32-bit integer (`INTEGER`).
    case integer32 = "Integer 32"
    /// A 64-bit integer (`INTEGER`).
    case integer64 = "Integer 64"
    /// A double (`FLOAT`).
    case double = "Double"
    /// A float (`FLOAT`).
    case float = "Float"
    /// A decimal number (`DECIMAL`).
    case decimal = "Decimal"
    /// A string (`VARCHAR`).
    case string = "String"
    /// A Boolean (`INTEGER`, 0 or 1).
    case boolean = "Boolean"
    /// A date (`TIMESTAMP`: seconds since 2001-01-01).
    case date = "Date"
    /// Bytes (`BLOB`), inline or, when the attribute allows external storage, in a file beside the store.
    case binary = "Binary"
    /// A UUID (`BLOB` of 16 bytes).
    case uuid = "UUID"
    /// A URL (`VARCHAR`).
    case uri = "URI"
    /// A value a transformer turns into bytes (`BLOB`).
    case transformable = "Transformable"
    /// Only for transient attributes, as in Core Data.
    case undefined = "Undefined"
    /// An object ID (Core Data's `objectIDAttributeType`; a `BLOB` column).
    case objectID = "ObjectID"
    /// A composite attribute (SwiftData's Codable structs and enums): named elements, each an attribute of its own
    /// column; the value is a dictionary of the elements' values by name.
    case composite = "Composite"

    /// Parses an Xcode name ("Integer 16") or a JSON model name ("integer16", case-insensitive).
    public init?(name: String) {
        if let exact = AttributeType(rawValue: name) { self = exact; return }
        let folded = name.lowercased().replacingOccurrences(of: " ", with: "")
        guard let match = AttributeType.allCases.first(where: {
            $0.rawValue.lowercased().replacingOccurrences(of: " ", with: "") == folded || "\($0)".lowercased() == folded
        }) else { return nil }
        self = match
    }

    /// The name used in JSON model files.
    public var jsonName: String { "\(self)" }

    /// The declared SQL column type, as Core Data writes it.
    var columnType: String {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .double, .float: return "FLOAT"
        case .decimal: return "DECIMAL"
        case .string, .uri: return "VARCHAR"
        case .date: return "TIMESTAMP"
        case .binary, .uuid, .transformable, .undefined, .objectID: return "BLOB"
        case .composite: return "" // no column of its own: each element has one
        }
    }

    var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }

    /// The range an integer attribute can hold.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        case .integer64: return Int64.min...Int64.max
        default: return nil
        }
    }
}
