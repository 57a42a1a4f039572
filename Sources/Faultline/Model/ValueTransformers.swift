import Foundation

/// Turns values of a transformable attribute into bytes for the store and back.
public protocol AttributeValueTransformer: Sendable {
    /// Encodes a value for storage.
    func encode(_ value: Any) throws -> Data
    /// Decodes a stored value.
    func decode(_ data: Data) throws -> Any
}

/// The default transformer: JSON for JSON-representable values (strings, numbers, booleans, arrays,
/// dictionaries); `Data` passes through unchanged.
public struct JSONValueTransformer: AttributeValueTransformer {
    public init() {}

    public func encode(_ value: Any) throws -> Data {
        if let data = value as? Data { return Data([0]) + data }
        guard JSONSerialization.isValidJSONObject([value]) else {
            throw ValueError(problem: "\(type(of: value)) is not JSON-representable; register a transformer for it")
        }
        return Data([1]) + (try JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys]))
    }

    public func decode(_ data: Data) throws -> Any {
        guard let tag = data.first else { return Data() }
        let body = data.dropFirst()
        if tag == 0 { return Data(body) }
        guard let array = try JSONSerialization.jsonObject(with: Data(body)) as? [Any], let value = array.first else {
            throw ValueError(problem: "stored transformable value is not valid JSON")
        }
        return value
    }
}

/// A transformer for one `Codable` type, encoded as JSON.
public struct CodableValueTransformer<Value: Codable & Sendable>: AttributeValueTransformer {
    public init(_ type: Value.Type = Value.self) {}

    public func encode(_ value: Any) throws -> Data {
        guard let value = value as? Value else {
            throw ValueError(problem: "expected \(Value.self), got \(type(of: value))")
        }
        return try JSONEncoder().encode(value)
    }

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

    /// The transformer for a name, or the default JSON transformer when none is registered.
    public static func transformer(named name: String?) -> any AttributeValueTransformer {
        name.flatMap { storage.get($0) } ?? JSONValueTransformer()
    }
}

final class LockedDictionary<Key: Hashable, Value>: @unchecked Sendable {
    private var values: [Key: Value] = [:]
    private let lock = NSLock()
    func get(_ key: Key) -> Value? { lock.lock(); defer { lock.unlock() }; return values[key] }
    func set(_ value: Value, for key: Key) { lock.lock(); values[key] = value; lock.unlock() }
}
