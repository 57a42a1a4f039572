import Foundation

extension MappingModel {
    /// Reads a mapping model Xcode compiled (`.cdm`, an `NSKeyedArchiver` archive of `NSMappingModel`): its entity
    /// mappings (source and destination entities, the policy class), and each property's value expression where it
    /// is one Faultline evaluates — `$source.<property>` for attributes and relationships, and
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "<Mapping>", $source.<relationship>)`
    /// (or Xcode's `destinationInstancesForSourceRelationshipNamed:sourceInstances:`) for relationships. A property with no expression starts empty (a policy may set it); any other expression is
    /// an error naming the mapping and the property, unless the entity mapping names a policy (the property is then
    /// the policy's).
    public init(compiledMappingModelAt url: URL) throws {
        let data: Data
        do { data = try InputFile.read(url.path) } catch { throw MigrationError(problem: "mapping model '\(url.path)': \(error)") }
        do {
            try self.init(archive: try KeyedArchive(data))
        } catch let error as CoreDataFormatError {
            throw MigrationError(problem: "mapping model '\(url.path)' is not a compiled mapping model: \(error.problem)")
        } catch let error as MigrationError {
            throw MigrationError(entity: error.entity, property: error.property, problem: "mapping model '\(url.lastPathComponent)': \(error.problem)")
        }
    }

    private init(archive: KeyedArchive) throws {
        guard let root = try archive.resolve(archive.root), try archive.className(of: root) == "NSMappingModel" else {
            throw CoreDataFormatError("the archive's root is not an NSMappingModel")
        }
        var mappings: [EntityMapping] = []
        for reference in try archive.field("NSEntityMappings", of: root).map({ try archive.elements(of: $0) }) ?? [] {
            let name = try archive.string(reference["NSMappingName"]) ?? "?"
            guard let destination = try archive.string(reference["NSDestinationEntityName"]) else {
                continue // a mapping that removes its source entity
            }
            let source = try archive.string(reference["NSSourceEntityName"])
            let policy = try archive.string(reference["NSEntityMigrationPolicyClassName"])
            func sourceProperty(_ mapping: PropertyListValue) throws -> (name: String, source: String?) {
                guard let property = try archive.string(mapping["NSDestinationPropertyName"]) else {
                    throw CoreDataFormatError("a property mapping of \(name) names no destination property")
                }
                guard let expression = try archive.resolve(mapping["NSValueExpression"]) else { return (property, nil) }
                if let key = try Self.sourceKeyPath(expression, archive: archive) { return (property, key) }
                if policy != nil { return (property, nil) }
                throw MigrationError(entity: destination, property: property,
                                     problem: "mapping \(name) computes it with an expression Faultline does not evaluate ($source.<property> and the destinationInstances… functions are); move it into a policy")
            }
            var attributes: [AttributeMapping] = []
            for mapping in try archive.field("NSAttributeMappings", of: reference).map({ try archive.elements(of: $0) }) ?? [] {
                let (property, from) = try sourceProperty(mapping)
                attributes.append(AttributeMapping(destination: property, source: from, conversion: .none))
            }
            var relationships: [RelationshipMapping] = []
            for mapping in try archive.field("NSRelationshipMappings", of: reference).map({ try archive.elements(of: $0) }) ?? [] {
                let (property, from) = try sourceProperty(mapping)
                relationships.append(RelationshipMapping(destination: property, source: from))
            }
            mappings.append(EntityMapping(name: name, source: source, destination: destination, attributes: attributes, relationships: relationships,
                                          policyClassName: policy.map { String($0.split(separator: ".").last ?? Substring($0)) }))
        }
        self.init(entityMappings: mappings, removedEntities: [])
    }

    /// The source property an expression reads: `$source.name` (a key path of one component), or the source
    /// instances of `destinationInstancesForEntityMappingNamed:sourceInstances:`.
    static func sourceKeyPath(_ expression: PropertyListValue, archive: KeyedArchive) throws -> String? {
        let arguments = try archive.field("NSArguments", of: expression).map { try archive.elements(of: $0) } ?? []
        let selector = try archive.string(expression["NSSelectorName"])
        switch try archive.className(of: expression) {
        case "NSVariableExpression":
            return try archive.string(expression["NSVariable"]) == "source" ? MappingModel.sourceObject : nil
        case "NSKeyPathExpression":
            guard selector == "valueForKeyPath:", let operand = try archive.field("NSOperand", of: expression),
                  try archive.string(operand["NSVariable"]) == "source", arguments.count == 1,
                  let path = try archive.string(arguments[0]["NSKeyPath"]), !path.contains(".") else { return nil }
            return path
        case "NSFunctionExpression":
            let selectors = ["destinationInstancesForEntityMappingNamed:sourceInstances:", "destinationInstancesForSourceRelationshipNamed:sourceInstances:"]
            guard let selector, selectors.contains(selector), arguments.count == 2 else { return nil }
            return try sourceKeyPath(arguments[1], archive: archive)
        default:
            return nil
        }
    }

    /// Whether the mapping fits a step from `source` to `destination`: its entities and the properties it writes are
    /// theirs, and it maps every entity of the destination. A mapping serves the first step it fits.
    func fits(from source: ManagedObjectModel, to destination: ManagedObjectModel) -> Bool {
        entityMappings.allSatisfy { mapping in
            guard let to = destination.entity(named: mapping.destination) else { return false }
            guard mapping.source.map({ source.entity(named: $0) != nil }) ?? true else { return false }
            // The properties it writes are the new version's (a generated `$source.<name>` may find no source one).
            return mapping.attributes.allSatisfy { to.attribute(named: $0.destination) != nil }
                && mapping.relationships.allSatisfy { to.relationship(named: $0.destination) != nil }
        } && destination.entities.allSatisfy { entity in entityMappings.contains { $0.destination == entity.name } }
    }

    /// The mapping with what it leaves implicit filled in from the models: attribute conversions, dropped entities and
    /// properties.
    func resolved(from source: ManagedObjectModel, to destination: ManagedObjectModel) throws -> MappingModel {
        var copy = self
        for i in copy.entityMappings.indices {
            guard let to = destination.entity(named: copy.entityMappings[i].destination) else { continue }
            let from = copy.entityMappings[i].source.flatMap { source.entity(named: $0) }
            copy.entityMappings[i].attributes = try copy.entityMappings[i].attributes.map { mapping in
                guard let name = mapping.source else { return mapping }
                guard let old = from?.attribute(named: name), let new = to.attribute(named: mapping.destination) else {
                    return AttributeMapping(destination: mapping.destination, source: nil, conversion: .none)
                }
                return AttributeMapping(destination: mapping.destination, source: name, conversion: try Self.conversion(from: old, to: new, entity: to.name))
            }
            copy.entityMappings[i].relationships = copy.entityMappings[i].relationships.map { mapping in
                guard let name = mapping.source, name == MappingModel.sourceObject || from?.relationship(named: name) != nil else {
                    return RelationshipMapping(destination: mapping.destination, source: nil)
                }
                return mapping
            }
            if let from {
                let kept = Set(copy.entityMappings[i].attributes.compactMap(\.source) + copy.entityMappings[i].relationships.compactMap(\.source))
                copy.entityMappings[i].removed = from.properties.filter { $0.entity === from && !$0.isTransient && !kept.contains($0.name) }.map(\.name)
            }
        }
        let mapped = Set(copy.entityMappings.compactMap(\.source))
        copy.removedEntities = source.entities.map(\.name).filter { !mapped.contains($0) }
        return copy
    }
}
