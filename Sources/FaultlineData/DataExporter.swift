import Faultline
import Foundation

/// Reads objects of an entity back out as JSON or a text table, with object ID URIs for identity and
/// relationships.
public struct DataExporter {
    /// Output formats.
    public enum Format: String, Sendable, CaseIterable {
        case json, table
    }

    public let context: ManagedObjectContext

    /// An exporter reading through `context`.
    public init(context: ManagedObjectContext) { self.context = context }

    /// What to print of a fetch.
    public enum ResultType: String, Sendable, CaseIterable {
        /// Every object with its properties.
        case objects
        /// Object ID URIs only.
        case ids
        /// The number of matching objects (`SELECT COUNT(*)`, no rows read).
        case count
        /// Rows of chosen properties and aggregates (`propertiesToFetch`, grouping), no objects made.
        case dictionary
    }

    /// The objects of `entityName` (and its sub-entities), at most `limit` (0 = all), in store order.
    public func export(entityName: String, format: Format, limit: Int = 0) throws -> String {
        try export(FetchRequest<ManagedObject>(entityName: entityName), result: .objects, format: format, limit: limit)
    }

    /// The result of `request` (its limit replaced by `limit` when non-zero).
    public func export(_ request: FetchRequest<ManagedObject>, result: ResultType, format: Format, limit: Int = 0) throws -> String {
        try context.performAndWait {
            guard let entity = context.model.entity(named: request.entityName) else {
                throw FetchError.unknownEntity(request.entityName, known: context.model.entities.map(\.name))
            }
            let request = request.copy()
            if limit > 0 { request.fetchLimit = limit }
            switch result {
            case .dictionary:
                let rows = try context.fetchDictionaries(request)
                let names = request.propertiesToFetch?.map(\.name) ?? entity.attributes.filter { !$0.isTransient && !$0.isCompositeElement }.map(\.name)
                let cells = rows.map { row in names.map { (name: $0, value: Self.dictionaryValue(row[$0])) } }
                switch format {
                case .json: return try json(cells.map { $0.map { ($0.name, $0.value) } })
                case .table:
                    var out = names.joined(separator: "\t") + "\n"
                    for row in cells { out += row.map { Self.cell($0.value) }.joined(separator: "\t") + "\n" }
                    return out + "(\(rows.count) row\(rows.count == 1 ? "" : "s"))\n"
                }
            case .count:
                let count = try context.count(for: request)
                return format == .json ? "{\"count\": \(count)}\n" : "\(count)\n"
            case .ids:
                let ids = try context.fetch(request).map(\.objectID.uriString)
                if format == .table { return ids.joined(separator: "\n") + (ids.isEmpty ? "" : "\n") + "(\(ids.count) object\(ids.count == 1 ? "" : "s"))\n" }
                return "[\n" + ids.map { "  " + Self.quoted($0) }.joined(separator: ",\n") + (ids.isEmpty ? "" : "\n") + "]\n"
            case .objects:
                request.returnsObjectsAsFaults = false
                let objects = try context.fetch(request)
                let properties = propertyUnion(entity)
                let rows = objects.map { object in row(object, properties: properties) }
                switch format {
                case .json: return try json(rows)
                case .table: return table(rows, properties: properties)
                }
            }
        }
    }

    private static func dictionaryValue(_ value: Any?) -> Any {
        if let id = value as? ManagedObjectID { return id.uriString }
        return jsonValue(value)
    }

    private static func quoted(_ s: String) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8), as: UTF8.self).dropFirst().dropLast().description
    }

    private func propertyUnion(_ entity: EntityDescription) -> [PropertyDescription] {
        var seen: Set<String> = []
        // A composite's elements are shown inside its value, not again on their own.
        return entity.selfAndDescendants.flatMap(\.properties).filter {
            !(($0 as? AttributeDescription)?.isCompositeElement ?? false) && seen.insert($0.name).inserted
        }
    }

    private func row(_ object: ManagedObject, properties: [PropertyDescription]) -> [(String, Any)] {
        var row: [(String, Any)] = [("@id", object.objectID.uriString), ("@entity", object.entity.name)]
        for property in properties {
            guard object.entity.property(named: property.name) != nil else { continue }
            let value = object.value(forKey: property.name)
            if let relationship = property as? RelationshipDescription {
                if relationship.isToMany {
                    row.append((property.name, ((value as? [ManagedObject]) ?? []).map(\.objectID.uriString)))
                } else {
                    row.append((property.name, (value as? ManagedObject)?.objectID.uriString ?? NSNull()))
                }
            } else {
                row.append((property.name, Self.jsonValue(value)))
            }
        }
        return row
    }

    /// A value as the data format writes it: dates ISO 8601, binary base64, UUIDs and URIs as strings.
    static func jsonValue(_ value: Any?) -> Any {
        switch value {
        case nil: return NSNull()
        case let d as Date:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.string(from: d)
        case let d as Data: return d.base64EncodedString()
        case let u as UUID: return u.uuidString
        case let u as URL: return u.absoluteString
        case let d as Decimal: return NSDecimalNumber(decimal: d)
        case let n as Int16: return Int(n)
        case let n as Int32: return Int(n)
        case let n as Int64: return n
        case let f as Float: return Double(f)
        case let archived as ArchivedObject: return ["@class": archived.className, "@archive": archived.data.base64EncodedString()]
        case let array as [Any]: return array.map { jsonValue($0) }
        case let set as Set<AnyHashable>: return set.map { jsonValue($0.base) }.sorted { "\($0)" < "\($1)" }
        case let dictionary as [String: Any]: return dictionary.mapValues { jsonValue($0) }
        case let dictionary as [AnyHashable: Any]:
            return Dictionary(dictionary.map { ("\($0.key.base)", jsonValue($0.value)) }, uniquingKeysWith: { first, _ in first })
        case let v?: return JSONSerialization.isValidJSONObject([v]) ? v : String(describing: v)
        }
    }

    private func json(_ rows: [[(String, Any)]]) throws -> String {
        // Keys keep their order: @id, @entity, then properties as the model lists them.
        var out = "[\n"
        for (i, row) in rows.enumerated() {
            let fields = try row.map { key, value -> String in
                let encodedKey = String(decoding: try JSONSerialization.data(withJSONObject: [key], options: [.fragmentsAllowed]), as: UTF8.self).dropFirst().dropLast()
                let encodedValue = String(decoding: try JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast()
                return "\(encodedKey): \(encodedValue)"
            }
            out += "  {" + fields.joined(separator: ", ") + "}" + (i < rows.count - 1 ? ",\n" : "\n")
        }
        return out + "]\n"
    }

    private func table(_ rows: [[(String, Any)]], properties: [PropertyDescription]) -> String {
        let headers = ["@id", "@entity"] + properties.map(\.name)
        let cells: [[String]] = rows.map { row in
            let values = Dictionary(row, uniquingKeysWith: { a, _ in a })
            return headers.map { key in
                guard let value = values[key] else { return "" }
                return Self.cell(value)
            }
        }
        var widths = headers.map(\.count)
        for row in cells { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ fields: [String]) -> String {
            zip(fields, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        var out = line(headers) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in cells { out += line(row) + "\n" }
        out += "(\(rows.count) object\(rows.count == 1 ? "" : "s"))\n"
        return out
    }

    private static func cell(_ value: Any) -> String {
        let text: String
        switch value {
        case is NSNull: text = "nil"
        case let list as [String]: text = "[" + list.map(shortURI).joined(separator: ", ") + "]"
        case let s as String: text = s.hasPrefix("x-coredata://") ? shortURI(s) : s
        default: text = "\(value)"
        }
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count > 48 ? String(flat.prefix(47)) + "…" : flat
    }

    /// `Entity/p12` for a full object URI, to keep tables narrow.
    private static func shortURI(_ uri: String) -> String {
        let parts = uri.split(separator: "/")
        return parts.count >= 2 ? parts.suffix(2).joined(separator: "/") : uri
    }
}

private extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
