import CSQLite
import Foundation

/// One migration step: a new store for the destination model, written beside the source store in one transaction,
/// with every object of a mapped entity copied under its own key (so relationships and object IDs carry over) and the
/// source store's UUID. The source is only read.
struct MigrationStep {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let mapping: MappingModel

    /// Rows copied, by destination entity (for the plan and the trace).
    private(set) var copied: [String: Int] = [:]
    /// Per destination entity: statements run and seconds taken to copy its rows.
    private(set) var costs: [String: (statements: Int, seconds: Double)] = [:]
    /// The old store's persistent history, kept in the new one (nil when it had none).
    private(set) var history: HistoryKept?

    /// Custom code for entities of this step, by source entity name.
    let policies: [String: any EntityMigrationPolicy]
    let versions: (from: String, to: String)

    init(source: ManagedObjectModel, destination: ManagedObjectModel, mapping: MappingModel,
         policies: [String: any EntityMigrationPolicy] = [:], versions: (from: String, to: String) = ("", "")) {
        self.source = source
        self.destination = destination
        self.mapping = mapping
        self.policies = policies
        self.versions = versions
    }

    /// Writes the destination store at `target` from the store read through `reader`.
    mutating func run(reading reader: SQLiteConnection, uuid: String, into target: URL) throws {
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: destination, probes: .disabled)
            try coordinator.addPersistentStore(at: target)
        }
        let writer = try SQLiteConnection(path: target.path, create: false)
        try writer.execute("BEGIN EXCLUSIVE")
        do {
            try copyRows(from: reader, to: writer)
            try copyRelationships(from: reader, to: writer)
            history = try copyHistory(from: reader, to: writer)
            try setKeys(writer)
            try setMetadata(writer, uuid: uuid)
            try writer.execute("COMMIT")
        } catch {
            try? writer.execute("ROLLBACK")
            throw error
        }
        if !policies.isEmpty { try runPolicies(reading: reader, target: target) }
        try checkRequiredValues(writer)
    }

    // MARK: Policies

    private func runPolicies(reading reader: SQLiteConnection, target: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: destination, probes: .disabled)
        try coordinator.addPersistentStore(at: target)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let migration = MigrationContext(context: context, from: versions.from, to: versions.to)
        let ordered = policies.sorted { $0.key < $1.key }
        // Core Data's stages: every policy creates its destination instances, then every policy its relationships.
        for (sourceName, policy) in ordered {
            guard let from = source.entity(named: sourceName) else {
                throw MigrationError(entity: sourceName, problem: "a migration policy is set for it, and the old version has no such entity")
            }
            let sources = try objects(of: from, in: reader)
            try context.performAndWait {
                for object in sources { try policy.createDestinationInstances(forSource: object, in: migration) }
            }
        }
        try context.performAndWait {
            for (sourceName, policy) in ordered {
                guard let name = mapping.entityMappings.first(where: { $0.source == sourceName })?.destination else { continue }
                let request = FetchRequest<ManagedObject>(entityName: name)
                request.includesSubentities = false
                for object in try context.fetch(request) { try policy.createRelationships(forDestination: object, in: migration) }
            }
            try context.save()
        }
    }

    /// Every stored object of exactly `entity` in the old store, with its attribute values and to-one keys.
    private func objects(of entity: EntityDescription, in reader: SQLiteConnection) throws -> [MigrationSource] {
        let stored = entity.properties.filter { $0.columnName != nil }
        let columns = ["Z_PK"] + stored.map { $0.columnName! }
        let select = try reader.prepare("SELECT \(columns.joined(separator: ", ")) FROM \(entity.table.name) WHERE Z_ENT = ?")
        select.bind(Int64(entity.entityNumber), at: 1)
        var result: [MigrationSource] = []
        while try select.step() {
            var values: [String: Any] = [:]
            for (i, property) in stored.enumerated() {
                let slot = select.slot(at: Int32(i + 1))
                if let attribute = property as? AttributeDescription {
                    values[property.name] = ValueCoding.value(of: slot, type: attribute.type, transformer: attribute.valueTransformerName)
                } else if case .integer(let key) = slot {
                    values[property.name] = key
                }
            }
            result.append(MigrationSource(entity: entity.name, key: select.int64(at: 0), values: values))
        }
        return result
    }

    // MARK: Rows

    private mutating func copyRows(from reader: SQLiteConnection, to writer: SQLiteConnection) throws {
        for entityMapping in mapping.entityMappings {
            guard let sourceName = entityMapping.source, let from = source.entity(named: sourceName),
                  let to = destination.entity(named: entityMapping.destination) else { continue }
            var attributes: [(AttributeDescription, AttributeDescription?, MappingModel.Conversion)] = []
            for attributeMapping in entityMapping.attributes {
                guard let target = to.attribute(named: attributeMapping.destination), target.columnName != nil else { continue }
                attributes.append((target, attributeMapping.source.flatMap { from.attribute(named: $0) }, attributeMapping.conversion))
            }
            let started = ProbeClock.now()
            let read = ["Z_PK", "Z_OPT"] + attributes.compactMap { $0.1?.columnName }
            let select = try reader.prepare("SELECT \(read.joined(separator: ", ")) FROM \(from.table.name) WHERE Z_ENT = ?")
            select.bind(Int64(from.entityNumber), at: 1)
            let write = ["Z_PK", "Z_ENT", "Z_OPT"] + attributes.map { $0.0.columnName! }
            let insert = try writer.prepare("INSERT INTO \(to.table.name)(\(write.joined(separator: ", "))) VALUES(\(write.map { _ in "?" }.joined(separator: ", ")))")
            var count = 0
            while try select.step() {
                let key = select.int64(at: 0)
                insert.reset()
                insert.bind(key, at: 1)
                insert.bind(Int64(to.entityNumber), at: 2)
                insert.bind(select.int64(at: 1), at: 3)
                var column: Int32 = 2
                for (i, (target, old, conversion)) in attributes.enumerated() {
                    var value: Slot = target.defaultSlot
                    if old != nil {
                        let stored = select.slot(at: column)
                        column += 1
                        value = try convert(stored, conversion, to: target, object: "\(to.name) p\(key)")
                        if case .null = value { value = target.defaultSlot }
                    }
                    insert.bind(value, at: Int32(i + 4))
                }
                do {
                    while try insert.step() {}
                } catch let error as SQLiteError where error.isUniqueConstraint {
                    throw MigrationError(entity: to.name, problem: "p\(key) has the \(error.failedUniqueColumns.joined(separator: ", ")) of an object copied before it; the new version's uniqueness constraint does not allow two")
                }
                count += 1
            }
            copied[to.name, default: 0] += count
            let cost = costs[to.name] ?? (0, 0)
            costs[to.name] = (cost.statements + 1 + count, cost.seconds + ProbeClock.seconds(started, ProbeClock.now()))
        }
    }

    private func convert(_ value: Slot, _ conversion: MappingModel.Conversion, to target: AttributeDescription, object: String) throws -> Slot {
        if case .null = value { return .null }
        func fail(_ text: String) -> MigrationError {
            MigrationError(entity: target.entity.name, property: target.name, problem: "\(object)'s value \(text) does not convert to \(target.type.rawValue)")
        }
        switch conversion {
        case .none:
            return value
        case .toString:
            switch value {
            case .integer(let n): return .text(String(n))
            case .real(let d): return .text(d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d))
            default: return value
            }
        case .fromString:
            guard case .text(let text) = value else { return value }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if target.type.isInteger || target.type == .boolean {
                guard let n = Int64(trimmed) else { throw fail("'\(text)'") }
                return try convert(.integer(n), .number, to: target, object: object)
            }
            guard let d = Double(trimmed), d.isFinite else { throw fail("'\(text)'") }
            return .real(d)
        case .number:
            switch (value, target.type) {
            case (.real(let d), let type) where type.isInteger || type == .boolean:
                guard d == d.rounded(), let n = Int64(exactly: d) else { throw fail("\(d)") }
                return try convert(.integer(n), .number, to: target, object: object)
            case (.integer(let n), .integer16):
                guard Int16(exactly: n) != nil else { throw fail("\(n)") }
                return value
            case (.integer(let n), .integer32):
                guard Int32(exactly: n) != nil else { throw fail("\(n)") }
                return value
            case (.integer(let n), .boolean):
                return .integer(n == 0 ? 0 : 1)
            case (.integer(let n), .double), (.integer(let n), .float), (.integer(let n), .decimal):
                return .real(Double(n))
            default:
                return value
            }
        }
    }

    // MARK: Relationships

    /// Links of the source: (object key, destination key, destination entity number, position) for a source
    /// relationship, read from wherever its storage keeps them.
    private func links(of relationship: RelationshipDescription, in reader: SQLiteConnection) throws -> [(Int64, Int64, Int64, Int64)] {
        var result: [(Int64, Int64, Int64, Int64)] = []
        let owner = relationship.entity!
        let target = relationship.destination!
        switch relationship.storage {
        case .toOneColumn:
            guard let column = relationship.columnName else { return [] }
            let entityColumn = relationship.entityColumnName ?? "\(target.entityNumber)"
            let statement = try reader.prepare("SELECT Z_PK, \(column), \(entityColumn) FROM \(owner.table.name) WHERE Z_ENT >= ? AND Z_ENT <= ? AND \(column) IS NOT NULL")
            statement.bind(Int64(owner.entityNumber), at: 1)
            statement.bind(Int64(owner.lastDescendantNumber), at: 2)
            while try statement.step() { result.append((statement.int64(at: 0), statement.int64(at: 1), statement.int64(at: 2), 0)) }
        case .inverseColumn:
            guard let inverse = relationship.inverse, let column = inverse.columnName else { return [] }
            let order = inverse.orderColumnName ?? "Z_PK"
            let statement = try reader.prepare("SELECT \(column), Z_PK, Z_ENT, \(order) FROM \(target.table.name) WHERE Z_ENT >= ? AND Z_ENT <= ? AND \(column) IS NOT NULL")
            statement.bind(Int64(target.entityNumber), at: 1)
            statement.bind(Int64(target.lastDescendantNumber), at: 2)
            while try statement.step() { result.append((statement.int64(at: 0), statement.int64(at: 1), statement.int64(at: 2), statement.int64(at: 3))) }
        case .joinTable:
            guard let join = relationship.joinTable else { return [] }
            let order = join.orderColumn ?? join.destinationColumn
            let statement = try reader.prepare("SELECT j.\(join.sourceColumn), j.\(join.destinationColumn), t.Z_ENT, j.\(order) FROM \(join.name) j JOIN \(target.table.name) t ON t.Z_PK = j.\(join.destinationColumn)")
            while try statement.step() { result.append((statement.int64(at: 0), statement.int64(at: 1), statement.int64(at: 2), statement.int64(at: 3))) }
        case .transient:
            break
        }
        return result
    }

    private func copyRelationships(from reader: SQLiteConnection, to writer: SQLiteConnection) throws {
        var done: Set<ObjectIdentifier> = []
        var entityOf: [String: [Int64: Int64]]?
        for entityMapping in mapping.entityMappings {
            guard let to = destination.entity(named: entityMapping.destination), let sourceName = entityMapping.source,
                  let from = source.entity(named: sourceName) else { continue }
            for relationshipMapping in entityMapping.relationships {
                guard let relationship = to.relationship(named: relationshipMapping.destination), !relationship.isTransient,
                      !done.contains(ObjectIdentifier(relationship)) else { continue }
                done.insert(ObjectIdentifier(relationship))
                if let inverse = relationship.inverse { done.insert(ObjectIdentifier(inverse)) }
                // The links come from the old relationship, or from its inverse's old relationship, turned around.
                var pairs: [(Int64, Int64, Int64, Int64)] = []
                if relationshipMapping.source == MappingModel.sourceObject {
                    // Each object to what another entity mapping made of the same source object (same key).
                    let keys = try reader.prepare("SELECT Z_PK FROM \(from.table.name) WHERE Z_ENT = ?")
                    keys.bind(Int64(from.entityNumber), at: 1)
                    while try keys.step() { pairs.append((keys.int64(at: 0), keys.int64(at: 0), 0, 0)) }
                } else if let old = relationshipMapping.source.flatMap({ from.relationship(named: $0) }) {
                    pairs = try links(of: old, in: reader)
                } else if let inverse = relationship.inverse, let inverseMapping = mapping.entityMappings.first(where: { $0.destination == inverse.entity.name }),
                          let oldInverseName = inverseMapping.relationships.first(where: { $0.destination == inverse.name })?.source,
                          let oldInverseOwner = inverseMapping.source.flatMap({ source.entity(named: $0) }),
                          let oldInverse = oldInverseOwner.relationship(named: oldInverseName) {
                    pairs = try links(of: oldInverse, in: reader).map { ($0.1, $0.0, 0, $0.3) }
                }
                guard !pairs.isEmpty else { continue }
                if entityOf == nil { entityOf = try rowEntities(writer) }
                try write(pairs, for: relationship, entityOf: entityOf!, in: writer)
                // A one-to-one keeps a column on both sides.
                if relationship.storage == .toOneColumn, let inverse = relationship.inverse, inverse.storage == .toOneColumn {
                    try write(pairs.map { ($0.1, $0.0, 0, $0.3) }, for: inverse, entityOf: entityOf!, in: writer)
                }
            }
        }
    }

    /// Writes links into the destination's storage for `relationship` (and so for its inverse).
    private func write(_ pairs: [(Int64, Int64, Int64, Int64)], for relationship: RelationshipDescription,
                       entityOf: [String: [Int64: Int64]], in writer: SQLiteConnection) throws {
        switch relationship.storage {
        case .toOneColumn:
            try setForeignKeys(pairs, relationship: relationship, owner: relationship.entity, target: relationship.destination, entityOf: entityOf, in: writer, flipped: false)
        case .inverseColumn:
            guard let inverse = relationship.inverse else { return }
            try setForeignKeys(pairs, relationship: inverse, owner: inverse.entity, target: inverse.destination, entityOf: entityOf, in: writer, flipped: true)
        case .joinTable:
            guard let join = relationship.joinTable else { return }
            if join.isDestinationTable {
                let update = try writer.prepare("UPDATE \(join.name) SET \(join.sourceColumn) = ? WHERE Z_PK = ?")
                for (from, to, _, _) in pairs {
                    update.reset()
                    update.bind(from, at: 1)
                    update.bind(to, at: 2)
                    while try update.step() {}
                }
                return
            }
            let source = join.isOwner ? join.sourceColumn : join.destinationColumn
            let target = join.isOwner ? join.destinationColumn : join.sourceColumn
            let order = join.isOwner ? join.orderColumn : join.inverseOrderColumn
            let columns = [source, target] + (order.map { [$0] } ?? [])
            let insert = try writer.prepare("INSERT OR IGNORE INTO \(join.name)(\(columns.joined(separator: ", "))) VALUES(\(columns.map { _ in "?" }.joined(separator: ", ")))")
            var positions: [Int64: Int] = [:]
            for (from, to, _, _) in pairs.sorted(by: { ($0.0, $0.3, $0.1) < ($1.0, $1.3, $1.1) }) {
                insert.reset()
                insert.bind(from, at: 1)
                insert.bind(to, at: 2)
                if order != nil {
                    let index = positions[from, default: 0]
                    positions[from] = index + 1
                    insert.bind(SQLiteStore.OrderKey.position(at: index), at: 3)
                }
                while try insert.step() {}
            }
        case .transient:
            break
        }
    }

    /// `UPDATE <owner table> SET <fk> = ?, [<entity column> = ?,] [<order column> = ?] WHERE Z_PK = ?`, per link of
    /// the to-one `relationship` (pairs are (owner, target) or, `flipped`, (target, owner) with the to-many's order).
    private func setForeignKeys(_ pairs: [(Int64, Int64, Int64, Int64)], relationship: RelationshipDescription, owner: EntityDescription,
                                target: EntityDescription, entityOf: [String: [Int64: Int64]], in writer: SQLiteConnection, flipped: Bool) throws {
        guard let column = relationship.columnName else { return }
        var sets = ["\(column) = ?"]
        if let entityColumn = relationship.entityColumnName { sets.append("\(entityColumn) = ?") }
        let order = relationship.orderColumnName
        if let order { sets.append("\(order) = ?") }
        let update = try writer.prepare("UPDATE \(owner.table.name) SET \(sets.joined(separator: ", ")) WHERE Z_PK = ?")
        var positions: [Int64: Int] = [:]
        let ordered = flipped ? pairs.sorted { ($0.0, $0.3, $0.1) < ($1.0, $1.3, $1.1) } : pairs
        let targetEntities = entityOf[target.table.name] ?? [:]
        for pair in ordered {
            let (ownerKey, targetKey) = flipped ? (pair.1, pair.0) : (pair.0, pair.1)
            guard let targetEntity = targetEntities[targetKey] else { continue } // the target was not carried over
            update.reset()
            var index: Int32 = 1
            update.bind(targetKey, at: index); index += 1
            if relationship.entityColumnName != nil { update.bind(targetEntity, at: index); index += 1 }
            if order != nil {
                let position = positions[targetKey, default: 0]
                positions[targetKey] = position + 1
                update.bind(SQLiteStore.OrderKey.position(at: position), at: index); index += 1
            }
            update.bind(ownerKey, at: index)
            while try update.step() {}
        }
    }

    /// Every destination row's entity number, by table and key.
    private func rowEntities(_ writer: SQLiteConnection) throws -> [String: [Int64: Int64]] {
        var result: [String: [Int64: Int64]] = [:]
        for table in destination.tables {
            let statement = try writer.prepare("SELECT Z_PK, Z_ENT FROM \(table.name)")
            var rows: [Int64: Int64] = [:]
            while try statement.step() { rows[statement.int64(at: 0)] = statement.int64(at: 1) }
            result[table.name] = rows
        }
        return result
    }

    /// Objects left without a value the new version requires: an attribute with no value and no default, or a
    /// to-one relationship with no destination.
    private func checkRequiredValues(_ writer: SQLiteConnection) throws {
        for entity in destination.entities {
            for property in entity.properties where property.entity === entity && !property.isOptional && !property.isTransient {
                guard let column = property.columnName else { continue }
                let statement = try writer.prepare("SELECT Z_PK FROM \(entity.table.name) WHERE Z_ENT >= ? AND Z_ENT <= ? AND \(column) IS NULL LIMIT 10")
                statement.bind(Int64(entity.entityNumber), at: 1)
                statement.bind(Int64(entity.lastDescendantNumber), at: 2)
                var missing: [String] = []
                while try statement.step() { missing.append("p\(statement.int64(at: 0))") }
                guard !missing.isEmpty else { continue }
                let objects = missing.joined(separator: ", ") + (missing.count == 10 ? " and more" : "")
                if property is RelationshipDescription {
                    throw MigrationError(entity: entity.name, property: property.name,
                                         problem: "the new version requires this relationship and the old objects have no destination for it: \(objects); migrate with a policy (EntityMigrationPolicy) that creates them")
                }
                throw MigrationError(entity: entity.name, property: property.name,
                                     problem: "the new version requires a value the old objects lack: \(objects); give the attribute a default value, or migrate with a policy that sets it")
            }
        }
    }

    // MARK: Bookkeeping

    private func setKeys(_ writer: SQLiteConnection) throws {
        for table in destination.tables {
            let update = try writer.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM \(table.name)) WHERE Z_ENT = ?")
            update.bind(Int64(table.root.entityNumber), at: 1)
            while try update.step() {}
        }
    }

    /// The store keeps its UUID through a migration, as Core Data's do: object URIs stay valid.
    private func setMetadata(_ writer: SQLiteConnection, uuid: String) throws {
        guard let (_, plist) = try StoreMetadata.row(of: writer), var metadata = StoreMetadata(data: plist) else { return }
        metadata.values["NSStoreUUID"] = uuid
        let update = try writer.prepare("UPDATE Z_METADATA SET Z_UUID = ?, Z_PLIST = ?")
        update.bind(uuid, at: 1)
        update.bind(try metadata.encoded(), at: 2)
        while try update.step() {}
    }
}
