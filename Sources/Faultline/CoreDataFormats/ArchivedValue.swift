import Foundation

/// An archived object of a class Faultline does not decode (a `UIColor`, an app's own class): its class names and
/// the archive's bytes, kept as they were.
public struct ArchivedObject: Sendable, Equatable, CustomStringConvertible {
    /// The object's class, then its superclasses, as the archive names them.
    public let classNames: [String]
    /// The whole archive.
    public let data: Data

    /// Keeps an archive as it is, under its class names.
    public init(classNames: [String], data: Data) {
        self.classNames = classNames
        self.data = data
    }

    /// The object's class.
    public var className: String { classNames.first ?? "?" }
    /// The text `print` and `String(describing:)` show.
    public var description: String { "<\(className): \(data.count) bytes archived>" }
}

extension KeyedArchive {
    /// The root object as a Swift value, for the Foundation classes a transformable attribute commonly holds:
    /// strings, numbers, dates, data, URLs, UUIDs, arrays, dictionaries and sets (nested to
    /// `Limits.propertyListDepth`). An object of another class anywhere in it makes the whole value an
    /// `ArchivedObject` carrying `archive`'s bytes.
    public func foundationValue(archive: Data) throws -> Any? {
        var budget = Limits.archivedObjectVisits
        do {
            return try foundationValue(root, depth: 0, budget: &budget)
        } catch let undecoded as UndecodedClass {
            return ArchivedObject(classNames: undecoded.classNames, data: archive)
        }
    }

    private struct UndecodedClass: Error { let classNames: [String] }

    /// `budget` counts the objects visited: an archive may reference one object from every element of every array,
    /// and each path to it decodes it again.
    private func foundationValue(_ reference: PropertyListValue?, depth: Int, budget: inout Int) throws -> Any? {
        guard depth < Limits.propertyListDepth else {
            throw CoreDataFormatError("keyed archive: nested more than \(Limits.propertyListDepth) deep (Limits.propertyListDepth)")
        }
        budget -= 1
        guard budget >= 0 else {
            throw CoreDataFormatError("keyed archive: more than \(Limits.archivedObjectVisits) objects to decode (Limits.archivedObjectVisits)")
        }
        guard let object = try resolve(reference) else { return nil }
        switch object {
        case .string(let text): return text
        case .integer(let number): return Int(number)
        case .real(let number): return number
        case .boolean(let flag): return flag
        case .data(let bytes): return bytes
        case .date(let seconds): return Date(timeIntervalSinceReferenceDate: seconds)
        case .null: return nil
        case .uid, .array, .set:
            throw CoreDataFormatError("keyed archive: an object is a bare reference or collection")
        case .dictionary:
            break
        }
        let name = try className(of: object) ?? ""
        switch name {
        case "NSString", "NSMutableString":
            return try string(object)
        case "NSDate":
            guard case .real(let seconds)? = object["NS.time"] else { return nil }
            return Date(timeIntervalSinceReferenceDate: seconds)
        case "NSData", "NSMutableData":
            return object["NS.data"].flatMap { if case .data(let d) = $0 { return d }; return nil } ?? Data()
        case "NSUUID":
            guard case .data(let bytes)? = object["NS.uuidbytes"], bytes.count == 16 else { return nil }
            return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        case "NSURL":
            guard let relative = try string(object["NS.relative"]) else { return nil }
            let base = try foundationValue(object["NS.base"], depth: depth + 1, budget: &budget) as? URL
            return URL(string: relative, relativeTo: base)?.absoluteURL
        case "NSNull":
            return NSNull()
        case "NSArray", "NSMutableArray", "NSOrderedSet", "NSMutableOrderedSet":
            return try (object["NS.objects"]?.elements ?? []).map { try foundationValue($0, depth: depth + 1, budget: &budget) ?? NSNull() }
        case "NSSet", "NSMutableSet":
            var members: Set<AnyHashable> = []
            for element in object["NS.objects"]?.elements ?? [] {
                guard let value = try foundationValue(element, depth: depth + 1, budget: &budget) as? AnyHashable else {
                    throw CoreDataFormatError("keyed archive: a set member cannot be compared")
                }
                members.insert(value)
            }
            return members
        case "NSDictionary", "NSMutableDictionary":
            let keys = object["NS.keys"]?.elements ?? []
            let values = object["NS.objects"]?.elements ?? []
            guard keys.count == values.count else { throw CoreDataFormatError("keyed archive: a dictionary has \(keys.count) keys and \(values.count) values") }
            var strings: [String: Any] = [:]
            var others: [AnyHashable: Any] = [:]
            for (key, value) in zip(keys, values) {
                guard let k = try foundationValue(key, depth: depth + 1, budget: &budget) as? AnyHashable else {
                    throw CoreDataFormatError("keyed archive: a dictionary key cannot be compared")
                }
                let v = try foundationValue(value, depth: depth + 1, budget: &budget) ?? NSNull()
                if let text = k as? String { strings[text] = v }
                others[k] = v
            }
            return others.count == strings.count ? strings : others
        default:
            let classes = try resolve(object["$class"])?["$classes"]?.elements?.compactMap(\.string) ?? [name]
            throw UndecodedClass(classNames: classes)
        }
    }
}
