import Foundation

/// An `NSKeyedArchiver` archive: a binary property list whose `$objects` hold every archived object once, linked by
/// UIDs, with `$top` naming the root. Core Data writes its compiled models and transformable values this way.
public struct KeyedArchive: Sendable {
    /// Every archived object; index 0 is the string "$null".
    public let objects: [PropertyListValue]
    /// The top-level keys (`root` for `archivedData(withRootObject:)`).
    public let top: [String: PropertyListValue]

    /// Reads an archive from its bytes.
    public init(_ data: Data) throws {
        guard case .dictionary(let plist) = try BinaryPropertyList.read(data) else {
            throw CoreDataFormatError("keyed archive: the property list is not a dictionary")
        }
        guard plist["$archiver"]?.string == "NSKeyedArchiver" else {
            throw CoreDataFormatError("not a keyed archive (no $archiver NSKeyedArchiver)")
        }
        guard case .array(let objects)? = plist["$objects"], case .dictionary(let top)? = plist["$top"] else {
            throw CoreDataFormatError("keyed archive: $objects or $top is missing")
        }
        self.objects = objects
        self.top = top
    }

    /// An archive of these objects (tests build hostile ones this way).
    init(objects: [PropertyListValue], top: [String: PropertyListValue]) {
        self.objects = objects
        self.top = top
    }

    /// True when `data` looks like a keyed archive (a binary property list naming NSKeyedArchiver).
    public static func isKeyedArchive(_ data: Data) -> Bool {
        BinaryPropertyList.isBinaryPropertyList(data) && data.range(of: Data("NSKeyedArchiver".utf8)) != nil
    }

    /// The root object's reference.
    public var root: PropertyListValue? { top["root"] }

    /// The object a value refers to: itself unless it is a UID; nil for `$null`.
    public func resolve(_ value: PropertyListValue?) throws -> PropertyListValue? {
        guard let value else { return nil }
        guard case .uid(let index) = value else { return value }
        guard index < objects.count else {
            throw CoreDataFormatError("keyed archive: reference to object \(index) of \(objects.count)")
        }
        if index == 0 || objects[index] == .string("$null") { return nil }
        return objects[index]
    }

    /// The class name of an archived object (`$class` → `$classname`), nil for plain values.
    public func className(of object: PropertyListValue) throws -> String? {
        guard case .dictionary(let fields) = object, let reference = fields["$class"] else { return nil }
        return try resolve(reference)?["$classname"]?.string
    }

    /// The field `key` of an archived object, resolved.
    public func field(_ key: String, of object: PropertyListValue) throws -> PropertyListValue? {
        try resolve(object[key])
    }

    /// The resolved elements of an `NSArray`/`NSSet`-like object's `NS.objects`.
    public func elements(of object: PropertyListValue) throws -> [PropertyListValue] {
        try (object["NS.objects"]?.elements ?? []).compactMap { try resolve($0) }
    }

    /// The resolved (key, value) pairs of an `NSDictionary`-like object's `NS.keys` and `NS.objects`.
    public func entries(of object: PropertyListValue) throws -> [(key: PropertyListValue, value: PropertyListValue)] {
        let keys = object["NS.keys"]?.elements ?? []
        let values = object["NS.objects"]?.elements ?? []
        guard keys.count == values.count else { throw CoreDataFormatError("keyed archive: a dictionary has \(keys.count) keys and \(values.count) values") }
        var result: [(key: PropertyListValue, value: PropertyListValue)] = []
        for (key, value) in zip(keys, values) {
            guard let k = try resolve(key), let v = try resolve(value) else { continue }
            result.append((k, v))
        }
        return result
    }

    /// A string object: a plain string or an `NSMutableString`'s `NS.string`.
    public func string(_ value: PropertyListValue?) throws -> String? {
        guard let object = try resolve(value) else { return nil }
        if let text = object.string { return text }
        return object["NS.string"]?.string
    }
}
