import Foundation

/// What an existing store decides about its layout instead of Core Data's rules: the entity numbers of its
/// `Z_PRIMARYKEY` and which side of each many-to-many relationship names the join table it holds. Core Data keeps
/// both per store; a model opened on a store takes them from it (`ManagedObjectModel.adoptLayout(of:)`).
struct StoreLayout: Equatable {
    /// Z_ENT by the model's entity name.
    var entityNumbers: [String: Int] = [:]
    /// For a many-to-many pair: the relationship ("Entity.relationship") whose table the store holds.
    var joinTableOwners: [JoinTablePair: String] = [:]
    /// To-many relationships without an inverse ("Entity.relationship") that the store keeps in a join table, as
    /// Faultline builds before format 3 did, rather than in the destination's column.
    var inverselessJoinTables: Set<String> = []
}

/// The two relationships of a many-to-many pair, in a fixed order.
struct JoinTablePair: Hashable {
    let first: String, second: String

    init(_ a: RelationshipDescription, _ b: RelationshipDescription) {
        let (x, y) = (ModelBuilder.qualifiedName(a), ModelBuilder.qualifiedName(b))
        (first, second) = x < y ? (x, y) : (y, x)
    }
}

extension StoreLayout {
    /// The layout the store at `connection` holds for `model`: its entity numbers, the many-to-many tables it names
    /// after the other side, the to-many relationships without an inverse it keeps in join tables. Entities are
    /// matched by name, or by the name they had before a rename (`renamingIdentifier`); nil when the store's
    /// `Z_PRIMARYKEY` does not hold exactly the model's entities (nothing is adopted, and the schema check names the
    /// difference).
    static func read(_ connection: SQLiteConnection, for model: ManagedObjectModel) throws -> StoreLayout? {
        var layout = StoreLayout()
        let keys = try connection.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT > 0 AND Z_ENT < \(StoreSchemaCheck.firstPrivateEntityNumber) LIMIT \(Limits.storeEntities + 1)")
        var stored: [String: Int] = [:]
        var count = 0
        while try keys.step() {
            count += 1
            stored[keys.text(at: 1)] = Int(keys.int64(at: 0))
        }
        guard count == model.entities.count, stored.count == count, count > 0 else { return nil }
        for entity in model.entities {
            guard let number = stored[entity.name] ?? entity.renamingIdentifier.flatMap({ stored[$0] }) else { return nil }
            layout.entityNumbers[entity.name] = number
        }
        guard Set(layout.entityNumbers.values) == Set(1...model.entities.count) else { return nil }

        // Many-to-many tables: whichever of the two names the store holds.
        var tables: Set<String> = []
        let master = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        while try master.step() { tables.insert(master.text(at: 0).uppercased()) }
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity {
                guard let inverse = relationship.inverse, relationship.isToMany, inverse.isToMany, !relationship.isTransient,
                      let mine = layout.entityNumbers[entity.name], let theirs = layout.entityNumbers[inverse.entity.name] else { continue }
                let own = "Z_\(mine)\(relationship.name.uppercased())", other = "Z_\(theirs)\(inverse.name.uppercased())"
                if tables.contains(own) && !tables.contains(other) {
                    layout.joinTableOwners[JoinTablePair(relationship, inverse)] = ModelBuilder.qualifiedName(relationship)
                }
            }
        }
        // A to-many without an inverse: the destination's column, or (stores of earlier Faultline builds) a join table.
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity && relationship.inverse == nil && relationship.isToMany
                && !relationship.isOrdered && !relationship.isTransient {
                guard let number = layout.entityNumbers[entity.name], let destination = relationship.destination.table?.name else { continue }
                let info = try connection.prepare("SELECT count(*) FROM pragma_table_info(?) WHERE upper(name) = ?")
                info.bind(destination, at: 1)
                info.bind("Z\(number)\(relationship.name.uppercased())", at: 2)
                let hasColumn = try info.step() && info.int64(at: 0) > 0
                if !hasColumn && tables.contains("Z_\(number)\(relationship.name.uppercased())") {
                    layout.inverselessJoinTables.insert(ModelBuilder.qualifiedName(relationship))
                }
            }
        }
        return layout
    }

    /// The layout `model` has now, in the same terms.
    init(of model: ManagedObjectModel) {
        for entity in model.entities {
            entityNumbers[entity.name] = entity.entityNumber
            for relationship in entity.relationships where relationship.entity === entity {
                if relationship.inverse == nil, relationship.isToMany, !relationship.isOrdered, let join = relationship.joinTable, !join.isDestinationTable {
                    inverselessJoinTables.insert(ModelBuilder.qualifiedName(relationship))
                }
                guard let inverse = relationship.inverse, let join = relationship.joinTable, !join.isDestinationTable, join.isOwner else { continue }
                joinTableOwners[JoinTablePair(relationship, inverse)] = ModelBuilder.qualifiedName(relationship)
            }
        }
    }
}
