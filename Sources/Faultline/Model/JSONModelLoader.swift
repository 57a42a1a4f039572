import Foundation

extension ManagedObjectModel {
    /// Builds a model from a JSON model file (format: docs/model-format.md).
    public convenience init(jsonData: Data, source: String? = nil) throws {
        let root: Any
        do { root = try JSONSerialization.jsonObject(with: jsonData) } catch {
            throw ModelError(source: source, problem: "not valid JSON: \(JSONReader.describe(error))")
        }
        let reader = JSONReader(source: source)
        let top = try reader.object(root, at: "the top level")
        try reader.allowOnly(["entities", "fetchRequests", "configurations"], in: top, at: "the top level")
        let entityObjects = try reader.array(top["entities"], at: "'entities'")
        var entities: [EntityDescription] = []
        for (i, value) in entityObjects.enumerated() {
            entities.append(try reader.entity(value, position: i))
        }
        var templates: [String: (entity: String, predicate: String?)] = [:]
        if let requests = top["fetchRequests"] {
            for (name, value) in try reader.object(requests, at: "'fetchRequests'") {
                let request = try reader.object(value, at: "fetch request '\(name)'")
                try reader.allowOnly(["entity", "predicate"], in: request, at: "fetch request '\(name)'")
                templates[name] = (try reader.string(request["entity"], at: "fetch request '\(name)'.entity"),
                                   try reader.optionalString(request["predicate"], at: "fetch request '\(name)'.predicate"))
            }
        }
        var configurations: [String: [String]] = [:]
        if let configs = top["configurations"] {
            for (name, value) in try reader.object(configs, at: "'configurations'") {
                configurations[name] = try reader.array(value, at: "configuration '\(name)'").map { try reader.string($0, at: "configuration '\(name)'") }
            }
        }
        try self.init(entities: entities, fetchRequestTemplates: templates, configurations: configurations, source: source)
    }
}

/// Strict, typed access to parsed JSON with errors that say where.
struct JSONReader {
    let source: String?

    func fail(_ problem: String, entity: String? = nil, property: String? = nil) -> ModelError {
        ModelError(source: source, entity: entity, property: property, problem: problem)
    }

    func object(_ value: Any?, at place: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw fail("\(place) must be a JSON object") }
        return object
    }

    func array(_ value: Any?, at place: String) throws -> [Any] {
        guard let array = value as? [Any] else { throw fail("\(place) must be a JSON array") }
        return array
    }

    func string(_ value: Any?, at place: String, entity: String? = nil, property: String? = nil) throws -> String {
        guard let string = value as? String else { throw fail("\(place) must be a string", entity: entity, property: property) }
        return string
    }

    func optionalString(_ value: Any?, at place: String, entity: String? = nil, property: String? = nil) throws -> String? {
        if value == nil || value is NSNull { return nil }
        return try string(value, at: place, entity: entity, property: property)
    }

    func bool(_ value: Any?, default fallback: Bool, at place: String, entity: String?, property: String? = nil) throws -> Bool {
        guard let value, !(value is NSNull) else { return fallback }
        guard let number = value as? NSNumber, isJSONBoolean(number) else {
            throw fail("'\(place)' must be true or false", entity: entity, property: property)
        }
        return number.boolValue
    }

    func number(_ value: Any?, at place: String, entity: String?, property: String?) throws -> Double? {
        guard let value, !(value is NSNull) else { return nil }
        guard let number = value as? NSNumber, !isJSONBoolean(number) else {
            throw fail("'\(place)' must be a number", entity: entity, property: property)
        }
        return number.doubleValue
    }

    func allowOnly(_ keys: Set<String>, in object: [String: Any], at place: String, entity: String? = nil, property: String? = nil) throws {
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw fail("unknown key '\(unknown)' in \(place) (allowed: \(keys.sorted().joined(separator: ", ")))", entity: entity, property: property)
        }
    }

    func stringLists(_ value: Any?, at place: String, entity: String) throws -> [[String]] {
        guard let value else { return [] }
        guard let lists = value as? [[Any]] else { throw fail("'\(place)' must be an array of arrays of property names", entity: entity) }
        return try lists.map { try $0.map { try string($0, at: "'\(place)'", entity: entity) } }
    }

    func entity(_ value: Any, position: Int) throws -> EntityDescription {
        let object = try self.object(value, at: "entity #\(position + 1)")
        let name = try string(object["name"], at: "entity #\(position + 1) 'name'")
        try allowOnly(["name", "parent", "abstract", "attributes", "relationships", "fetchedProperties", "indexes", "uniquenessConstraints",
                       "versionHashModifier", "className", "userInfo"], in: object, at: "the entity", entity: name)
        var fetched: [FetchedPropertyDescription] = []
        for value in try (object["fetchedProperties"].map { try array($0, at: "'fetchedProperties' of entity '\(name)'") } ?? []) {
            fetched.append(try fetchedProperty(value, entity: name))
        }
        var properties: [PropertyDescription] = []
        for value in try (object["attributes"].map { try array($0, at: "'attributes' of entity '\(name)'") } ?? []) {
            properties.append(try attribute(value, entity: name))
        }
        for value in try (object["relationships"].map { try array($0, at: "'relationships' of entity '\(name)'") } ?? []) {
            properties.append(try relationship(value, entity: name))
        }
        return EntityDescription(
            name: name,
            parent: try optionalString(object["parent"], at: "'parent'", entity: name),
            isAbstract: try bool(object["abstract"], default: false, at: "abstract", entity: name),
            properties: properties,
            compoundIndexes: try stringLists(object["indexes"], at: "indexes", entity: name),
            uniquenessConstraints: try stringLists(object["uniquenessConstraints"], at: "uniquenessConstraints", entity: name),
            versionHashModifier: try optionalString(object["versionHashModifier"], at: "'versionHashModifier'", entity: name),
            representedClassName: try optionalString(object["className"], at: "'className'", entity: name),
            userInfo: (object["userInfo"] as? [String: String]) ?? [:],
            fetchedProperties: fetched)
    }

    /// `{"name", "entity", "predicate", "sort": ["key", "-key"], "userInfo"}`.
    func fetchedProperty(_ value: Any, entity: String) throws -> FetchedPropertyDescription {
        let object = try self.object(value, at: "a fetched property of entity '\(entity)'")
        let name = try string(object["name"], at: "fetched property 'name'", entity: entity)
        try allowOnly(["name", "entity", "predicate", "sort", "userInfo"], in: object, at: "the fetched property", entity: entity, property: name)
        let destination = try string(object["entity"], at: "'entity'", entity: entity, property: name)
        var predicate: ObjectPredicate? = nil
        if let text = try optionalString(object["predicate"], at: "'predicate'", entity: entity) {
            do {
                predicate = try ObjectPredicate(parsing: text)
            } catch {
                throw fail("the fetched property's predicate: \(error)", entity: entity, property: name)
            }
        }
        var sort: [FetchSortDescriptor] = []
        for item in try (object["sort"].map { try array($0, at: "'sort' of fetched property '\(name)'") } ?? []) {
            let key = try string(item, at: "'sort'", entity: entity, property: name)
            sort.append(key.hasPrefix("-") ? FetchSortDescriptor(key: String(key.dropFirst()), ascending: false) : FetchSortDescriptor(key: key, ascending: true))
        }
        return FetchedPropertyDescription(name: name, destinationEntityName: destination, predicate: predicate, sortDescriptors: sort,
                                          userInfo: (object["userInfo"] as? [String: String]) ?? [:])
    }

    func attribute(_ value: Any, entity: String, depth: Int = 0) throws -> AttributeDescription {
        let object = try self.object(value, at: "an attribute of entity '\(entity)'")
        let name = try string(object["name"], at: "attribute 'name'", entity: entity)
        try allowOnly(["name", "type", "optional", "transient", "default", "indexed", "allowsExternalStorage",
                       "transformer", "min", "max", "regex", "userInfo", "elements"], in: object, at: "the attribute", entity: entity, property: name)
        let typeName = try string(object["type"], at: "'type'", entity: entity, property: name)
        guard let type = AttributeType(name: typeName) else {
            throw fail("unknown attribute type '\(typeName)' (known: \(AttributeType.allCases.map(\.jsonName).joined(separator: ", ")))", entity: entity, property: name)
        }
        let attribute = AttributeDescription(
            name: name, type: type,
            isOptional: try bool(object["optional"], default: true, at: "optional", entity: entity, property: name),
            isTransient: try bool(object["transient"], default: false, at: "transient", entity: entity, property: name),
            isIndexed: try bool(object["indexed"], default: false, at: "indexed", entity: entity, property: name),
            allowsExternalBinaryDataStorage: try bool(object["allowsExternalStorage"], default: false, at: "allowsExternalStorage", entity: entity, property: name),
            valueTransformerName: try optionalString(object["transformer"], at: "'transformer'", entity: entity, property: name),
            minValue: try number(object["min"], at: "min", entity: entity, property: name),
            maxValue: try number(object["max"], at: "max", entity: entity, property: name),
            regularExpression: try optionalString(object["regex"], at: "'regex'", entity: entity, property: name),
            userInfo: (object["userInfo"] as? [String: String]) ?? [:])
        if type == .composite {
            // A composite's elements are attributes in turn (docs/model-format.md).
            guard depth < Limits.compositeDepth else { throw fail("composites nested more than \(Limits.compositeDepth) deep (Limits.compositeDepth)", entity: entity, property: name) }
            guard let elements = object["elements"] as? [Any], !elements.isEmpty else {
                throw fail("a composite attribute needs 'elements', a list of attributes", entity: entity, property: name)
            }
            attribute.elements = try elements.map { try self.attribute($0, entity: entity, depth: depth + 1) }
        } else if object["elements"] != nil {
            throw fail("'elements' belongs to a composite attribute only", entity: entity, property: name)
        }
        if let json = object["default"], !(json is NSNull) {
            do {
                attribute.defaultValue = try JSONValueDecoding.sendable(try JSONValueDecoding.value(fromJSON: json, type: type))
            } catch let error as ValueError {
                throw fail("default value: \(error.problem)", entity: entity, property: name)
            }
        }
        return attribute
    }

    func relationship(_ value: Any, entity: String) throws -> RelationshipDescription {
        let object = try self.object(value, at: "a relationship of entity '\(entity)'")
        let name = try string(object["name"], at: "relationship 'name'", entity: entity)
        try allowOnly(["name", "destination", "inverse", "toMany", "ordered", "deleteRule", "optional", "transient",
                       "minCount", "maxCount", "userInfo"], in: object, at: "the relationship", entity: entity, property: name)
        let ruleName = try optionalString(object["deleteRule"], at: "'deleteRule'", entity: entity, property: name) ?? "nullify"
        guard let rule = DeleteRule(name: ruleName) else {
            throw fail("unknown delete rule '\(ruleName)' (known: nullify, cascade, deny, noAction)", entity: entity, property: name)
        }
        let toMany = try bool(object["toMany"], default: false, at: "toMany", entity: entity, property: name)
        let minCount = try number(object["minCount"], at: "minCount", entity: entity, property: name).map { Int($0) } ?? 0
        let maxCount = try number(object["maxCount"], at: "maxCount", entity: entity, property: name).map { Int($0) }
        return RelationshipDescription(
            name: name,
            destination: try string(object["destination"], at: "'destination'", entity: entity, property: name),
            inverse: try optionalString(object["inverse"], at: "'inverse'", entity: entity, property: name),
            isToMany: toMany,
            isOrdered: try bool(object["ordered"], default: false, at: "ordered", entity: entity, property: name),
            deleteRule: rule,
            isOptional: try bool(object["optional"], default: true, at: "optional", entity: entity, property: name),
            isTransient: try bool(object["transient"], default: false, at: "transient", entity: entity, property: name),
            minCount: minCount, maxCount: maxCount,
            userInfo: (object["userInfo"] as? [String: String]) ?? [:])
    }

    static func describe(_ error: Error) -> String {
        let ns = error as NSError
        return (ns.userInfo[NSDebugDescriptionErrorKey] as? String) ?? ns.localizedDescription
    }
}

/// JSON values (from model defaults and data files) to Swift values of an attribute type.
public enum JSONValueDecoding {
    /// Converts a JSON value to the Swift value an attribute of `type` holds. Dates are ISO 8601 strings or
    /// seconds since 1970; binary is base64; UUIDs are strings.
    public static func value(fromJSON json: Any, type: AttributeType) throws -> Any {
        func expected(_ what: String) -> ValueError {
            ValueError(problem: "expected \(what) for a \(type.rawValue) attribute, got \(describe(json))")
        }
        let number = json as? NSNumber
        let isBool = number.map(isJSONBoolean) ?? false
        switch type {
        case .integer16, .integer32, .integer64:
            guard let number, !isBool else { throw expected("an integer") }
            switch JSONInteger(number) {
            case .exact(let n):
                guard type.integerRange!.contains(n) else { throw ValueError.outOfRange(String(n), type) }
                return n
            case .outOfRange(let text): throw ValueError.outOfRange(text, type)
            case .inexact(let text):
                throw ValueError(problem: "a number with an exponent at or above 2^53 is not read exactly (it read as \(text)); write it as a plain integer")
            case .fraction: throw expected("an integer")
            }
        case .double, .float:
            guard let number, !isBool else { throw expected("a number") }
            let d = number.doubleValue
            if type == .float, abs(d) > Double(Float.greatestFiniteMagnitude) {
                throw ValueError(problem: "\(number.stringValue) does not fit in Float (its largest magnitude is \(Float.greatestFiniteMagnitude))")
            }
            return d
        case .decimal:
            if let s = json as? String, let d = Decimal(string: s) { return d }
            guard let number, !isBool else { throw expected("a number or decimal string") }
            return Decimal(string: number.stringValue) ?? number.decimalValue
        case .boolean:
            guard let number, isBool else { throw expected("true or false") }
            return number.boolValue
        case .string:
            guard let s = json as? String else { throw expected("a string") }
            return s
        case .date:
            if let s = json as? String {
                if let d = ISO8601.parse(s) { return try checkedDate(d, "'\(s)'") }
                throw ValueError(problem: "'\(s)' is not an ISO 8601 date")
            }
            guard let number, !isBool else { throw expected("an ISO 8601 date string") }
            return try checkedDate(Date(timeIntervalSince1970: number.doubleValue), "\(number.stringValue) seconds since 1970")
        case .binary:
            guard let s = json as? String else { throw expected("a base64 string") }
            guard let d = Data(base64Encoded: s) else { throw ValueError(problem: "'\(s.prefix(40))' is not valid base64") }
            return d
        case .uuid:
            guard let s = json as? String else { throw expected("a UUID string") }
            guard let u = UUID(uuidString: s) else { throw ValueError(problem: "'\(s)' is not a UUID") }
            return u
        case .uri:
            guard let s = json as? String else { throw expected("a URI string") }
            guard let u = URL(string: s) else { throw ValueError(problem: "'\(s)' is not a URI") }
            return u
        case .transformable, .undefined, .objectID:
            return json
        case .composite:
            guard let elements = json as? [String: Any] else { throw expected("an object of the composite's elements") }
            return elements
        }
    }

    /// `date` when Core Data can hold it (`Limits.dateSecondsSinceReferenceDate`).
    static func checkedDate(_ date: Date, _ given: String) throws -> Date {
        guard Limits.dateSecondsSinceReferenceDate.contains(date.timeIntervalSinceReferenceDate) else {
            throw ValueError(problem: "\(given) is outside the dates a Date attribute holds (years 1 to 4001)")
        }
        return date
    }

    /// The decoded value as a Sendable default (every attribute type but transformable decodes to one).
    static func sendable(_ value: Any) throws -> any Sendable {
        switch value {
        case let v as Int64: return v
        case let v as Double: return v
        case let v as Decimal: return v
        case let v as Bool: return v
        case let v as String: return v
        case let v as Date: return v
        case let v as Data: return v
        case let v as UUID: return v
        case let v as URL: return v
        default: throw ValueError(problem: "transformable attributes take no default value in a JSON model")
        }
    }

    static func describe(_ json: Any) -> String {
        switch json {
        case let n as NSNumber where isJSONBoolean(n): return n.boolValue ? "true" : "false"
        case let n as NSNumber: return "the number \(n)"
        case let s as String: return "the string \"\(s.prefix(40))\""
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        case is NSNull: return "null"
        default: return "\(type(of: json))"
        }
    }
}

/// ISO 8601 dates with or without fractional seconds.
enum ISO8601 {
    static func parse(_ string: String) -> Date? {
        if let date = parseCommonForm(string) { return date }
        let plain = ISO8601DateFormatter()
        if let d = plain.date(from: string) { return d }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = fractional.date(from: string) { return d }
        let dateOnly = ISO8601DateFormatter()
        dateOnly.formatOptions = [.withFullDate]
        return dateOnly.date(from: string)
    }

    /// `2017-03-01T08:00:00Z` and `2017-03-01` read directly, as the formatter reads them: a formatter costs
    /// about 50 µs a date (ICU sets one up for each), most of a 200,000-record load. Other forms, and fields out of
    /// range, are left to the formatter; years before 1583 too (ICU's calendar is Julian before the reform).
    static func parseCommonForm(_ string: String) -> Date? {
        let utf8 = Array(string.utf8)
        guard utf8.count == 10 || (utf8.count == 20 && utf8[10] == UInt8(ascii: "T") && utf8[19] == UInt8(ascii: "Z")
                                   && utf8[13] == UInt8(ascii: ":") && utf8[16] == UInt8(ascii: ":")),
              utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for i in from..<(from + count) {
                let digit = Int(utf8[i]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), (1583...9999).contains(year), (1...12).contains(month) else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return nil }
        var seconds = 0
        if utf8.count == 20 {
            guard let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
                  hour < 24, minute < 60, second < 60 else { return nil }
            seconds = hour * 3600 + minute * 60 + second
        }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return Date(timeIntervalSince1970: Double((era * 146_097 + dayOfEra - 719_468) * 86_400 + seconds))
    }

    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
