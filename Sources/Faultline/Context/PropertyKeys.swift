import Foundation
import Synchronization

/// Resolves a property name to its slot index in an entity, caching the last entity's answer so that typed
/// property access costs one atomic load instead of a string lookup.
@usableFromInline
final class PropertyIndexCache: Sendable {
    let name: String
    /// (entity serial << 24) | (index + 1); 0 = empty. Only indexes that passed `accept` are cached.
    @usableFromInline let cached = Atomic<Int>(0)

    init(name: String) { self.name = name }

    /// The cached index when it is `entity`'s: the inlined fast path of typed access.
    @inlinable @inline(__always) func cachedIndex(in entity: EntityDescription) -> Int? {
        let value = cached.load(ordering: .relaxed)
        return value >> 24 == entity.serial ? (value & 0xFF_FFFF) - 1 : nil
    }

    @inline(__always) func index(in entity: EntityDescription, accept: (PropertyDescription) -> Bool) -> Int? {
        if let index = cachedIndex(in: entity) { return index }
        guard let index = entity.propertyIndex[name], accept(entity.properties[index]) else { return nil }
        cached.store(entity.serial << 24 | (index + 1), ordering: .relaxed)
        return index
    }
}

/// A typed attribute key for subclasses: `static let name = Attribute<String?>("name")`, then
/// `var name: String? { get { self[Self.name] } set { self[Self.name] = newValue } }`.
public final class Attribute<Value: AttributeValueConvertible>: Sendable {
    @usableFromInline let cache: PropertyIndexCache

    /// A key for the attribute named `name`.
    public init(_ name: String) { cache = PropertyIndexCache(name: name) }

    /// The attribute's name.
    public var name: String { cache.name }

    /// The attribute's slot in `entity`: one atomic load and a compare, inlined into the caller's module, once the
    /// key has met the entity.
    @inlinable @inline(__always) func index(in entity: EntityDescription) -> Int {
        cache.cachedIndex(in: entity) ?? resolveIndex(in: entity)
    }

    @usableFromInline @inline(never) func resolveIndex(in entity: EntityDescription) -> Int {
        guard let index = cache.index(in: entity, accept: { $0 is AttributeDescription }) else {
            preconditionFailure("entity '\(entity.name)' has no attribute '\(cache.name)'")
        }
        return index
    }
}

/// A typed to-one relationship key for subclasses.
public final class ToOne<Destination: ManagedObject>: Sendable {
    let cache: PropertyIndexCache

    /// A key for the to-one relationship named `name`.
    public init(_ name: String) { cache = PropertyIndexCache(name: name) }

    func relationship(in entity: EntityDescription) -> RelationshipDescription {
        guard let index = cache.index(in: entity, accept: { ($0 as? RelationshipDescription)?.isToMany == false }) else {
            preconditionFailure("entity '\(entity.name)' has no to-one relationship '\(cache.name)'")
        }
        return unsafeDowncast(entity.properties[index], to: RelationshipDescription.self)
    }
}

/// A typed to-many relationship key for subclasses.
public final class ToMany<Destination: ManagedObject>: Sendable {
    let cache: PropertyIndexCache

    /// A key for the to-many relationship named `name`.
    public init(_ name: String) { cache = PropertyIndexCache(name: name) }

    func relationship(in entity: EntityDescription) -> RelationshipDescription {
        guard let index = cache.index(in: entity, accept: { ($0 as? RelationshipDescription)?.isToMany == true }) else {
            preconditionFailure("entity '\(entity.name)' has no to-many relationship '\(cache.name)'")
        }
        return unsafeDowncast(entity.properties[index], to: RelationshipDescription.self)
    }
}

extension ManagedObject {
    /// Adds `object` to a typed to-many relationship (at `index` for ordered ones), keeping the inverse.
    public final func add<Destination>(_ object: Destination, to key: ToMany<Destination>, at index: Int? = nil) {
        addObject(object, to: key.relationship(in: entity), at: index)
    }

    /// Removes `object` from a typed to-many relationship, keeping the inverse.
    public final func remove<Destination>(_ object: Destination, from key: ToMany<Destination>) {
        removeObject(object, from: key.relationship(in: entity))
    }

    /// The number of members of a typed to-many relationship (member faults stay faults).
    public final func count<Destination>(of key: ToMany<Destination>) -> Int {
        toManyStorage(for: key.relationship(in: entity), countOnly: true)?.count ?? 0
    }
}

/// An attribute value in its stored form; opaque outside the engine.
public struct StoredValue {
    @usableFromInline let slot: Slot
    @usableFromInline init(_ slot: Slot) { self.slot = slot }
}

/// A REAL where an integer belongs, as the nearest integer (never a trap).
@usableFromInline func saturatingInt64(_ d: Double) -> Int64 { ValueCoding.saturatingInt64(d) }

/// Swift types that typed attribute keys can hold.
public protocol AttributeValueConvertible {
    /// Decodes a stored value (nil and mismatched values give the type's zero or nil).
    static func decode(_ value: StoredValue) -> Self
    /// Encodes for storage.
    func encode() -> StoredValue
}

extension Optional: AttributeValueConvertible where Wrapped: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Self {
        if case .null = value.slot { return nil }
        return Wrapped.decode(value)
    }
    @inlinable public func encode() -> StoredValue {
        self.map { $0.encode() } ?? StoredValue(.null)
    }
}

extension Int64: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Int64 {
        switch value.slot {
        case .integer(let n): return n
        case .real(let d): return saturatingInt64(d)
        default: return 0
        }
    }
    @inlinable public func encode() -> StoredValue { StoredValue(.integer(self)) }
}

extension Int: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Int { Int(Int64.decode(value)) }
    @inlinable public func encode() -> StoredValue { StoredValue(.integer(Int64(self))) }
}

extension Int32: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Int32 { Int32(clamping: Int64.decode(value)) }
    @inlinable public func encode() -> StoredValue { StoredValue(.integer(Int64(self))) }
}

extension Int16: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Int16 { Int16(clamping: Int64.decode(value)) }
    @inlinable public func encode() -> StoredValue { StoredValue(.integer(Int64(self))) }
}

extension Bool: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Bool { Int64.decode(value) != 0 }
    @inlinable public func encode() -> StoredValue { StoredValue(.integer(self ? 1 : 0)) }
}

extension Double: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Double {
        switch value.slot {
        case .real(let d): return d
        case .integer(let n): return Double(n)
        default: return 0
        }
    }
    @inlinable public func encode() -> StoredValue { StoredValue(.real(self)) }
}

extension Float: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Float { Float(Double.decode(value)) }
    @inlinable public func encode() -> StoredValue { StoredValue(.real(Double(self))) }
}

extension String: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> String {
        if case .text(let s) = value.slot { return s }
        return ""
    }
    @inlinable public func encode() -> StoredValue { StoredValue(.text(self)) }
}

extension Date: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Date { Date(timeIntervalSinceReferenceDate: Double.decode(value)) }
    @inlinable public func encode() -> StoredValue { StoredValue(.real(timeIntervalSinceReferenceDate)) }
}

extension Data: AttributeValueConvertible {
    @inlinable public static func decode(_ value: StoredValue) -> Data {
        if case .blob(let d) = value.slot { return d }
        return Data()
    }
    @inlinable public func encode() -> StoredValue { StoredValue(.blob(self)) }
}

extension UUID: AttributeValueConvertible {
    public static func decode(_ value: StoredValue) -> UUID {
        (ValueCoding.value(of: value.slot, type: .uuid, transformer: nil) as? UUID) ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }
    public func encode() -> StoredValue {
        StoredValue(withUnsafeBytes(of: uuid) { .blob(Data($0)) })
    }
}

extension URL: AttributeValueConvertible {
    public static func decode(_ value: StoredValue) -> URL {
        if case .text(let s) = value.slot, let url = URL(string: s) { return url }
        return URL(string: "about:blank")!
    }
    public func encode() -> StoredValue { StoredValue(.text(absoluteString)) }
}

/// `NSNumber`, for Core Data's optional scalars (`@NSManaged var count: NSNumber?`, what Xcode generates when "Use
/// Scalar Type" is off): `Attribute<NSNumber?>("count")`. A floating-point number is stored as one, any other as an
/// integer (a Boolean as 0 or 1), as the attribute's column expects.
extension NSNumber: AttributeValueConvertible {
    public static func decode(_ value: StoredValue) -> Self {
        let number: NSNumber
        switch value.slot {
        case .integer(let n): number = NSNumber(value: n)
        case .real(let d): number = NSNumber(value: d)
        default: number = NSNumber(value: 0)
        }
        // NSNumber is not subclassed for attributes; the cast is to the class itself.
        return number as! Self
    }
    public func encode() -> StoredValue {
        let type = String(cString: objCType)
        return StoredValue(type == "d" || type == "f" ? .real(doubleValue) : .integer(int64Value))
    }
}

extension Decimal: AttributeValueConvertible {
    public static func decode(_ value: StoredValue) -> Decimal {
        (ValueCoding.value(of: value.slot, type: .decimal, transformer: nil) as? Decimal) ?? 0
    }
    public func encode() -> StoredValue { StoredValue(.text(description)) }
}
