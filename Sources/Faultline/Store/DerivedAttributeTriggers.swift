/// The triggers that keep a model's derived attributes in a store Faultline creates, shaped and named like Core
/// Data's (`Z_DA_<TABLE>_<Entity>_<attribute>_SOURCE_INSERT`, `…_PARAMETER_INSERT`, `…_PARAMETER_UPDATE_INCREMENT`,
/// `…_PARAMETER_UPDATE_DECREMENT`, `…_PARAMETER_DELETE`), each reporting the value it computed through Core Data's
/// `NSCoreDataDATrigger…AffectedObjectValue` (docs/store-format.md).
enum DerivedAttributeTriggers {
    /// Every trigger of `model`'s derived attributes, and the attributes no trigger computes, each with why.
    static func triggers(for model: ManagedObjectModel) -> (statements: [String], uncomputed: [(entity: String, attribute: String, reason: String)]) {
        var statements: [String] = [], uncomputed: [(String, String, String)] = []
        for entity in model.entities {
            for attribute in entity.attributes where attribute.entity === entity {
                guard let text = attribute.derivationExpression else { continue }
                do {
                    statements += try triggers(for: attribute, of: entity, text: text)
                } catch let reason as Uncomputed {
                    uncomputed.append((entity.name, attribute.name, reason.text))
                } catch {}
            }
        }
        return (statements, uncomputed)
    }

    private struct Uncomputed: Error { let text: String }

    private static func triggers(for attribute: AttributeDescription, of entity: EntityDescription, text: String) throws -> [String] {
        guard attribute.derivationFilter == nil else { throw Uncomputed(text: "a filtering predicate is not computed") }
        guard let derivation = Derivation(text) else {
            throw Uncomputed(text: "the expression '\(PropertyDescription.canonicalDerivation(text))' is not one Faultline computes (count, sum, a key path, lowercase, uppercase, canonical, now())")
        }
        guard let column = attribute.columnName else { throw Uncomputed(text: "it has no column") }
        let table = entity.table.name
        let prefix = "Z_DA_\(table)_\(entity.name)_\(attribute.name)"
        // Rows of this entity (and its sub-entities) only, where its table holds others too.
        let numbers = entity.selfAndDescendants.map(\.entityNumber)
        let guardNew = entity.superentity == nil ? "" : " WHEN (NEW.Z_ENT BETWEEN \(numbers.min()!) AND \(numbers.max()!))"
        func report(_ hook: String, where condition: String) -> String {
            "SELECT \(hook)('\(table)', Z_ENT, Z_PK, '\(attribute.name)', \(column)) FROM \(table) WHERE \(condition);"
        }
        let inserted = "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
        func own(_ name: String) throws -> String {
            guard let a = entity.attribute(named: name), let c = a.columnName, a.derivationExpression == nil || a === attribute else {
                throw Uncomputed(text: "'\(name)' is not a stored attribute of \(entity.name)")
            }
            guard a !== attribute else { throw Uncomputed(text: "it derives from itself") }
            return c
        }
        /// The to-many's destination table and the inverse's key column in it.
        func toMany(_ name: String) throws -> (relationship: RelationshipDescription, table: String, key: String) {
            guard let r = entity.relationship(named: name), r.isToMany, !r.isTransient else { throw Uncomputed(text: "'\(name)' is not a to-many of \(entity.name)") }
            guard let inverse = r.inverse, !inverse.isToMany, let key = inverse.columnName, let destination = r.destination else {
                throw Uncomputed(text: "'\(name)' has no to-one inverse (a many-to-many or one-way to-many is not counted by triggers)")
            }
            return (r, destination.table.name, key)
        }
        switch derivation {
        case .count(let name), .sum(let name, _):
            let (relationship, other, key) = try toMany(name)
            // A count's text is Core Data's own (its stores hold these triggers); a sum's follows it.
            var inserted1 = "IFNULL(\(column), 0) + 1", increment = "\(column) + 1", decrement = "\(column) - 1"
            var total = "COUNT(\(key))", updateOf = key
            if case .sum(_, let summed) = derivation {
                guard let a = relationship.destination?.attribute(named: summed), a.type.isInteger || a.type == .double || a.type == .float || a.type == .decimal,
                      let c = a.columnName else {
                    throw Uncomputed(text: "'\(summed)' is not a stored number of \(relationship.destinationName)")
                }
                inserted1 = "IFNULL(\(column), 0) + IFNULL(NEW.\(c), 0)"
                increment = inserted1
                decrement = "IFNULL(\(column), 0) - IFNULL(OLD.\(c), 0)"
                (total, updateOf) = ("SUM(\(c))", "\(key), \(c)")
            }
            let parameter = "Z_DA_\(other)_\(entity.name)_\(attribute.name)_PARAMETER"
            return [
                "CREATE TRIGGER IF NOT EXISTS \(prefix)_SOURCE_INSERT AFTER INSERT ON \(table) FOR EACH ROW\(guardNew) BEGIN UPDATE \(table) SET \(column) = (SELECT IFNULL(\(total), 0) FROM \(other) WHERE \(key) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; \(report(inserted, where: "Z_PK = NEW.Z_PK")) END",
                "CREATE TRIGGER IF NOT EXISTS \(parameter)_INSERT AFTER INSERT ON \(other) FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(table) SET \(column) = \(inserted1) WHERE Z_PK = NEW.\(key); \(report(updated, where: "Z_PK = NEW.\(key)")) END",
                "CREATE TRIGGER IF NOT EXISTS \(parameter)_UPDATE_INCREMENT AFTER UPDATE OF \(updateOf) ON \(other) FOR EACH ROW WHEN (NEW.\(key) NOT NULL) BEGIN UPDATE \(table) SET \(column) = \(increment) WHERE Z_PK = NEW.\(key); \(report(updated, where: "Z_PK = NEW.\(key)")) END",
                "CREATE TRIGGER IF NOT EXISTS \(parameter)_UPDATE_DECREMENT AFTER UPDATE OF \(updateOf) ON \(other) FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(table) SET \(column) = \(decrement) WHERE Z_PK = OLD.\(key); \(report(updated, where: "Z_PK = OLD.\(key)")) END",
                "CREATE TRIGGER IF NOT EXISTS \(parameter)_DELETE AFTER DELETE ON \(other) FOR EACH ROW WHEN (OLD.\(key) NOT NULL) BEGIN UPDATE \(table) SET \(column) = \(decrement) WHERE Z_PK = OLD.\(key); \(report(updated, where: "Z_PK = OLD.\(key)")) END",
            ]
        case .string(let function, let name):
            let source = try own(name)
            let call = ["lowercase": "NSCoreDataToLower", "uppercase": "NSCoreDataToUpper"][function] ?? "NSCoreDataCanonical"
            return ownTriggers(prefix, table, column, guardNew, value: "\(call)(NEW.\(source))", updateOf: source, report: report)
        case .keyPath(let path) where path.count == 1:
            let source = try own(path[0])
            return ownTriggers(prefix, table, column, guardNew, value: "NEW.\(source)", updateOf: source, report: report)
        case .keyPath(let path):
            guard let r = entity.relationship(named: path[0]), !r.isToMany, !r.isTransient, let key = r.columnName, let destination = r.destination else {
                throw Uncomputed(text: "'\(path[0])' is not a to-one of \(entity.name)")
            }
            guard let a = destination.attribute(named: path[1]), let c = a.columnName else {
                throw Uncomputed(text: "'\(path[1])' is not a stored attribute of \(destination.name)")
            }
            let other = destination.table.name, parameter = "Z_DA_\(other)_\(entity.name)_\(attribute.name)_PARAMETER"
            let fetch = "(SELECT \(c) FROM \(other) WHERE Z_PK = NEW.\(key))"
            return ownTriggers(prefix, table, column, guardNew, value: fetch, updateOf: key, report: report) + [
                "CREATE TRIGGER IF NOT EXISTS \(parameter)_UPDATE AFTER UPDATE OF \(c) ON \(other) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = NEW.\(c) WHERE \(key) = NEW.Z_PK; \(report(updated, where: "\(key) = NEW.Z_PK")) END",
                "CREATE TRIGGER IF NOT EXISTS \(parameter)_DELETE AFTER DELETE ON \(other) FOR EACH ROW BEGIN UPDATE \(table) SET \(column) = NULL WHERE \(key) = OLD.Z_PK; \(report(updated, where: "\(key) = OLD.Z_PK")) END",
            ]
        case .now:
            // Every save of the object bumps Z_OPT; the other derived triggers do not.
            return ownTriggers(prefix, table, column, guardNew, value: "NSCoreDataNow()", updateOf: "Z_OPT", report: report)
        }
    }

    /// A value computed from the row itself: on its insert, and on an update of the column it comes from.
    private static func ownTriggers(_ prefix: String, _ table: String, _ column: String, _ guardNew: String, value: String, updateOf: String,
                                    report: (String, String) -> String) -> [String] {
        [
            "CREATE TRIGGER IF NOT EXISTS \(prefix)_SOURCE_INSERT AFTER INSERT ON \(table) FOR EACH ROW\(guardNew) BEGIN UPDATE \(table) SET \(column) = \(value) WHERE Z_PK = NEW.Z_PK; \(report("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "Z_PK = NEW.Z_PK")) END",
            "CREATE TRIGGER IF NOT EXISTS \(prefix)_SOURCE_UPDATE AFTER UPDATE OF \(updateOf) ON \(table) FOR EACH ROW\(guardNew) BEGIN UPDATE \(table) SET \(column) = \(value) WHERE Z_PK = NEW.Z_PK; \(report("NSCoreDataDATriggerUpdatedAffectedObjectValue", "Z_PK = NEW.Z_PK")) END",
        ]
    }
}
