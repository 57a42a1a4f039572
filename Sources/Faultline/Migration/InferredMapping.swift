import Foundation

extension MappingModel {
    /// The mapping Core Data's lightweight migration infers (`NSMappingModel.inferredMappingModel`): entities and
    /// properties matched by name or by the new version's `renamingIdentifier` (Xcode's Renaming ID); added ones start
    /// empty or at their default, removed ones are dropped; optionality, ordering, to-one ↔ to-many and inverses may
    /// change; attribute types may change between numbers (integer widths, Boolean, Double, Float, Decimal) and between
    /// numbers and strings. Anything else is an error naming the entity, the property and why. Whether the data fits
    /// (a NULL in a now-required attribute) is checked when the migration runs.
    ///
    /// For the source entities in `withPolicies` (a policy migrates their objects too), a change that cannot be
    /// inferred leaves the property to the policy (it starts empty) instead of failing.
    public static func inferred(from source: ManagedObjectModel, to destination: ManagedObjectModel,
                                withPolicies: Set<String> = []) throws -> MappingModel {
        var mappings: [EntityMapping] = []
        var used: Set<String> = []
        for entity in destination.entities {
            let match = source.entity(named: entity.name)
                ?? entity.renamingIdentifier.flatMap { source.entity(named: $0) }
            guard let from = match, !used.contains(from.name) else {
                mappings.append(EntityMapping(source: nil, destination: entity.name, attributes: [], relationships: []))
                continue
            }
            used.insert(from.name)
            // Objects keep their keys: an entity must stay in the hierarchy (table) its objects come from.
            if let root = mappings.first(where: { $0.source != nil && destination.entity(named: $0.destination)?.root === entity.root }),
               let otherSource = root.source.flatMap({ source.entity(named: $0) }), otherSource.root !== from.root {
                throw MigrationError(entity: entity.name, problem: "its objects come from \(from.name), in another inheritance hierarchy than \(otherSource.name)'s; merging hierarchies is not supported")
            }
            var attributes: [AttributeMapping] = []
            var relationships: [RelationshipMapping] = []
            for property in entity.properties where !property.isTransient && property.entity === entity {
                let old = from.property(named: property.name) ?? property.renamingIdentifier.flatMap { from.property(named: $0) }
                let leftToPolicy = withPolicies.contains(from.name)
                if let attribute = property as? AttributeDescription {
                    guard let oldAttribute = old as? AttributeDescription, !oldAttribute.isTransient else {
                        if old is RelationshipDescription && !leftToPolicy {
                            throw MigrationError(entity: entity.name, property: property.name, problem: "a relationship in the old version is an attribute in the new one; that needs a migration policy (EntityMigrationPolicy) for the entity")
                        }
                        attributes.append(AttributeMapping(destination: attribute.name, source: nil, conversion: .none))
                        continue
                    }
                    do {
                        attributes.append(AttributeMapping(destination: attribute.name, source: oldAttribute.name,
                                                           conversion: try conversion(from: oldAttribute, to: attribute, entity: entity.name)))
                    } catch where leftToPolicy {
                        attributes.append(AttributeMapping(destination: attribute.name, source: nil, conversion: .none))
                    }
                } else if let relationship = property as? RelationshipDescription {
                    guard let oldRelationship = old as? RelationshipDescription, !oldRelationship.isTransient else {
                        if old is AttributeDescription && !leftToPolicy {
                            throw MigrationError(entity: entity.name, property: property.name, problem: "an attribute in the old version is a relationship in the new one; that needs a migration policy (EntityMigrationPolicy) for the entity")
                        }
                        relationships.append(RelationshipMapping(destination: relationship.name, source: nil))
                        continue
                    }
                    let oldDestination = oldRelationship.destination!
                    let newDestination = relationship.destination!
                    let mapsThere = newDestination.name == oldDestination.name || newDestination.renamingIdentifier == oldDestination.name
                        || newDestination.selfAndDescendants.contains { $0.name == oldDestination.name || $0.renamingIdentifier == oldDestination.name }
                    guard mapsThere else {
                        if leftToPolicy {
                            relationships.append(RelationshipMapping(destination: relationship.name, source: nil))
                            continue
                        }
                        throw MigrationError(entity: entity.name, property: relationship.name,
                                             problem: "it led to \(oldDestination.name) and now leads to \(newDestination.name); changing a relationship's destination needs a mapping model")
                    }
                    relationships.append(RelationshipMapping(destination: relationship.name, source: oldRelationship.name))
                }
            }
            mappings.append(EntityMapping(source: from.name, destination: entity.name, attributes: attributes, relationships: relationships))
        }
        // Attributes and relationships an entity inherits are mapped with the entity that declares them; each entity
        // mapping lists its own and its ancestors' (the rows of every entity are copied one entity at a time).
        for i in mappings.indices {
            guard let entity = destination.entity(named: mappings[i].destination), let parent = entity.superentity else { continue }
            var ancestor: EntityDescription? = parent
            while let current = ancestor {
                if let inherited = mappings.first(where: { $0.destination == current.name }) {
                    if inherited.source == nil && mappings[i].source != nil {
                        // A new parent: its properties start empty in the child's rows.
                        mappings[i].attributes += current.attributes.filter { !$0.isTransient && $0.entity === current }
                            .map { AttributeMapping(destination: $0.name, source: nil, conversion: .none) }
                        mappings[i].relationships += current.relationships.filter { !$0.isTransient && $0.entity === current }
                            .map { RelationshipMapping(destination: $0.name, source: nil) }
                    } else if let source = mappings[i].source.flatMap({ source.entity(named: $0) }) {
                        // Inherited properties come from the child's own source entity (which has them, or not).
                        for attribute in current.attributes where !attribute.isTransient && attribute.entity === current {
                            let old = source.property(named: attribute.name) ?? attribute.renamingIdentifier.flatMap { source.property(named: $0) }
                            if let oldAttribute = old as? AttributeDescription, !oldAttribute.isTransient {
                                mappings[i].attributes.append(AttributeMapping(destination: attribute.name, source: oldAttribute.name,
                                                                              conversion: try conversion(from: oldAttribute, to: attribute, entity: entity.name)))
                            } else {
                                mappings[i].attributes.append(AttributeMapping(destination: attribute.name, source: nil, conversion: .none))
                            }
                        }
                        for relationship in current.relationships where !relationship.isTransient && relationship.entity === current {
                            let old = source.property(named: relationship.name) ?? relationship.renamingIdentifier.flatMap { source.property(named: $0) }
                            mappings[i].relationships.append(RelationshipMapping(destination: relationship.name, source: (old as? RelationshipDescription)?.name))
                        }
                    }
                }
                ancestor = current.superentity
            }
        }
        for i in mappings.indices {
            guard let from = mappings[i].source.flatMap({ source.entity(named: $0) }) else { continue }
            let kept = Set(mappings[i].attributes.compactMap(\.source) + mappings[i].relationships.compactMap(\.source))
            mappings[i].removed = from.properties.filter { $0.entity === from && !$0.isTransient && !kept.contains($0.name) }.map(\.name)
        }
        let removed = source.entities.map(\.name).filter { !used.contains($0) }
        return MappingModel(entityMappings: mappings, removedEntities: removed)
    }

    static func conversion(from old: AttributeDescription, to new: AttributeDescription, entity: String) throws -> Conversion {
        if old.type == new.type { return .none }
        let numbers: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean, .double, .float, .decimal]
        if numbers.contains(old.type) && numbers.contains(new.type) { return .number }
        if numbers.contains(old.type) && new.type == .string { return .toString }
        if old.type == .string && numbers.contains(new.type) { return .fromString }
        if (old.type == .string && new.type == .uri) || (old.type == .uri && new.type == .string) { return .none }
        throw MigrationError(entity: entity, property: new.name,
                             problem: "its type changes from \(old.type.rawValue) to \(new.type.rawValue), which a lightweight migration cannot convert; that needs a migration policy (EntityMigrationPolicy) for the entity")
    }
}
