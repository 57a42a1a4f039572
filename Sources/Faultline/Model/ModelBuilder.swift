import Foundation

/// Resolves and validates entity descriptions into a model: inheritance, properties, relationships, entity
/// numbers, table layout, indexes and version hashes.
struct ModelBuilder {
    /// Names of properties every managed object has: a model's property of such a name is warned of.
    static let reservedPropertyNames: Set<String> = [
        "description", "debugDescription", "hash", "class", "superclass", "self", "entity", "objectID",
        "managedObjectContext", "isFault", "isDeleted", "isInserted", "isUpdated", "hasChanges", "faultingState",
        "changedValues", "committedValues", "hasPersistentChangedValues",
    ]

    let input: [EntityDescription]
    /// What an existing store decides instead of the rules: its entity numbers and join tables.
    let layout: StoreLayout?

    init(entities: [EntityDescription], layout: StoreLayout? = nil) {
        self.input = entities
        self.layout = layout
    }

    struct Result {
        var entities: [EntityDescription]
        var tables: [TableDescription]
        var joinTables: [JoinTable]
        /// What was accepted only as Xcode accepts it.
        var warnings: [ModelError] = []
    }

    func build() throws -> Result {
        var warnings: [ModelError] = []
        var byName: [String: EntityDescription] = [:]
        for entity in input {
            guard !entity.name.isEmpty else { throw ModelError(problem: "an entity has an empty name") }
            guard isIdentifier(entity.name) else {
                throw ModelError(entity: entity.name, problem: "entity names must be letters, digits and underscores, starting with a letter")
            }
            guard byName[entity.name] == nil else { throw ModelError(entity: entity.name, problem: "duplicate entity name") }
            byName[entity.name] = entity
        }
        // Table names are the upper-cased names: they must not collide with each other or the bookkeeping tables.
        var tableOwners: [String: String] = ["Z_PRIMARYKEY": "", "Z_METADATA": "", "Z_MODELCACHE": ""]
        for entity in input {
            let table = "Z" + entity.name.uppercased()
            if let other = tableOwners[table] {
                throw ModelError(entity: entity.name, problem: other.isEmpty
                    ? "the name is reserved for the store's table \(table)"
                    : "its table \(table) would be the same as entity '\(other)''s (names differ only in case)")
            }
            tableOwners[table] = entity.name
        }
        // Inheritance.
        for entity in input {
            entity.subentities = []
            entity.superentity = nil
        }
        for entity in input {
            guard let parentName = entity.parentName else { continue }
            guard let parent = byName[parentName] else {
                throw ModelError(entity: entity.name, problem: "parent entity '\(parentName)' does not exist")
            }
            entity.superentity = parent
            parent.subentities.append(entity)
        }
        for entity in input {
            var seen: Set<String> = [entity.name]
            var current = entity.superentity
            while let c = current {
                guard seen.insert(c.name).inserted else {
                    throw ModelError(entity: entity.name, problem: "inheritance cycle through '\(c.name)'")
                }
                guard seen.count <= Limits.inheritanceDepth + 1 else {
                    throw ModelError(entity: entity.name, problem: "more than \(Limits.inheritanceDepth) levels of parent entities (Limits.inheritanceDepth)")
                }
                current = c.superentity
            }
        }
        // Entity numbers as Core Data gives them: depth-first from the roots in case-insensitive name order, each
        // entity's sub-entities right after it in the same order, so a hierarchy's numbers are contiguous. A store's
        // own numbers (Z_PRIMARYKEY) replace the rule when given; they must keep every hierarchy contiguous.
        let precedes: (EntityDescription, EntityDescription) -> Bool
        if let numbers = layout?.entityNumbers {
            precedes = { (numbers[$0.name] ?? Int.max, $0.name) < (numbers[$1.name] ?? Int.max, $1.name) }
        } else {
            precedes = Self.coreDataOrder
        }
        for entity in input { entity.subentities.sort(by: precedes) }
        var ordered: [EntityDescription] = []
        func visit(_ entity: EntityDescription) {
            ordered.append(entity)
            entity.entityNumber = ordered.count
            entity.rootNumber = entity.superentity?.rootNumber ?? Int32(ordered.count)
            entity.subentities.forEach(visit)
            entity.lastDescendantNumber = ordered.count
        }
        input.filter { $0.superentity == nil }.sorted(by: precedes).forEach(visit)
        if let numbers = layout?.entityNumbers, let odd = ordered.first(where: { numbers[$0.name] != $0.entityNumber }) {
            throw ModelError(entity: odd.name, problem: "the store numbers it \(numbers[odd.name].map(String.init) ?? "not at all") in Z_PRIMARYKEY, "
                                 + "which does not keep each entity's sub-entities right after it")
        }

        // Properties: inherited first, then declared attributes and relationships by name.
        for entity in ordered {
            var names: Set<String> = []
            for property in entity.declaredProperties {
                guard !property.name.isEmpty else { throw ModelError(entity: entity.name, problem: "a property has an empty name") }
                guard isIdentifier(property.name) else {
                    throw ModelError(entity: entity.name, property: property.name, problem: "property names must be letters, digits and underscores, starting with a letter")
                }
                guard names.insert(property.name).inserted else {
                    throw ModelError(entity: entity.name, property: property.name, problem: "duplicate property name")
                }
                if let parent = entity.superentity, parent.propertyIndex[property.name] != nil {
                    throw ModelError(entity: entity.name, property: property.name, problem: "property already declared by parent entity '\(parent.root.name == parent.name ? parent.name : parent.name)'")
                }
                if ["objectID", "entity", "self", "context"].contains(property.name) {
                    throw ModelError(entity: entity.name, property: property.name, problem: "'\(property.name)' is a reserved name")
                }
            }
            var own: [PropertyDescription] = entity.declaredProperties.sorted { lhs, rhs in
                let l = lhs is AttributeDescription ? 0 : 1, r = rhs is AttributeDescription ? 0 : 1
                return l != r ? l < r : lhs.name < rhs.name
            }
            // A composite attribute's elements become attributes of the entity, after its declared properties.
            for case let composite as AttributeDescription in own where composite.type == .composite {
                composite.entityElements = try Self.flatten(composite, path: composite.name, entity: entity.name, into: &own)
            }
            entity.properties = (entity.superentity?.properties ?? []) + own
            for property in own {
                property.entity = entity
            }
            entity.propertyIndex = [:]
            for (i, property) in entity.properties.enumerated() {
                entity.propertyIndex[property.name] = i
                if property.entity === entity { property.index = i }
            }
        }
        // Fetched properties: a name of their own, a destination that exists (Xcode's editor needs one), inherited
        // ones first.
        for entity in ordered {
            for fetched in entity.declaredFetchedProperties {
                guard isIdentifier(fetched.name) else {
                    throw ModelError(entity: entity.name, property: fetched.name, problem: "property names must be letters, digits and underscores, starting with a letter")
                }
                guard entity.propertyIndex[fetched.name] == nil, entity.superentity?.fetchedProperty(named: fetched.name) == nil,
                      entity.declaredFetchedProperties.filter({ $0.name == fetched.name }).count == 1 else {
                    throw ModelError(entity: entity.name, property: fetched.name, problem: "duplicate property name")
                }
                guard let destination = byName[fetched.destinationEntityName] else {
                    throw ModelError(entity: entity.name, property: fetched.name, problem: "the fetched property's entity '\(fetched.destinationEntityName)' does not exist")
                }
                fetched.entity = entity
                fetched.destination = destination
            }
            entity.fetchedProperties = (entity.superentity?.fetchedProperties ?? []) + entity.declaredFetchedProperties
            for (i, fetched) in entity.fetchedProperties.enumerated() where fetched.entity === entity { fetched.index = i }
        }
        // Attributes: types and defaults.
        for entity in ordered {
            for case let attribute as AttributeDescription in entity.properties where attribute.entity === entity {
                if (attribute.type == .undefined || attribute.type == .objectID) && !attribute.isTransient {
                    throw ModelError(entity: entity.name, property: attribute.name, problem: "type '\(attribute.type.rawValue)' is only allowed for transient attributes")
                }
                if let value = attribute.defaultValue {
                    do {
                        attribute.defaultSlot = try ValueCoding.slot(for: value, attribute: attribute)
                    } catch let error as ValueError {
                        throw ModelError(entity: entity.name, property: attribute.name, problem: "default value: \(error.problem)")
                    }
                }
            }
        }
        // Relationships: destinations and inverses.
        for entity in ordered {
            for case let relationship as RelationshipDescription in entity.declaredProperties {
                guard let destination = byName[relationship.destinationName] else {
                    throw ModelError(entity: entity.name, property: relationship.name, problem: "destination entity '\(relationship.destinationName)' does not exist")
                }
                relationship.destination = destination
                relationship.inverse = nil
                if relationship.minCount < 0 || (relationship.maxCount != 0 && relationship.maxCount < relationship.minCount) {
                    throw ModelError(entity: entity.name, property: relationship.name, problem: "invalid count range \(relationship.minCount)…\(relationship.maxCount)")
                }
            }
        }
        for entity in ordered {
            for case let relationship as RelationshipDescription in entity.declaredProperties {
                guard let inverseName = relationship.inverseName else { continue }
                guard let inverse = relationship.destination.relationship(named: inverseName) else {
                    throw ModelError(entity: entity.name, property: relationship.name, problem: "inverse '\(inverseName)' does not exist on '\(relationship.destination.name)'")
                }
                guard inverse.inverseName == relationship.name || inverse.inverseName == nil else {
                    throw ModelError(entity: entity.name, property: relationship.name, problem: "inverse '\(relationship.destination.name).\(inverseName)' points back to '\(inverse.inverseName ?? "")', not to '\(relationship.name)'")
                }
                guard entity.isKind(of: inverse.destination) || inverse.destination.isKind(of: entity) else {
                    throw ModelError(entity: entity.name, property: relationship.name, problem: "inverse '\(relationship.destination.name).\(inverseName)' has destination '\(inverse.destination.name)', not '\(entity.name)'")
                }
                if relationship.isTransient != inverse.isTransient {
                    throw ModelError(entity: entity.name, property: relationship.name, problem: "a relationship and its inverse must both be transient or both stored")
                }
                relationship.inverse = inverse
            }
        }
        // A to-many without an inverse keeps its links as Core Data does: in a column of the destination's table,
        // `Z<number of the relationship's entity><NAME>` (an ordered one keeps a join table).
        var keptInDestination: [ObjectIdentifier: [RelationshipDescription]] = [:]
        for entity in ordered {
            for case let relationship as RelationshipDescription in entity.declaredProperties
                where relationship.isToMany && relationship.inverse == nil && !relationship.isOrdered && !relationship.isTransient
                && !(layout?.inverselessJoinTables.contains(Self.qualifiedName(relationship)) ?? false) {
                keptInDestination[ObjectIdentifier(relationship.destination), default: []].append(relationship)
            }
        }
        var keptColumns: [ObjectIdentifier: String] = [:]
        // Layout, tables and columns.
        var tables: [TableDescription] = []
        var joinTables: [JoinTable] = []
        for root in ordered where root.superentity == nil {
            let table = TableDescription(name: "Z" + root.name.uppercased())
            table.root = root
            tables.append(table)
            var used: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            func addColumn(_ base: String, type: String) -> String {
                var name = base
                var n = 1
                while used.contains(name) { name = base + String(n); n += 1 }
                used.insert(name)
                table.columns.append(ColumnDescription(name: name, type: type))
                return name
            }
            // Core Data's column order: grouped by type (integers and to-one keys, then reals, dates, strings, data);
            // within a group the root's columns, then each sub-entity's; within an entity attributes, then
            // relationships (a to-one's entity column right after it), then the `Z_FOK_` order columns of the
            // to-ones whose inverse is ordered, each by name (real stores; coredata-formats.md §3). Kinds: 0
            // attribute, 1 to-one, 2 order column, 3 a to-many without inverse kept here.
            // A composite's elements sit where the composite's name puts them, in the composite's order.
            let hierarchy = root.selfAndDescendants
            var stored: [(group: Int, entity: Int, kind: Int, name: String, element: Int, property: PropertyDescription)] = []
            for (position, entity) in hierarchy.enumerated() {
                entity.table = table
                var elementPosition: [ObjectIdentifier: (name: String, index: Int)] = [:]
                for case let composite as AttributeDescription in entity.properties where composite.entity === entity && composite.type == .composite {
                    var index = 0
                    func number(_ elements: [AttributeDescription]) {
                        for element in elements {
                            elementPosition[ObjectIdentifier(element)] = (composite.name, index)
                            index += 1
                            number(element.entityElements)
                        }
                    }
                    if composite.elementName == nil { number(composite.entityElements) }
                }
                for property in entity.properties where property.entity === entity {
                    property.columnName = nil
                    (property as? RelationshipDescription)?.entityColumnName = nil
                    (property as? RelationshipDescription)?.orderColumnName = nil
                    if property.isTransient || ((property as? RelationshipDescription)?.isToMany ?? false) { continue }
                    if (property as? AttributeDescription)?.type == .composite { continue }
                    let place = elementPosition[ObjectIdentifier(property)] ?? (property.name, 0)
                    stored.append((Self.columnGroup(property), position, property is AttributeDescription ? 0 : 1, place.name, place.index, property))
                    if let relationship = property as? RelationshipDescription, relationship.inverse?.isOrdered == true {
                        stored.append((Self.columnGroup(property), position, 2, relationship.name, 0, relationship))
                    }
                }
                for relationship in keptInDestination[ObjectIdentifier(entity)] ?? [] {
                    let name = "Z\(relationship.entity.entityNumber)\(relationship.name.uppercased())"
                    stored.append((0, position, 3, name, 0, relationship))
                }
            }
            stored.sort { ($0.group, $0.entity, $0.kind) != ($1.group, $1.entity, $1.kind)
                ? ($0.group, $0.entity, $0.kind) < ($1.group, $1.entity, $1.kind)
                : ($0.name, $0.element) < ($1.name, $1.element) }
            for (_, _, kind, name, _, property) in stored {
                if kind == 3 {
                    keptColumns[ObjectIdentifier(property)] = addColumn(name, type: "INTEGER")
                } else if kind == 2, let relationship = property as? RelationshipDescription {
                    relationship.orderColumnName = addColumn("Z_FOK_" + relationship.name.uppercased(), type: "INTEGER")
                } else if let attribute = property as? AttributeDescription {
                    attribute.columnName = addColumn("Z" + (attribute.elementName ?? attribute.name).uppercased(), type: attribute.type.columnType)
                } else if let relationship = property as? RelationshipDescription {
                    relationship.columnName = addColumn("Z" + relationship.name.uppercased(), type: "INTEGER")
                    if !relationship.destination.subentities.isEmpty {
                        relationship.entityColumnName = addColumn("Z\(relationship.destination.entityNumber)_" + relationship.name.uppercased(), type: "INTEGER")
                    }
                }
            }
        }
        // Relationship storage (a model laid out again for a store starts afresh).
        for entity in ordered {
            for case let relationship as RelationshipDescription in entity.declaredProperties { relationship.joinTable = nil }
        }
        for entity in ordered {
            for case let relationship as RelationshipDescription in entity.declaredProperties {
                if relationship.isTransient { relationship.storage = .transient; continue }
                if !relationship.isToMany { relationship.storage = .toOneColumn; continue }
                if let inverse = relationship.inverse, !inverse.isToMany {
                    relationship.storage = .inverseColumn
                    continue
                }
                relationship.storage = .joinTable
                if let column = keptColumns[ObjectIdentifier(relationship)] {
                    relationship.joinTable = JoinTable(name: relationship.destination.table.name, sourceColumn: column, destinationColumn: "Z_PK",
                                                       orderColumn: nil, isOwner: true, isDestinationTable: true)
                    continue
                }
                if relationship.joinTable != nil, relationship.inverse != nil { continue }
                // The side Core Data visits first owns the table and names it: between two entities, the one whose
                // name comes first case-insensitively; between an entity and itself, the relationship whose name sorts
                // last (both known real stores; Core Data's own order there is a hash table's, so this is best-effort).
                // A store's own table decides where one exists (`StoreLayout`).
                let inverse = relationship.inverse
                let ownerIsSelf = inverse.map { inverse in
                    if let owner = layout?.joinTableOwners[JoinTablePair(relationship, inverse)] { return owner == Self.qualifiedName(relationship) }
                    if inverse.entity === entity { return !relationship.name.utf16.lexicographicallyPrecedes(inverse.name.utf16) }
                    let (mine, theirs) = (entity.name.lowercased(), inverse.entity.name.lowercased())
                    return mine != theirs ? mine < theirs : entity.name < inverse.entity.name
                } ?? true
                let owner = ownerIsSelf ? relationship : inverse!
                let other = ownerIsSelf ? inverse : relationship
                let ownerEntity = owner.entity!
                let tableName = "Z_\(ownerEntity.entityNumber)\(owner.name.uppercased())"
                // Column named after the relationship that points at the row it holds, as Core Data does.
                let sourceColumn = "Z_\(ownerEntity.entityNumber)\((other?.name ?? "INV_" + owner.name).uppercased())"
                var destinationColumn = "Z_\(owner.destination.entityNumber)\(owner.name.uppercased())"
                if destinationColumn == sourceColumn { destinationColumn += "1" }
                // Each ordered side has an order column of its own, named after the column it orders.
                let ownerOrder = owner.isOrdered ? "Z_FOK_\(destinationColumn.dropFirst(2))" : nil
                let otherOrder = other?.isOrdered == true ? "Z_FOK_\(sourceColumn.dropFirst(2))" : nil
                owner.joinTable = JoinTable(name: tableName, sourceColumn: sourceColumn, destinationColumn: destinationColumn, orderColumn: ownerOrder,
                                            inverseOrderColumn: otherOrder, isOwner: true)
                if let other {
                    other.joinTable = JoinTable(name: tableName, sourceColumn: destinationColumn, destinationColumn: sourceColumn,
                                                orderColumn: otherOrder, inverseOrderColumn: ownerOrder, isOwner: false)
                    other.storage = .joinTable
                }
                joinTables.append(owner.joinTable!)
            }
        }
        // Per-entity facts the hot paths use instead of walking and casting properties.
        for entity in ordered {
            entity.insertTemplate = entity.properties.map { ($0 as? AttributeDescription)?.defaultSlot ?? .null }
            entity.transientDefaults = entity.properties.compactMap { property in
                guard let attribute = property as? AttributeDescription, attribute.isTransient, let value = attribute.defaultValue else { return nil }
                return (attribute.index, value)
            }
            entity.validatedSlots = entity.properties.filter { property in
                if let attribute = property as? AttributeDescription {
                    if attribute.type == .composite { return false } // its elements hold its value
                    return !attribute.isOptional || attribute.minValue != nil || attribute.maxValue != nil || attribute.regularExpression != nil
                }
                let relationship = property as! RelationshipDescription
                return !relationship.isOptional || relationship.minCount > 0 || (relationship.isToMany && relationship.maxCount > 0)
            }.map(\.index)
            entity.attributes = entity.properties.compactMap { $0 as? AttributeDescription }
            entity.relationships = entity.properties.compactMap { $0 as? RelationshipDescription }
            entity.orderKeyedRelationships = entity.relationships.filter { $0.isOrdered && $0.joinTable == nil }
            entity.joinTableRelationships = entity.relationships.filter { $0.joinTable != nil }
            entity.joinTableOwners = entity.joinTableRelationships.filter { $0.joinTable!.isOwner }
            var ancestor: EntityDescription? = entity
            while let current = ancestor {
                if !current.uniquenessConstraints.isEmpty { entity.hasUniquenessConstraints = true }
                ancestor = current.superentity
            }
            entity.toManySlots = entity.properties.compactMap { ($0 as? RelationshipDescription)?.isToMany == true ? $0.index : nil }
            entity.snapshotNeedsStoredForm = entity.properties.contains { !($0 is AttributeDescription) || $0.isTransient }
        }
        // Indexes and constraints.
        for entity in ordered {
            let table = entity.table!
            // An entity with fetch indexes of its own gets only those: the SwiftData store in the fixtures marks
            // `#Index` attributes indexed and has no single-column index for them.
            for case let attribute as AttributeDescription in entity.declaredProperties where attribute.isIndexed && entity.fetchIndexes.isEmpty {
                guard let column = attribute.columnName else {
                    throw ModelError(entity: entity.name, property: attribute.name, problem: "a transient attribute cannot be indexed")
                }
                table.indexes.append(IndexDescription(name: "\(table.name)_\(column)_INDEX", columns: [column], condition: nil))
            }
            for case let relationship as RelationshipDescription in entity.declaredProperties {
                if let column = relationship.columnName {
                    table.indexes.append(IndexDescription(name: "\(table.name)_\(column)_INDEX", columns: [column], condition: nil))
                }
            }
            for relationship in keptInDestination[ObjectIdentifier(entity)] ?? [] {
                if let column = keptColumns[ObjectIdentifier(relationship)] {
                    table.indexes.append(IndexDescription(name: "\(table.name)_\(column)_INDEX", columns: [column], condition: nil))
                }
            }
            for compound in entity.compoundIndexes {
                var columns: [String] = []
                for name in compound {
                    guard let property = entity.property(named: name) else {
                        throw ModelError(entity: entity.name, property: name, problem: "compound index names an unknown property")
                    }
                    guard let column = property.columnName else {
                        throw ModelError(entity: entity.name, property: name, problem: "compound index names a property with no column (transient or to-many)")
                    }
                    columns.append(column)
                }
                guard !columns.isEmpty else { continue }
                table.indexes.append(IndexDescription(name: ([table.name] + columns).joined(separator: "_"), columns: columns, condition: nil))
            }
            for index in entity.fetchIndexes where !index.elements.contains(where: { $0.kind == .rTree }) {
                var columns: [String] = [], ascending: [Bool] = []
                for element in index.elements {
                    guard let property = entity.property(named: element.property) else {
                        throw ModelError(entity: entity.name, property: element.property, problem: "fetch index '\(index.name)' names an unknown property")
                    }
                    if let relationship = property as? RelationshipDescription, relationship.isToMany {
                        // Xcode accepts such an element (shipping apps have one); a to-many has no column to index.
                        warnings.append(ModelError(entity: entity.name, property: element.property,
                                                   problem: "fetch index '\(index.name)' names a to-many relationship, which has no column: the element is left out"
                                                       + (index.elements.count == 1 ? ", and with it the index" : "")))
                        continue
                    }
                    guard let column = property.columnName else {
                        throw ModelError(entity: entity.name, property: element.property, problem: "fetch index '\(index.name)' names a property with no column (transient)")
                    }
                    columns.append(column)
                    ascending.append(element.isAscending)
                }
                guard !columns.isEmpty else { continue }
                table.indexes.append(IndexDescription(name: "Z_\(entity.name)_\(index.name)", columns: columns, condition: nil,
                                                      ascending: ascending))
            }
            for constraint in entity.uniquenessConstraints {
                var columns: [String] = []
                for name in constraint {
                    guard let property = entity.property(named: name) else {
                        throw ModelError(entity: entity.name, property: name, problem: "uniqueness constraint names an unknown property")
                    }
                    guard let column = property.columnName else {
                        throw ModelError(entity: entity.name, property: name, problem: "uniqueness constraint names a property with no column (transient or to-many)")
                    }
                    columns.append(column)
                }
                // A sub-entity's constraint is a unique index on the shared table too (`Z_Author_UNIQUE_alias ON
                // ZWRITER` in a real store); the save also checks it among the sub-entity's own rows.
                if !columns.isEmpty {
                    table.indexes.append(IndexDescription(name: "Z_\(entity.name)_UNIQUE_" + constraint.joined(separator: "_"), columns: columns,
                                                          condition: nil, isUnique: true, ascending: columns.map { _ in true }))
                }
            }
        }
        for table in tables where !table.root.subentities.isEmpty {
            table.indexes.append(IndexDescription(name: "\(table.name)_Z_ENT_INDEX", columns: ["Z_ENT"], condition: nil))
        }
        for table in tables {
            var seen: Set<String> = []
            table.indexes = table.indexes.filter { seen.insert($0.name).inserted }
        }
        // What Xcode's model editor warns of: a relationship without an inverse (Core Data keeps the graph
        // consistent through inverses), and a property named like one of NSManagedObject's own.
        for entity in ordered {
            for property in entity.declaredProperties {
                if let relationship = property as? RelationshipDescription, relationship.inverse == nil, !relationship.isTransient {
                    warnings.append(ModelError(entity: entity.name, property: relationship.name,
                                               problem: "has no inverse: Core Data keeps the object graph consistent through inverses, so deleting or changing its destinations can leave it pointing at objects that are gone"))
                }
                if Self.reservedPropertyNames.contains(property.name) {
                    warnings.append(ModelError(entity: entity.name, property: property.name,
                                               problem: "'\(property.name)' is the name of a property every managed object has (NSManagedObject's, and ManagedObject's): a subclass cannot declare it, and key-value access to it is ambiguous"))
                }
            }
        }
        // Version hashes.
        for entity in ordered {
            var text = "E|\(entity.name)|\(entity.superentity?.name ?? "")|\(entity.isAbstract)|\(entity.versionHashModifier ?? "")"
            for property in entity.properties.sorted(by: { $0.name < $1.name }) { text += "\n" + property.hashInput() }
            entity.versionHash = Data(SHA256.hash(Array(text.utf8)))
        }
        return Result(entities: ordered, tables: tables, joinTables: joinTables, warnings: warnings)
    }

    /// The group of Core Data's column order a stored property's column falls in: integers (booleans too) and to-one
    /// keys first, then doubles, floats and dates together, then decimals, then strings, then UUIDs, then other data.
    /// Real stores show `ZCREATEDAT TIMESTAMP` sorted by name among `FLOAT` columns, dates before decimals whatever
    /// the names (`ZCREATEDAT, ZDATE, ZUPDATEDAT TIMESTAMP, ZAMOUNT DECIMAL`) and UUIDs before binary and
    /// transformable data (`ZUNIQUEID BLOB, ZCOVER BLOB`; docs/store-format.md).
    static func columnGroup(_ property: PropertyDescription) -> Int {
        guard let attribute = property as? AttributeDescription else { return 0 }
        if attribute.type == .uuid { return 4 }
        switch attribute.type.columnType {
        case "INTEGER": return 0
        case "FLOAT", "TIMESTAMP": return 1
        case "DECIMAL": return 2
        case "VARCHAR": return 3
        default: return 5
        }
    }

    /// "Entity.relationship".
    static func qualifiedName(_ relationship: RelationshipDescription) -> String { "\(relationship.entity.name).\(relationship.name)" }

    /// Core Data's order of entities (roots, and an entity's sub-entities): case-insensitive by name.
    static func coreDataOrder(_ lhs: EntityDescription, _ rhs: EntityDescription) -> Bool {
        let (l, r) = (lhs.name.lowercased(), rhs.name.lowercased())
        return l != r ? l < r : lhs.name < rhs.name
    }

    /// The entity's attributes for the elements of `composite` (and of composites among them), appended to `list`;
    /// returns those of its own elements.
    static func flatten(_ composite: AttributeDescription, path: String, entity: String, into list: inout [PropertyDescription],
                        depth: Int = 1) throws -> [AttributeDescription] {
        guard depth <= Limits.compositeDepth else {
            throw ModelError(entity: entity, property: path, problem: "composites nested more than \(Limits.compositeDepth) deep (Limits.compositeDepth)")
        }
        guard !composite.elements.isEmpty else {
            throw ModelError(entity: entity, property: path, problem: "a composite attribute has no elements")
        }
        var names: Set<String> = []
        var result: [AttributeDescription] = []
        for element in composite.elements {
            let name = "\(path).\(element.name)"
            guard isIdentifier(element.name) else {
                throw ModelError(entity: entity, property: name, problem: "element names must be letters, digits and underscores, starting with a letter")
            }
            guard names.insert(element.name).inserted else {
                throw ModelError(entity: entity, property: name, problem: "the element's name is repeated")
            }
            if element.type == .undefined || element.type == .objectID {
                throw ModelError(entity: entity, property: name, problem: "type '\(element.type.rawValue)' cannot be a composite's element")
            }
            // An element holds nil whenever its composite does: it is optional as the entity holds it.
            let held = AttributeDescription(name: name, type: element.type, isOptional: true, isTransient: composite.isTransient || element.isTransient,
                                            defaultValue: element.defaultValue, allowsExternalBinaryDataStorage: element.allowsExternalBinaryDataStorage,
                                            valueTransformerName: element.valueTransformerName, userInfo: element.userInfo)
            held.elementName = element.name
            held.preservesValueInHistoryOnDeletion = element.preservesValueInHistoryOnDeletion
            list.append(held)
            if element.type == .composite {
                held.entityElements = try flatten(element, path: name, entity: entity, into: &list, depth: depth + 1)
            }
            result.append(held)
        }
        return result
    }

    private func isIdentifier(_ name: String) -> Bool { Self.isIdentifier(name) }

    private static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" }
    }
}
