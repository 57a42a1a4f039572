import Faultline
import Foundation

/// Loads a JSON data file (docs/data-format.md) into a store: every record is checked first, then all are
/// inserted and saved in one transaction, so bad data writes nothing.
public struct DataImporter {
    /// What a load did.
    public struct Summary: Sendable, Equatable {
        /// Objects inserted, by entity.
        public var inserted: [String: Int]
        /// All objects inserted.
        public var total: Int { inserted.values.reduce(0, +) }
    }

    private struct Record {
        let entity: EntityDescription
        let position: Int
        let id: String?
        var attributes: [(AttributeDescription, Any?)] = []
        var relationships: [(RelationshipDescription, [Reference])] = []
        var label: String { id.map { "#\(position) (@id \"\($0)\")" } ?? "#\(position)" }
    }

    private enum Reference {
        case local(String)
        case stored(ManagedObjectID)
    }

    public let context: ManagedObjectContext

    /// An importer inserting into `context`.
    public init(context: ManagedObjectContext) { self.context = context }

    /// Loads the data file at `url`.
    public func load(contentsOf url: URL) throws -> Summary {
        let data: Data
        do { data = try InputFile.read(url.path) } catch {
            throw DataFileError(file: url.path, problem: "\(error)")
        }
        return try load(data, file: url.path)
    }

    /// Loads data file contents; `file` names it in errors.
    public func load(_ data: Data, file: String) throws -> Summary {
        let records = try parse(data, file: file)
        return try context.performAndWait { try insert(records, file: file) }
    }

    private func parse(_ data: Data, file: String) throws -> [Record] {
        func fail(_ problem: String, entity: String? = nil, record: String? = nil, key: String? = nil) -> DataFileError {
            DataFileError(file: file, entity: entity, record: record, key: key, problem: problem)
        }
        let json: Any
        do { json = try JSONSerialization.jsonObject(with: data) } catch {
            let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? error.localizedDescription
            throw fail("not valid JSON: \(detail)")
        }
        guard let top = json as? [String: Any] else { throw fail("the top level must be an object of entity names to arrays of records") }
        let model = context.model
        var records: [Record] = []
        var ids: [String: EntityDescription] = [:]
        for name in top.keys.sorted() {
            guard let entity = model.entity(named: name) else {
                throw fail("the model has no such entity (entities: \(model.entities.map(\.name).joined(separator: ", ")))", entity: name)
            }
            guard !entity.isAbstract else { throw fail("the entity is abstract; give records of its sub-entities", entity: name) }
            guard let list = top[name] as? [Any] else { throw fail("must be an array of records", entity: name) }
            for (i, item) in list.enumerated() {
                guard let object = item as? [String: Any] else { throw fail("must be an object", entity: name, record: "#\(i + 1)") }
                var id: String? = nil
                if let raw = object["@id"] {
                    guard let text = raw as? String, !text.isEmpty else { throw fail("'@id' must be a non-empty string", entity: name, record: "#\(i + 1)") }
                    id = text
                }
                var record = Record(entity: entity, position: i + 1, id: id)
                if let id {
                    guard ids[id] == nil else { throw fail("'@id' \"\(id)\" is used twice", entity: name, record: record.label) }
                    ids[id] = entity
                }
                for key in object.keys.sorted() where key != "@id" {
                    guard let property = entity.property(named: key) else {
                        throw fail("no such attribute or relationship on \(name)", entity: name, record: record.label, key: key)
                    }
                    let value = object[key]!
                    if let attribute = property as? AttributeDescription {
                        if value is NSNull { record.attributes.append((attribute, nil)); continue }
                        do {
                            let converted = try JSONValueDecoding.value(fromJSON: value, type: attribute.type)
                            record.attributes.append((attribute, converted))
                        } catch let error as ValueError {
                            throw fail(error.problem, entity: name, record: record.label, key: key)
                        }
                    } else if let relationship = property as? RelationshipDescription {
                        let references: [Any]
                        if relationship.isToMany {
                            guard let list = value as? [Any] else { throw fail("a to-many relationship takes an array of references", entity: name, record: record.label, key: key) }
                            references = list
                        } else if value is NSNull {
                            references = []
                        } else {
                            references = [value]
                        }
                        var parsed: [Reference] = []
                        for reference in references {
                            guard let text = reference as? String else {
                                throw fail("a reference must be an @id string or an object URI", entity: name, record: record.label, key: key)
                            }
                            if text.hasPrefix("x-coredata://") {
                                guard let id = context.objectID(forURIString: text) else {
                                    throw fail("'\(text)' is not an object URI of this store", entity: name, record: record.label, key: key)
                                }
                                parsed.append(.stored(id))
                            } else {
                                parsed.append(.local(text))
                            }
                        }
                        record.relationships.append((relationship, parsed))
                    }
                }
                records.append(record)
            }
        }
        // Every reference must resolve, to an object of the destination entity.
        for record in records {
            for (relationship, references) in record.relationships {
                for reference in references {
                    let target: EntityDescription
                    switch reference {
                    case .local(let id):
                        guard let entity = ids[id] else {
                            throw fail("dangling reference \"\(id)\": no record has that @id", entity: record.entity.name, record: record.label, key: relationship.name)
                        }
                        target = entity
                    case .stored(let id):
                        target = id.entity
                    }
                    guard target.isKind(of: relationship.destination) else {
                        throw fail("reference to a \(target.name), but \(relationship.name) holds \(relationship.destination.name) objects", entity: record.entity.name, record: record.label, key: relationship.name)
                    }
                }
            }
        }
        return records
    }

    private func insert(_ records: [Record], file: String) throws -> Summary {
        var objects: [String: ManagedObject] = [:]
        var created: [ManagedObject] = []
        var counts: [String: Int] = [:]
        do {
            for record in records {
                let object = try context.insertNewObject(forEntityName: record.entity.name)
                created.append(object)
                if let id = record.id { objects[id] = object }
                counts[record.entity.name, default: 0] += 1
                for (attribute, value) in record.attributes { try object.setValue(value, forKey: attribute.name) }
            }
            for (record, object) in zip(records, created) {
                for (relationship, references) in record.relationships {
                    let targets = try references.map { reference -> ManagedObject in
                        switch reference {
                        case .local(let id): return objects[id]!
                        case .stored(let id): return try context.existingObject(with: id)
                        }
                    }
                    try object.setValue(relationship.isToMany ? targets : targets.first, forKey: relationship.name)
                }
            }
            try context.save()
        } catch {
            context.rollback()
            if let error = error as? DataFileError { throw error }
            throw DataFileError(file: file, problem: "\(error)")
        }
        return Summary(inserted: counts)
    }
}
