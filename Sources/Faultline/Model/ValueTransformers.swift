import Foundation

/// Turns values of a transformable attribute into bytes for the store and back.
public protocol AttributeValueTransformer: Sendable {
    /// Encodes a value for storage.
    func encode(_ value: Any) throws -> Data
    /// Decodes a stored value.
    func decode(_ data: Data) throws -> Any
}

/// The default transformer, as Core Data's (`NSSecureUnarchiveFromData`): values are stored as `NSKeyedArchiver`
/// archives. It writes strings, numbers, booleans, dates, data, URLs, UUIDs and arrays, dictionaries and sets of
/// them; it reads those from any keyed archive, keeps an archive of another class as an `ArchivedObject` (written back
/// unchanged), reads the tagged JSON that Faultline stored before, and returns any other bytes as `Data`.
public struct KeyedArchiveValueTransformer: AttributeValueTransformer {
    /// The default transformer.
    public init() {}

    /// `value` as a keyed archive.
    public func encode(_ value: Any) throws -> Data {
        if let archived = value as? ArchivedObject { return archived.data }
        try Self.checkArchivable(value, depth: 0)
        return try NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: false)
    }

    /// The value an archive holds (see the type's description for what else is read).
    public func decode(_ data: Data) throws -> Any {
        if KeyedArchive.isKeyedArchive(data) {
            return try KeyedArchive(data).foundationValue(archive: data) ?? NSNull()
        }
        if let tag = data.first, tag <= 1 {
            let body = Data(data.dropFirst())
            if tag == 0 { return body }
            if let array = try? JSONSerialization.jsonObject(with: body) as? [Any], let value = array.first { return value }
        }
        return data
    }

    /// Foundation's archiver traps on a value it cannot archive: only the classes Core Data's default transformer
    /// handles are let through.
    private static func checkArchivable(_ value: Any, depth: Int) throws {
        guard depth < Limits.propertyListDepth else {
            throw ValueError(problem: "the value nests more than \(Limits.propertyListDepth) deep (Limits.propertyListDepth)")
        }
        switch value {
        case is String, is Bool, is Int, is Int8, is Int16, is Int32, is Int64, is UInt8, is UInt16, is UInt32,
             is Double, is Float, is Date, is Data, is URL, is UUID, is NSNull:
            return
        case let array as [Any]:
            for element in array { try checkArchivable(element, depth: depth + 1) }
        case let dictionary as [String: Any]:
            for element in dictionary.values { try checkArchivable(element, depth: depth + 1) }
        case let set as Set<AnyHashable>:
            for element in set { try checkArchivable(element.base, depth: depth + 1) }
        default:
            throw ValueError(problem: "\(type(of: value)) is not a value the default transformer archives (strings, numbers, dates, data, URLs, UUIDs and collections of them); register a transformer for it")
        }
    }
}

/// A transformer for one `Codable` type, encoded as JSON.
public struct CodableValueTransformer<Value: Codable & Sendable>: AttributeValueTransformer {
    /// A transformer for `type`.
    public init(_ type: Value.Type = Value.self) {}

    /// `value` as JSON; a value of another type is a `ValueError`.
    public func encode(_ value: Any) throws -> Data {
        guard let value = value as? Value else {
            throw ValueError(problem: "expected \(Value.self), got \(type(of: value))")
        }
        return try JSONEncoder().encode(value)
    }

    /// The value JSON holds.
    public func decode(_ data: Data) throws -> Any {
        try JSONDecoder().decode(Value.self, from: data)
    }
}

/// The process-wide registry of named transformers, as `NSValueTransformer`'s names.
public enum ValueTransformerRegistry {
    private static let storage = LockedDictionary<String, any AttributeValueTransformer>()

    /// Registers `transformer` under `name`; a transformable attribute naming it uses it.
    public static func register(_ transformer: any AttributeValueTransformer, name: String) {
        storage.set(transformer, for: name)
    }

    /// The transformer registered under a name; else the default keyed-archive transformer (Core Data's own
    /// `NSSecureUnarchiveFromData` and `NSKeyedUnarchiveFromData`, and an app's transformers that are not registered
    /// here: their archives are read as far as Foundation's classes go, other bytes stay `Data`).
    public static func transformer(named name: String?) -> any AttributeValueTransformer {
        name.flatMap { storage.get($0) } ?? KeyedArchiveValueTransformer()
    }
}

final class LockedDictionary<Key: Hashable, Value>: @unchecked Sendable {
    private var values: [Key: Value] = [:]
    private let lock = NSLock()
    func get(_ key: Key) -> Value? { lock.lock(); defer { lock.unlock() }; return values[key] }
    func set(_ value: Value, for key: Key) { lock.lock(); values[key] = value; lock.unlock() }
}
