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

    private enum Reference {
        case local(String)
        case stored(ManagedObjectID)
    }

    /// A record's relationship, set once every record is in (a reference may name a record further on).
    private struct Link {
        let object: ManagedObject
        let entity: EntityDescription
        let label: String
        let relationship: RelationshipDescription
        let references: [Reference]
    }

    public let context: ManagedObjectContext

    /// An importer inserting into `context`.
    public init(context: ManagedObjectContext) { self.context = context }

    /// Loads the data file at `url`, reading it a piece at a time: memory grows with the objects inserted, not with
    /// the file's text.
    public func load(contentsOf url: URL) throws -> Summary {
        try load(contentsOfFile: url.path)
    }

    /// Loads the data file at `path` (see `load(contentsOf:)`); errors name it as given.
    public func load(contentsOfFile path: String) throws -> Summary {
        try load(file: path) { consume in
            do {
                try InputFile.readChunks(path, consume)
            } catch let error as InputFile.Failure {
                throw DataFileError(file: path, problem: "\(error)")
            }
        }
    }

    /// Loads data file contents; `file` names it in errors.
    public func load(_ data: Data, file: String) throws -> Summary {
        try load(file: file) { consume in try data.withUnsafeBytes { try consume($0) } }
    }

    /// Reads the file's records as `feed` hands over its bytes, inserting each as it is read, then sets the
    /// relationships and saves once. Any error rolls the context back: nothing is written.
    private func load(file: String, _ feed: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Summary {
        try context.performAndWait {
            var importer = RecordImporter(context: context, file: file)
            var reader = DataFileReader(file: file)
            do {
                try feed { bytes in try reader.consume(bytes) { try importer.handle($0) } }
                try reader.finish()
                try importer.link()
                try context.save()
            } catch {
                context.rollback()
                if let error = error as? DataFileError { throw error }
                throw DataFileError(file: file, problem: "\(error)")
            }
            return Summary(inserted: importer.counts)
        }
    }

    /// Turns records into inserted objects as they come.
    private struct RecordImporter {
        let context: ManagedObjectContext
        let file: String
        var entity: EntityDescription?
        var seenEntities: Set<String> = []
        var objects: [String: ManagedObject] = [:]
        var links: [Link] = []
        var counts: [String: Int] = [:]

        init(context: ManagedObjectContext, file: String) {
            self.context = context
            self.file = file
        }

        func fail(_ problem: String, entity: String? = nil, record: String? = nil, key: String? = nil) -> DataFileError {
            DataFileError(file: file, entity: entity, record: record, key: key, problem: problem)
        }

        mutating func handle(_ event: DataFileReader.Event) throws {
            switch event {
            case .entity(let name):
                let model = context.model
                guard let found = model.entity(named: name) else {
                    throw fail("the model has no such entity (entities: \(model.entities.map(\.name).joined(separator: ", ")))", entity: name)
                }
                guard !found.isAbstract else { throw fail("the entity is abstract; give records of its sub-entities", entity: name) }
                guard seenEntities.insert(name).inserted else { throw fail("the entity appears twice at the top level", entity: name) }
                entity = found
            case .record(let text, let position):
                try insert(text, position: position)
            }
        }

        private mutating func insert(_ text: Data, position: Int) throws {
            let entity = entity!
            let name = entity.name
            let json: Any
            do { json = try JSONSerialization.jsonObject(with: text) } catch {
                let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? error.localizedDescription
                throw fail("not valid JSON (counting from the record's first character): \(detail)", entity: name, record: "#\(position)")
            }
            guard let record = json as? [String: Any] else { throw fail("must be an object", entity: name, record: "#\(position)") }
            var id: String? = nil
            if let raw = record["@id"] {
                guard let text = raw as? String, !text.isEmpty else { throw fail("'@id' must be a non-empty string", entity: name, record: "#\(position)") }
                id = text
            }
            let label = id.map { "#\(position) (@id \"\($0)\")" } ?? "#\(position)"
            let object = try context.insertNewObject(forEntityName: name)
            if let id {
                guard objects[id] == nil else { throw fail("'@id' \"\(id)\" is used twice", entity: name, record: label) }
                objects[id] = object
            }
            counts[name, default: 0] += 1
            for key in record.keys.sorted() where key != "@id" {
                guard let property = entity.property(named: key) else {
                    throw fail("no such attribute or relationship on \(name)", entity: name, record: label, key: key)
                }
                let value = record[key]!
                if let attribute = property as? AttributeDescription {
                    let converted: Any?
                    if value is NSNull { converted = nil } else {
                        do { converted = try JSONValueDecoding.value(fromJSON: value, type: attribute.type) } catch let error as ValueError {
                            throw fail(error.problem, entity: name, record: label, key: key)
                        }
                    }
                    do { try object.setValue(converted, forKey: key) } catch {
                        throw fail("\(error)", entity: name, record: label, key: key)
                    }
                } else if let relationship = property as? RelationshipDescription {
                    let references: [Any]
                    if relationship.isToMany {
                        guard let list = value as? [Any] else { throw fail("a to-many relationship takes an array of references", entity: name, record: label, key: key) }
                        references = list
                    } else {
                        references = value is NSNull ? [] : [value]
                    }
                    var parsed: [Reference] = []
                    for reference in references {
                        guard let text = reference as? String else {
                            throw fail("a reference must be an @id string or an object URI", entity: name, record: label, key: key)
                        }
                        if text.hasPrefix("x-coredata://") {
                            guard let id = context.objectID(forURIString: text) else {
                                throw fail("'\(text)' is not an object URI of this store", entity: name, record: label, key: key)
                            }
                            parsed.append(.stored(id))
                        } else {
                            parsed.append(.local(text))
                        }
                    }
                    links.append(Link(object: object, entity: entity, label: label, relationship: relationship, references: parsed))
                }
            }
        }

        /// Sets every relationship, once all records are in: each reference must resolve, to an object of the
        /// destination entity.
        mutating func link() throws {
            for link in links {
                let relationship = link.relationship
                var targets: [ManagedObject] = []
                for reference in link.references {
                    let target: ManagedObject
                    switch reference {
                    case .local(let id):
                        guard let object = objects[id] else {
                            throw fail("dangling reference \"\(id)\": no record has that @id", entity: link.entity.name, record: link.label, key: relationship.name)
                        }
                        target = object
                    case .stored(let id):
                        guard id.entity.isKind(of: relationship.destination) else {
                            throw fail("reference to a \(id.entity.name), but \(relationship.name) holds \(relationship.destination.name) objects", entity: link.entity.name, record: link.label, key: relationship.name)
                        }
                        target = try context.existingObject(with: id)
                    }
                    guard target.entity.isKind(of: relationship.destination) else {
                        throw fail("reference to a \(target.entity.name), but \(relationship.name) holds \(relationship.destination.name) objects", entity: link.entity.name, record: link.label, key: relationship.name)
                    }
                    targets.append(target)
                }
                try link.object.setValue(relationship.isToMany ? targets : targets.first, forKey: relationship.name)
            }
            links.removeAll()
        }
    }
}
