import Foundation

/// What one migration step does to the values of a store, counted in the store it reads: per entity and property,
/// the values dropped (a property or entity the new version removes), defaulted (an attribute it adds) and converted
/// (an attribute that changes type). The dry run and the migration print it; the migration refuses to drop values
/// unless allowed.
public struct MigrationAccount: Sendable, CustomStringConvertible {
    /// What happens to the values a line counts.
    public enum Kind: String, Sendable {
        /// Values the new version has no place for.
        case dropped
        /// Values the new version adds, given their default.
        case defaulted
        /// Values that change type.
        case converted
        /// Values of a derived attribute the new version adds, computed in the new store by its triggers.
        case derived
    }

    /// Values of one subject dropped, defaulted or converted.
    public struct Line: Sendable {
        /// What happens to them.
        public let kind: Kind
        /// `Entity.property`, or `Entity` for its objects.
        public let subject: String
        /// How many values.
        public let count: Int
    }

    /// The lines, per entity and property.
    public var lines: [Line] = []

    /// Values the step drops.
    public var dropped: Int { lines.filter { $0.kind == .dropped }.reduce(0) { $0 + $1.count } }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        let shown = lines.filter { $0.count > 0 }
        guard !shown.isEmpty else { return "no value dropped, defaulted or converted" }
        return [Kind.dropped, .defaulted, .converted, .derived].compactMap { kind in
            let of = shown.filter { $0.kind == kind }
            return of.isEmpty ? nil : "\(kind.rawValue) " + of.map { "\($0.subject) \($0.count)" }.joined(separator: ", ")
        }.joined(separator: "; ")
    }

    /// Counts what `mapping` does to the store `reader` reads, whose version is `source`. A property that another
    /// mapping reads (`$source.<name>`), or of an entity a policy migrates (`policies`, source entity names), is
    /// carried on, not dropped.
    static func count(_ mapping: MappingModel, source: ManagedObjectModel, destination: ManagedObjectModel? = nil, in reader: SQLiteConnection,
                      policies: Set<String> = []) throws -> MigrationAccount {
        var account = MigrationAccount()
        // Derived attributes the new store's triggers compute (others are defaulted like any new attribute).
        let uncomputed = Set((destination.map { DerivedAttributeTriggers.triggers(for: $0).uncomputed } ?? []).map { "\($0.entity).\($0.attribute)" })
        func computed(_ entity: String, _ attribute: String) -> Bool {
            guard let derived = destination?.entity(named: entity)?.attribute(named: attribute), derived.derivationExpression != nil else { return false }
            return !uncomputed.contains("\(derived.entity.name).\(attribute)")
        }
        func count(_ sql: String, _ bindings: [Int64]) throws -> Int {
            let statement = try reader.prepare(sql)
            for (i, value) in bindings.enumerated() { statement.bind(value, at: Int32(i + 1)) }
            return try statement.step() ? Int(statement.int64(at: 0)) : 0
        }
        let mapped = Set(mapping.entityMappings.compactMap(\.source))
        for entity in source.entities where !mapped.contains(entity.name) && !entity.isAbstract {
            let objects = try count("SELECT count(*) FROM \(entity.table.name) WHERE Z_ENT = ?", [Int64(entity.entityNumber)])
            account.lines.append(Line(kind: .dropped, subject: entity.name, count: objects))
        }
        for entityMapping in mapping.entityMappings {
            guard let name = entityMapping.source, let entity = source.entity(named: name) else { continue }
            let table = entity.table.name, number = Int64(entity.entityNumber)
            let handedOn = policies.contains(name) || entityMapping.policyClassName != nil
            let read = Set(mapping.entityMappings.filter { $0.source == name }.flatMap { $0.attributes.compactMap(\.source) + $0.relationships.compactMap(\.source) })
            for removed in entityMapping.removed where !handedOn && !read.contains(removed) {
                guard let property = entity.properties.first(where: { $0.name == removed }) else { continue }
                let values: Int
                if let column = property.columnName {
                    values = try count("SELECT count(*) FROM \(table) WHERE Z_ENT = ? AND \(column) IS NOT NULL", [number])
                } else if let relationship = property as? RelationshipDescription, let join = relationship.joinTable {
                    values = try count("SELECT count(*) FROM \(join.name) WHERE \(join.sourceColumn) IN (SELECT Z_PK FROM \(table) WHERE Z_ENT = ?)", [number])
                } else {
                    continue // a to-many kept by its inverse's column, counted there
                }
                account.lines.append(Line(kind: .dropped, subject: "\(name).\(removed)", count: values))
            }
            let rows = try count("SELECT count(*) FROM \(table) WHERE Z_ENT = ?", [number])
            for attribute in entityMapping.attributes {
                if attribute.source == nil {
                    account.lines.append(Line(kind: computed(entityMapping.destination, attribute.destination) ? .derived : .defaulted, subject: "\(entityMapping.destination).\(attribute.destination)", count: rows))
                } else if attribute.conversion != .none, let old = entity.attribute(named: attribute.source!), let column = old.columnName {
                    let values = try count("SELECT count(*) FROM \(table) WHERE Z_ENT = ? AND \(column) IS NOT NULL", [number])
                    account.lines.append(Line(kind: .converted, subject: "\(entityMapping.destination).\(attribute.destination)", count: values))
                }
            }
        }
        return account
    }
}
