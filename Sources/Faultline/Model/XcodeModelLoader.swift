import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

extension ManagedObjectModel {
    /// Builds a model from the `contents` XML of an Xcode `.xcdatamodel`.
    public convenience init(xcodeContents data: Data, source: String? = nil) throws {
        do { try XcodeModelPreflight.check(data) } catch { throw ModelError(source: source, problem: error.problem) }
        let reader = XcodeModelReader(source: source)
        let parser = XMLParser(data: data)
        parser.delegate = reader
        parser.shouldProcessNamespaces = false
        let ok = parser.parse()
        if let error = reader.error { throw error }
        guard ok else {
            let message = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "unknown error"
            throw ModelError(source: source, problem: "malformed XML at line \(parser.lineNumber), column \(parser.columnNumber): \(message)")
        }
        if let open = reader.openElements.last {
            throw ModelError(source: source, problem: "malformed XML: the document ends inside <\(open)> (line \(parser.lineNumber))")
        }
        guard reader.sawModel else {
            throw ModelError(source: source, problem: "not an Xcode data model: no <model> element")
        }
        try self.init(entities: reader.entities, fetchRequestTemplates: reader.templates,
                      configurations: reader.configurations, source: source)
        warnings = reader.warnings + warnings
        if let identifier = reader.versionIdentifier { versionIdentifiers = [identifier] }
    }
}

/// SAX reader for Xcode model XML (old and new styles).
final class XcodeModelReader: NSObject, XMLParserDelegate {
    let source: String?
    var entities: [EntityDescription] = []
    var templates: [String: (entity: String, predicate: String?)] = [:]
    var configurations: [String: [String]] = [:]
    var error: ModelError?
    var warnings: [ModelError] = []
    var sawModel = false
    var versionIdentifier: String?

    private struct PendingEntity {
        var attributes: [String: String]
        var properties: [PropertyDescription] = []
        var compoundIndexes: [[String]] = []
        var uniqueness: [[String]] = []
        var fetchIndexes: [FetchIndexDescription] = []
        var userInfo: [String: String] = [:]
        var fetchedProperties: [FetchedPropertyDescription] = []
    }
    /// The fetched property being read: its attributes, its request's entity and predicate, its user info.
    private var fetched: (attributes: [String: String], entity: String?, predicate: String?, userInfo: [String: String])?
    private var entity: PendingEntity?
    private var currentProperty: PropertyDescription?
    private var currentList: [String]?
    private var currentFetchIndex: FetchIndexDescription?
    private var currentConfiguration: String?
    private var depthInFetchedProperty = 0
    /// Elements opened and not yet closed, outermost first.
    private(set) var openElements: [String] = []

    init(source: String?) { self.source = source }

    private func fail(_ problem: String, entity: String? = nil, property: String? = nil, parser: XMLParser) {
        guard error == nil else { return }
        error = ModelError(source: source, entity: entity, property: property, problem: problem + " (line \(parser.lineNumber))")
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        guard error == nil else { return }
        openElements.append(element)
        if depthInFetchedProperty > 0 {
            depthInFetchedProperty += 1
            // Its request (Xcode writes `<fetchRequest entity= predicateString=>`) and its user info.
            if element == "fetchRequest" {
                fetched?.entity = attributes["entity"]
                fetched?.predicate = attributes["predicateString"]
            } else if element == "entry", let key = attributes["key"] {
                fetched?.userInfo[key] = attributes["value"] ?? ""
            }
            return
        }
        switch element {
        case "model":
            sawModel = true
            if let identifier = attributes["userDefinedModelVersionIdentifier"] { versionIdentifier = identifier }
        case "entity":
            guard let name = attributes["name"], !name.isEmpty else { return fail("an <entity> has no name", parser: parser) }
            guard entity == nil else { return fail("entity '\(name)' is nested inside another <entity>", entity: name, parser: parser) }
            entity = PendingEntity(attributes: attributes)
        case "attribute":
            guard let entityName = entity?.attributes["name"] else { return }
            do {
                let attribute = try makeAttribute(attributes, entity: entityName)
                entity?.properties.append(attribute)
                currentProperty = attribute
            } catch let e as ModelError {
                error = e
                parser.abortParsing()
            } catch {}
        case "relationship":
            guard let entityName = entity?.attributes["name"] else { return }
            do {
                let relationship = try makeRelationship(attributes, entity: entityName)
                entity?.properties.append(relationship)
                currentProperty = relationship
            } catch let e as ModelError {
                error = e
                parser.abortParsing()
            } catch {}
        case "fetchedProperty":
            depthInFetchedProperty = 1
            fetched = (attributes, nil, nil, [:])
        case "compoundIndex", "uniquenessConstraint":
            currentList = []
        case "fetchIndex":
            currentFetchIndex = FetchIndexDescription(name: attributes["name"] ?? "", elements: [])
        case "index", "constraint":
            if let value = attributes["value"] { currentList?.append(value) }
        case "fetchIndexElement":
            if let property = attributes["property"] {
                currentFetchIndex?.elements.append(.init(property: property, isAscending: attributes["order"] != "descending",
                                                         kind: attributes["type"] == "RTree" ? .rTree : .binary))
            }
        case "entry":
            if let key = attributes["key"] {
                let value = attributes["value"] ?? ""
                if let property = currentProperty { property.userInfo[key] = value } else { entity?.userInfo[key] = value }
            }
        case "fetchRequest":
            if entity == nil, let name = attributes["name"], let entityName = attributes["entity"] {
                templates[name] = (entityName, attributes["predicateString"])
            }
        case "configuration":
            currentConfiguration = attributes["name"]
            if let name = currentConfiguration { configurations[name] = [] }
        case "memberEntity":
            if let configuration = currentConfiguration, let name = attributes["name"] { configurations[configuration]?.append(name) }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        guard error == nil else { return }
        openElements.removeLast()
        if depthInFetchedProperty > 0 {
            depthInFetchedProperty -= 1
            if depthInFetchedProperty == 0 { endFetchedProperty(parser) }
            return
        }
        switch element {
        case "attribute", "relationship":
            currentProperty = nil
        case "compoundIndex":
            if let list = currentList, !list.isEmpty { entity?.compoundIndexes.append(list) }
            currentList = nil
        case "fetchIndex":
            if let index = currentFetchIndex, !index.elements.isEmpty { entity?.fetchIndexes.append(index) }
            currentFetchIndex = nil
        case "uniquenessConstraint":
            if let list = currentList, !list.isEmpty { entity?.uniqueness.append(list) }
            currentList = nil
        case "configuration":
            currentConfiguration = nil
        case "entity":
            guard let pending = entity else { return }
            let a = pending.attributes
            let description = EntityDescription(
                name: a["name"]!, parent: a["parentEntity"], isAbstract: a["isAbstract"] == "YES",
                properties: pending.properties, compoundIndexes: pending.compoundIndexes,
                uniquenessConstraints: pending.uniqueness, fetchIndexes: pending.fetchIndexes, versionHashModifier: a["versionHashModifier"],
                representedClassName: a["representedClassName"], userInfo: pending.userInfo,
                fetchedProperties: pending.fetchedProperties)
            description.renamingIdentifier = a["elementID"]
            entities.append(description)
            entity = nil
        default:
            break
        }
    }

    /// Records the fetched property just read (its destination entity is required, as Xcode's editor requires it).
    private func endFetchedProperty(_ parser: XMLParser) {
        guard let pending = fetched, let entityName = entity?.attributes["name"] else { fetched = nil; return }
        fetched = nil
        let name = pending.attributes["name"] ?? ""
        guard !name.isEmpty else { return fail("a <fetchedProperty> has no name", entity: entityName, parser: parser) }
        guard let destination = pending.entity, !destination.isEmpty else {
            return fail("the fetched property has no <fetchRequest entity=…>: a fetched property needs a destination entity", entity: entityName, property: name, parser: parser)
        }
        var predicate: ObjectPredicate? = nil
        if let text = pending.predicate, !text.isEmpty {
            do {
                predicate = try ObjectPredicate(parsing: text)
            } catch {
                return fail("the fetched property's predicate: \(error)", entity: entityName, property: name, parser: parser)
            }
        }
        entity?.fetchedProperties.append(FetchedPropertyDescription(name: name, destinationEntityName: destination, predicate: predicate,
                                                                    isOptional: pending.attributes["optional"] != "NO", userInfo: pending.userInfo))
    }

    func makeAttribute(_ a: [String: String], entity: String) throws -> AttributeDescription {
        guard let name = a["name"], !name.isEmpty else { throw ModelError(source: source, entity: entity, problem: "an <attribute> has no name") }
        let typeName = a["attributeType"] ?? "Undefined"
        guard let type = AttributeType(name: typeName) else {
            throw ModelError(source: source, entity: entity, property: name, problem: "unknown attribute type '\(typeName)'")
        }
        if type == .composite {
            // How Xcode's XML names a composite's elements is not established; the compiled model has them.
            throw ModelError(source: source, entity: entity, property: name,
                             problem: "composite attributes in Xcode's XML are not read yet; give the compiled model (.momd) or a store that caches it")
        }
        func number(_ key: String) throws -> Double? {
            guard let text = a[key], !text.isEmpty else { return nil }
            guard let value = Double(text) else {
                throw ModelError(source: source, entity: entity, property: name, problem: "\(key) '\(text)' is not a number")
            }
            return value
        }
        let isDate = type == .date
        let attribute = AttributeDescription(
            name: name, type: type,
            isOptional: a["optional"] == "YES",
            isTransient: a["transient"] == "YES",
            isIndexed: a["indexed"] == "YES",
            allowsExternalBinaryDataStorage: a["allowsExternalBinaryDataStorage"] == "YES",
            valueTransformerName: a["valueTransformerName"],
            minValue: try isDate ? number("minDateTimeInterval") : number("minValueString"),
            maxValue: try isDate ? number("maxDateTimeInterval") : number("maxValueString"),
            regularExpression: a["regularExpressionString"])
        attribute.derivationExpression = a["derivationExpression"]
        attribute.renamingIdentifier = a["elementID"]
        attribute.versionHashModifier = a["versionHashModifier"]
        attribute.preservesValueInHistoryOnDeletion = a["preserveAfterDeletion"] == "YES"
        attribute.defaultValue = try defaultValue(a, type: type, entity: entity, property: name)
        return attribute
    }

    private func defaultValue(_ a: [String: String], type: AttributeType, entity: String, property: String) throws -> (any Sendable)? {
        if type == .date, let interval = a["defaultDateTimeInterval"] {
            guard let seconds = Double(interval) else {
                throw ModelError(source: source, entity: entity, property: property, problem: "defaultDateTimeInterval '\(interval)' is not a number")
            }
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        guard let text = a["defaultValueString"] else { return nil }
        func bad() -> ModelError {
            ModelError(source: source, entity: entity, property: property, problem: "default value '\(text)' is not a valid \(type.rawValue)")
        }
        switch type {
        case .integer16, .integer32, .integer64:
            if let n = Int64(text) { return n }
            // Xcode accepts boolean words here (NSNumber parsing); real models use them.
            switch text.uppercased() {
            case "YES", "TRUE": return Int64(1)
            case "NO", "FALSE": return Int64(0)
            default: break
            }
            if let d = Double(text), let n = Int64(exactly: d) { return n }
            throw bad()
        case .double, .float:
            guard let d = Double(text) else { throw bad() }
            return d
        case .decimal:
            guard let d = Decimal(string: text) else { throw bad() }
            return d
        case .boolean:
            switch text.uppercased() {
            case "YES", "TRUE", "1": return true
            case "NO", "FALSE", "0": return false
            default:
                // Xcode reads the default as a number: "0.0" is NO, any other number YES.
                guard let d = Double(text), d.isFinite else { throw bad() }
                warnings.append(ModelError(source: source, entity: entity, property: property,
                                           problem: "Boolean default value '\(text)' read as a number, as Xcode does: \(d != 0 ? "YES" : "NO")"))
                return d != 0
            }
        case .string: return text
        case .uri: return URL(string: text)
        case .uuid:
            guard let u = UUID(uuidString: text) else {
                // Xcode compiles such a model; Core Data gives the attribute no default.
                warnings.append(ModelError(source: source, entity: entity, property: property,
                                           problem: "default value '\(text)' is not a UUID; the attribute has no default, as in Core Data"))
                return nil
            }
            return u
        case .date:
            guard let d = ISO8601.parse(text) else { throw bad() }
            return d
        case .binary, .transformable, .undefined, .objectID, .composite:
            return nil
        }
    }

    func makeRelationship(_ a: [String: String], entity: String) throws -> RelationshipDescription {
        guard let name = a["name"], !name.isEmpty else { throw ModelError(source: source, entity: entity, problem: "a <relationship> has no name") }
        guard let destination = a["destinationEntity"], !destination.isEmpty else {
            throw ModelError(source: source, entity: entity, property: name, problem: "relationship has no destinationEntity")
        }
        let ruleName = a["deletionRule"] ?? "Nullify"
        guard let rule = DeleteRule(name: ruleName) else {
            throw ModelError(source: source, entity: entity, property: name, problem: "unknown deletion rule '\(ruleName)'")
        }
        func count(_ key: String) throws -> Int? {
            guard let text = a[key] else { return nil }
            guard let n = Int(text), n >= 0 else {
                throw ModelError(source: source, entity: entity, property: name, problem: "\(key) '\(text)' is not a count")
            }
            return n
        }
        let toMany = a["toMany"] == "YES"
        var maxCount = try count("maxCount")
        if toMany, maxCount == 1 { maxCount = 0 }
        let relationship = RelationshipDescription(
            name: name, destination: destination, inverse: a["inverseName"], isToMany: toMany,
            isOrdered: a["ordered"] == "YES", deleteRule: rule, isOptional: a["optional"] == "YES",
            isTransient: a["transient"] == "YES", minCount: try count("minCount") ?? 0,
            maxCount: toMany ? maxCount : 1)
        relationship.renamingIdentifier = a["elementID"]
        relationship.versionHashModifier = a["versionHashModifier"]
        return relationship
    }
}
