import CSQLite
import Foundation

extension ManagedObjectModel {
    /// Reads a compiled model: an `NSKeyedArchiver` archive of `NSManagedObjectModel`, as Xcode writes it into a
    /// `.mom` file and Core Data caches it in a store's `Z_MODELCACHE` (see docs/store-format.md).
    public convenience init(compiledModel data: Data, source: String) throws {
        let entities: [EntityDescription]
        let identifiers: [String]
        let skipped: [(entity: String, property: String, problem: String)]
        do {
            let reader = CompiledModelReader(archive: try KeyedArchive(data))
            entities = try reader.entities()
            identifiers = try reader.versionIdentifiers()
            skipped = reader.skippedFetchedProperties
        } catch let error as CoreDataFormatError {
            throw ModelError(source: source, problem: "not a compiled Core Data model: \(error.problem)")
        }
        try self.init(entities: entities, source: source)
        if !identifiers.isEmpty { versionIdentifiers = identifiers }
        for (entity, property, problem) in skipped {
            warnings.append(ModelError(source: source, entity: entity, property: property,
                                       problem: "the fetched property is left out: \(problem)"))
        }
    }

    /// The model a Core Data store carries in its `Z_MODELCACHE` table (raw deflate of a compiled model); nil when
    /// the store has none (Core Data before 2016 wrote none). Opens the store read-only.
    public static func cachedInStore(at url: URL) throws -> ManagedObjectModel? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError.noSuchStore(path: path) }
        let connection = try ReadOnlyOpening(path: path).connect(reportingAs: path)
        let compressed: Data
        do {
            let table = try connection.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'Z_MODELCACHE'")
            guard try table.step(), table.int64(at: 0) == 1 else { return nil }
            let row = try connection.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE")
            guard try row.step(), !row.isNull(at: 0) else { return nil }
            compressed = row.data(at: 0)
        } catch let error as SQLiteError {
            if error.primaryCode == SQLITE_NOTADB || error.primaryCode == SQLITE_CORRUPT { throw StoreError.notADatabase(path: path, detail: error.message) }
            throw StoreError.sqlite(path: path, error: error)
        }
        let source = "\(path) (Z_MODELCACHE)"
        let archive: Data
        do {
            archive = try RawDeflate.inflate(compressed)
        } catch let error as CoreDataFormatError {
            throw ModelError(source: source, problem: "the cached model cannot be inflated: \(error.problem)")
        }
        return try ManagedObjectModel(compiledModel: archive, source: source)
    }
}

/// Turns the archived `NSEntityDescription`s, `NSAttributeDescription`s and `NSRelationshipDescription`s of a
/// compiled model into Faultline's descriptions.
private final class CompiledModelReader {
    let archive: KeyedArchive
    /// Fetched properties the archive has and this reader cannot read exactly (entity, property, why).
    var skippedFetchedProperties: [(entity: String, property: String, problem: String)] = []

    init(archive: KeyedArchive) { self.archive = archive }

    func entities() throws -> [EntityDescription] {
        guard let model = try archive.resolve(archive.root), try archive.className(of: model) == "NSManagedObjectModel" else {
            throw CoreDataFormatError("the archive's root is not an NSManagedObjectModel")
        }
        guard let entitiesObject = try archive.field("NSEntities", of: model) else { return [] }
        var result: [EntityDescription] = []
        for reference in try references(inCollection: entitiesObject) {
            result.append(try entity(reference))
        }
        return result
    }

    /// `NSVersionIdentifiers` (a set of strings).
    func versionIdentifiers() throws -> [String] {
        guard let model = try archive.resolve(archive.root), let set = try archive.field("NSVersionIdentifiers", of: model) else { return [] }
        return try archive.elements(of: set).compactMap { try archive.string($0) }.sorted()
    }

    /// The (unresolved) members of a collection: an `NSKnownKeysDictionary1`'s values, a dictionary's objects, an
    /// array's or set's objects.
    private func references(inCollection object: PropertyListValue) throws -> [PropertyListValue] {
        if let values = try archive.field("values", of: object) { return values["NS.objects"]?.elements ?? [] }
        return object["NS.objects"]?.elements ?? []
    }

    private func name(_ object: PropertyListValue, key: String) throws -> String {
        guard let name = try archive.string(object[key]), !name.isEmpty else {
            throw CoreDataFormatError("an \(try archive.className(of: object) ?? "object") has no \(key)")
        }
        return name
    }

    private func entity(_ reference: PropertyListValue) throws -> EntityDescription {
        guard let object = try archive.resolve(reference), try archive.className(of: object) == "NSEntityDescription" else {
            throw CoreDataFormatError("NSEntities holds something that is not an NSEntityDescription")
        }
        let entityName = try name(object, key: "NSEntityName")
        let parent = try archive.resolve(object["NSSuperentity"]).map { try name($0, key: "NSEntityName") }
        var properties: [PropertyDescription] = []
        var fetchedProperties: [FetchedPropertyDescription] = []
        // A sub-entity's list repeats its parent's properties (as copies naming the sub-entity).
        var inherited: Set<String> = []
        if let parentObject = try archive.resolve(object["NSSuperentity"]) { inherited = try propertyNames(of: parentObject) }
        if let list = try archive.field("NSProperties", of: object) {
            for member in try references(inCollection: list) {
                guard let property = try archive.resolve(member) else { continue }
                guard !inherited.contains(try name(property, key: "NSPropertyName")) else { continue }
                switch try archive.className(of: property) {
                // A derived attribute is stored like any other (Core Data computes it when saving).
                case "NSAttributeDescription", "NSDerivedAttributeDescription", "NSCompositeAttributeDescription":
                    properties.append(try attribute(property, entity: entityName))
                case "NSRelationshipDescription": properties.append(try relationship(property, entity: entityName))
                case "NSFetchedPropertyDescription":
                    let propertyName = try name(property, key: "NSPropertyName")
                    do {
                        fetchedProperties.append(try fetchedProperty(property, name: propertyName))
                    } catch let error as CoreDataFormatError {
                        skippedFetchedProperties.append((entityName, propertyName, error.problem))
                    }
                default: continue // derived-expression properties have no column
                }
            }
        }
        properties.sort { $0.name < $1.name }
        fetchedProperties.sort { $0.name < $1.name }
        var fetchIndexes: [FetchIndexDescription] = []
        var compound: [[String]] = []
        if let indexes = try archive.field("NSFetchIndexDescriptions", of: object) {
            for index in try archive.elements(of: indexes) { fetchIndexes.append(try fetchIndex(index)) }
        } else if let indexes = try archive.field("NSCompoundIndexes", of: object) {
            for index in try archive.elements(of: indexes) { compound.append(try propertyNames(index)) }
        }
        var constraints: [[String]] = []
        if let tuples = try archive.field("NSUniqueTuples", of: object) {
            for tuple in try archive.elements(of: tuples) { constraints.append(try propertyNames(tuple)) }
        }
        let entity = EntityDescription(
            name: entityName, parent: parent, isAbstract: try archive.field("NSIsAbstract", of: object)?.boolean ?? false,
            properties: properties, compoundIndexes: compound, uniquenessConstraints: constraints, fetchIndexes: fetchIndexes,
            versionHashModifier: try archive.string(object["NSVersionHashModifier"]),
            representedClassName: try archive.string(object["NSClassNameForEntity"]),
            userInfo: try userInfo(object), fetchedProperties: fetchedProperties)
        if let renaming = try archive.string(object["NSRenamingIdentifier"]), renaming != entityName { entity.renamingIdentifier = renaming }
        return entity
    }

    /// An `NSFetchedPropertyDescription`: its request's entity, predicate (printed and parsed), sort and limit.
    private func fetchedProperty(_ object: PropertyListValue, name propertyName: String) throws -> FetchedPropertyDescription {
        let request = try archive.field("NSFetchRequest", of: object)
        var destination = try archive.string(object["_NSFetchRequestEntityName"])
        if destination == nil, let request, let described = try archive.field("NSEntity", of: request) {
            destination = try name(described, key: "NSEntityName")
        }
        guard let destination, !destination.isEmpty else { throw CoreDataFormatError("its fetch request names no entity") }
        var predicate: ObjectPredicate? = nil
        var sorts: [FetchSortDescriptor] = []
        var limit = 0
        if let request {
            let printer = ArchivedPredicate(archive: archive)
            if let archived = try archive.field("NSPredicate", of: request) {
                let text = try printer.format(archived)
                do {
                    predicate = try ObjectPredicate(parsing: text)
                } catch {
                    throw CoreDataFormatError("its predicate \(text) does not parse: \(error)")
                }
            }
            if let list = try archive.field("NSSortDescriptors", of: request) {
                sorts = try archive.elements(of: list).map { try printer.sortDescriptor($0) }
            }
            limit = Int(clamping: max(0, request["NSFetchLimit"]?.integer ?? 0))
        }
        let property = FetchedPropertyDescription(name: propertyName, destinationEntityName: destination, predicate: predicate,
                                                  sortDescriptors: sorts, isOptional: object["NSIsOptional"]?.boolean ?? true,
                                                  userInfo: try userInfo(object))
        property.fetchLimit = limit
        return property
    }

    /// The names of every property an entity lists (its own and inherited ones).
    private func propertyNames(of entity: PropertyListValue) throws -> Set<String> {
        guard let list = try archive.field("NSProperties", of: entity) else { return [] }
        var names: Set<String> = []
        for member in try references(inCollection: list) {
            if let property = try archive.resolve(member) { names.insert(try name(property, key: "NSPropertyName")) }
        }
        return names
    }

    /// Names in an array that holds names or property descriptions.
    private func propertyNames(_ list: PropertyListValue) throws -> [String] {
        try archive.elements(of: list).map { element in
            if let text = try archive.string(element) { return text }
            return try name(element, key: "NSPropertyName")
        }
    }

    private func fetchIndex(_ object: PropertyListValue) throws -> FetchIndexDescription {
        var elements: [FetchIndexDescription.Element] = []
        if let list = try archive.field("NSIndexElements", of: object) {
            for element in try archive.elements(of: list) {
                let property: String
                if let text = try archive.string(element["NSPropertyName"]) {
                    property = text
                } else if let described = try archive.field("NSProperty", of: element) {
                    property = try name(described, key: "NSPropertyName")
                } else {
                    throw CoreDataFormatError("a fetch index element names no property")
                }
                elements.append(.init(property: property, isAscending: element["NSAscending"]?.boolean ?? true,
                                      kind: element["NSFetchIndexElementType"]?.integer == 1 ? .rTree : .binary))
            }
        }
        return FetchIndexDescription(name: try name(object, key: "NSIndexName"), elements: elements)
    }

    private func userInfo(_ object: PropertyListValue) throws -> [String: String] {
        guard let info = try archive.field("NSUserInfo", of: object) else { return [:] }
        var result: [String: String] = [:]
        for (key, value) in try archive.entries(of: info) {
            guard let k = try archive.string(key) else { continue }
            result[k] = try archive.string(value) ?? "\(value)"
        }
        return result
    }

    private static let attributeTypes: [Int64: AttributeType] = [
        0: .undefined, 100: .integer16, 200: .integer32, 300: .integer64, 400: .decimal, 500: .double, 600: .float,
        700: .string, 800: .boolean, 900: .date, 1000: .binary, 1100: .uuid, 1200: .uri, 1800: .transformable, 2000: .objectID,
        2100: .composite,
    ]

    /// `NSFlagsKey` bit of Xcode's "Preserve After Deletion" (the cached models of the fixtures: it is set exactly
    /// where the Xcode source says `preserveAfterDeletion="YES"`, and the hashes agree with it).
    static let preservesAfterDeletionFlag: Int64 = 0x10

    private func attribute(_ object: PropertyListValue, entity: String, depth: Int = 0) throws -> AttributeDescription {
        let propertyName = try name(object, key: "NSPropertyName")
        let code = object["NSAttributeType"]?.integer ?? 0
        guard let type = Self.attributeTypes[code] else {
            throw CoreDataFormatError("attribute \(entity).\(propertyName) has attribute type \(code), which Faultline does not know")
        }
        let attribute = AttributeDescription(
            name: propertyName, type: type,
            isOptional: object["NSIsOptional"]?.boolean ?? false,
            isTransient: object["NSIsTransient"]?.boolean ?? false,
            isIndexed: object["NSIsIndexed"]?.boolean ?? false,
            allowsExternalBinaryDataStorage: object["NSAllowsExternalBinaryDataStorage"]?.boolean ?? false,
            valueTransformerName: try archive.string(object["NSValueTransformerName"]),
            userInfo: try userInfo(object))
        attribute.defaultValue = try defaultValue(object["NSDefaultValue"], type: type)
        attribute.preservesValueInHistoryOnDeletion = (object["NSFlagsKey"]?.integer ?? 0) & Self.preservesAfterDeletionFlag != 0
        if let derivation = try archive.field("NSDerivationExpression", of: object) {
            attribute.derivationExpression = try ExpressionFormat(archive: archive).format(derivation)
            if let filter = try archive.field("NSFilteringPredicate", of: object), case .dictionary = filter {
                // One Faultline cannot print makes the hash differ, which `info` reports; the model still loads.
                attribute.derivationFilter = (try? ExpressionFormat(archive: archive).formatPredicate(filter)) ?? "?"
            }
        }
        if type == .composite {
            // SwiftData's Codable structs and enums: the elements are attributes (or composites) of their own.
            guard depth < Limits.compositeDepth else {
                throw CoreDataFormatError("attribute \(entity).\(propertyName) nests composites more than \(Limits.compositeDepth) deep")
            }
            if let list = try archive.field("NSCompositeElements", of: object) {
                for element in try archive.elements(of: list) {
                    attribute.elements.append(try self.attribute(element, entity: entity, depth: depth + 1))
                }
            }
        }
        if let renaming = try archive.string(object["NSRenamingIdentifier"]), renaming != propertyName { attribute.renamingIdentifier = renaming }
        return attribute
    }

    /// The default value in the form the model builder takes for `type`; nil when there is none or it does not fit.
    private func defaultValue(_ reference: PropertyListValue?, type: AttributeType) throws -> (any Sendable)? {
        guard let value = try archive.resolve(reference) else { return nil }
        switch (type, value) {
        case (.integer16, .integer(let n)), (.integer32, .integer(let n)), (.integer64, .integer(let n)): return n
        case (.integer16, .boolean(let b)), (.integer32, .boolean(let b)), (.integer64, .boolean(let b)): return Int64(b ? 1 : 0)
        case (.boolean, .boolean(let b)): return b
        case (.boolean, .integer(let n)): return n != 0
        case (.double, .real(let d)), (.float, .real(let d)): return d
        case (.double, .integer(let n)), (.float, .integer(let n)): return Double(n)
        case (.decimal, .real(let d)): return Decimal(d)
        case (.decimal, .integer(let n)): return Decimal(n)
        case (.string, _), (.uri, _): return try archive.string(value)
        case (.date, _):
            if case .real(let seconds)? = value["NS.time"] { return Date(timeIntervalSinceReferenceDate: seconds) }
            if case .date(let seconds) = value { return Date(timeIntervalSinceReferenceDate: seconds) }
            return nil
        default: return nil
        }
    }

    private func relationship(_ object: PropertyListValue, entity: String) throws -> RelationshipDescription {
        let propertyName = try name(object, key: "NSPropertyName")
        let destination: String
        if let text = try archive.string(object["_NSDestinationEntityName"]) {
            destination = text
        } else if let described = try archive.field("NSDestinationEntity", of: object) {
            destination = try name(described, key: "NSEntityName")
        } else {
            throw CoreDataFormatError("relationship \(entity).\(propertyName) has no destination entity")
        }
        var inverse = try archive.string(object["_NSInverseRelationshipName"])
        if inverse == nil, let described = try archive.field("NSInverseRelationship", of: object) {
            inverse = try name(described, key: "NSPropertyName")
        }
        let maxCount = Int(clamping: object["NSMaxCount"]?.integer ?? 0)
        let isToMany = maxCount != 1
        let rules: [Int64: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
        let relationship = RelationshipDescription(
            name: propertyName, destination: destination, inverse: inverse, isToMany: isToMany,
            isOrdered: object["NSIsOrdered"]?.boolean ?? false,
            deleteRule: rules[object["NSDeleteRule"]?.integer ?? 1] ?? .nullify,
            isOptional: object["NSIsOptional"]?.boolean ?? false,
            isTransient: object["NSIsTransient"]?.boolean ?? false,
            minCount: Int(clamping: max(0, object["NSMinCount"]?.integer ?? 0)), maxCount: isToMany ? max(0, maxCount) : 1,
            userInfo: try userInfo(object))
        if let renaming = try archive.string(object["NSRenamingIdentifier"]), renaming != propertyName { relationship.renamingIdentifier = renaming }
        if let archived = object["NSMaxCount"]?.integer { relationship.archivedMaxCount = Int(truncatingIfNeeded: archived) }
        return relationship
    }
}

/// How many archived nodes one printing may visit (`Limits.archivedObjectVisits`), counting a shared node once per
/// reference to it.
final class VisitBudget {
    private var remaining = Limits.archivedObjectVisits

    func visit() throws {
        remaining -= 1
        guard remaining >= 0 else {
            throw CoreDataFormatError("an archived expression or predicate visits more than \(Limits.archivedObjectVisits) nodes (Limits.archivedObjectVisits)")
        }
    }
}

/// An archived `NSExpression` in its predicate format, as Core Data prints it (`count:(pages)`, `now()`,
/// `author.name`): a derived attribute's version hash is made of this text.
struct ExpressionFormat {
    let archive: KeyedArchive
    /// Archived expressions nest; deeper than this is refused.
    static let depth = 64
    /// Nodes visited so far, shared by every printer of one expression or predicate: an archive may reference one
    /// node from many places, so depth alone does not bound the work (two references a level, 64 levels: 2^64).
    var visits = VisitBudget()

    func format(_ object: PropertyListValue, depth: Int = 0) throws -> String {
        guard depth < Self.depth else { throw CoreDataFormatError("an archived expression nests more than \(Self.depth) deep") }
        try visits.visit()
        switch object["NSExpressionType"]?.integer ?? -1 {
        case 0: // constant
            guard let value = try archive.field("NSConstantValue", of: object) else { return "nil" }
            if let text = try archive.string(value) { return "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            switch value {
            case .integer(let n): return String(n)
            case .real(let d): return String(d)
            case .boolean(let b): return b ? "1" : "0"
            default: throw CoreDataFormatError("an archived expression holds a constant Faultline cannot print")
            }
        case 1: return "SELF"
        case 2: return "$" + (try archive.string(object["NSVariable"]) ?? "")
        case 3: // key path: valueForKey: with a key-path specifier, from SELF or from another expression
            let arguments = try archive.field("NSArguments", of: object).map { try archive.elements(of: $0) } ?? []
            guard let key = try arguments.first.flatMap({ try archive.string($0["NSKeyPath"]) }) else {
                throw CoreDataFormatError("an archived key-path expression names no key path")
            }
            guard let operand = try archive.field("NSOperand", of: object), operand["NSExpressionType"]?.integer != 1 else { return key }
            return try format(operand, depth: depth + 1) + "." + key
        case 4: // function
            guard let selector = try archive.string(object["NSSelectorName"]) else {
                throw CoreDataFormatError("an archived function expression names no function")
            }
            let arguments = try archive.field("NSArguments", of: object).map { try archive.elements(of: $0) } ?? []
            return selector + "(" + (try arguments.map { try format($0, depth: depth + 1) }).joined(separator: ", ") + ")"
        case 10: return try archive.string(object["NSKeyPath"]) ?? ""
        default:
            throw CoreDataFormatError("an archived expression of type \(object["NSExpressionType"]?.integer ?? -1) Faultline cannot print")
        }
    }

    /// A filtering predicate's format, when it is a plain comparison of two expressions; otherwise an error.
    func formatPredicate(_ object: PropertyListValue) throws -> String {
        guard let left = try archive.field("NSLeftExpression", of: object), let right = try archive.field("NSRightExpression", of: object) else {
            throw CoreDataFormatError("an archived filtering predicate Faultline cannot print")
        }
        let operators: [Int64: String] = [0: "<", 1: "<=", 2: ">", 3: ">=", 4: "==", 5: "!="]
        guard let op = operators[object["NSPredicateOperatorType"]?.integer ?? -1] else {
            throw CoreDataFormatError("an archived filtering predicate's operator Faultline cannot print")
        }
        return "\(try format(left)) \(op) \(try format(right))"
    }
}
