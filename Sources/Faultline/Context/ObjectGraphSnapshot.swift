import Foundation

/// A picture of a context's object graph as it is in memory: each registered object with its state, and the
/// relationships it holds — without firing a fault. For diagrams (`faultline diagram --store`) and debugging.
public struct ObjectGraphSnapshot: Sendable {
    /// An object's state in its context.
    public enum State: String, Sendable, CaseIterable {
        /// A fault: its values not loaded.
        case fault
        /// Loaded and unchanged.
        case materialized
        /// Inserted since the last save.
        case inserted
        /// Changed since the last save.
        case updated
        /// Deleted since the last save.
        case deleted
    }

    /// One registered object.
    public struct Node: Sendable, Equatable {
        /// The object's URI (`x-coredata://…/Entity/p12`).
        public var id: String
        /// The object's entity.
        public var entity: String
        /// Its state.
        public var state: State
        /// A name-like attribute's value (`name`, `title`, … or a short string that is not an identifier), when the
        /// object is not a fault: a human handle for the diagram.
        public var title: String?
        /// The relationships this object holds whose destinations are not drawn: one entry per relationship.
        public var elsewhere: [Summary] = []

        /// A node of the picture.
        public init(id: String, entity: String, state: State, title: String?, elsewhere: [Summary] = []) {
            (self.id, self.entity, self.state, self.title, self.elsewhere) = (id, entity, state, title, elsewhere)
        }
    }

    /// A relationship's destinations left out of the picture, counted ("+37 Page"), or a to-many not loaded.
    public struct Summary: Sendable, Equatable {
        /// The relationship's name.
        public var relationship: String
        /// The relationship's destination entity.
        public var entity: String
        /// Destinations not drawn; nil for a to-many not loaded (a relationship fault: its count is unknown without
        /// firing it).
        public var count: Int?

        /// A summary of a relationship's destinations left out.
        public init(relationship: String, entity: String, count: Int?) {
            (self.relationship, self.entity, self.count) = (relationship, entity, count)
        }
    }

    /// A relationship an object holds to another object of the picture.
    public struct Edge: Sendable, Equatable {
        /// The source's URI.
        public var from: String
        /// The destination's URI: always a node of the picture.
        public var to: String
        /// The relationship's name.
        public var relationship: String
        /// The entity that declares the relationship (the source's entity or one of its parents).
        public var entity: String
        /// True when the destination is a fault.
        public var isFault: Bool

        /// An edge of the picture.
        public init(from: String, to: String, relationship: String, entity: String, isFault: Bool) {
            (self.from, self.to, self.relationship, self.entity, self.isFault) = (from, to, relationship, entity, isFault)
        }
    }

    /// The objects drawn.
    public var nodes: [Node]
    /// The relationships between them.
    public var edges: [Edge]
    /// Registered objects left out to stay within the limit.
    public var omitted: Int

    /// A picture of these nodes and edges.
    public init(nodes: [Node], edges: [Edge], omitted: Int) {
        (self.nodes, self.edges, self.omitted) = (nodes, edges, omitted)
    }
}

extension ManagedObjectContext {
    /// The registered objects (at most `limit` nodes: registered objects taken evenly across entities, then the
    /// destinations they reference while there is room) with their states and the relationships they hold in
    /// memory: an edge to each destination drawn, a count per relationship of those not drawn. Destinations that are
    /// not registered appear as faults. Fires no fault.
    public func objectGraphSnapshot(limit: Int = 200) -> ObjectGraphSnapshot {
        if checksQueue { checkQueue(touching: nil) }
        let limit = max(0, limit)
        let all = registeredObjects
        var byEntity: [String: [ManagedObject]] = [:]
        var order: [String] = []
        for object in all {
            if byEntity[object.entity.name] == nil { order.append(object.entity.name) }
            byEntity[object.entity.name, default: []].append(object)
        }
        // Round-robin over entities, so that a big entity does not crowd the others out.
        var chosen: [ManagedObject] = []
        var round = 0
        while chosen.count < limit && chosen.count < all.count {
            var added = false
            for name in order {
                guard let objects = byEntity[name], round < objects.count, chosen.count < limit else { continue }
                chosen.append(objects[round])
                added = true
            }
            if !added { break }
            round += 1
        }
        var nodes: [ObjectGraphSnapshot.Node] = []
        var position: [String: Int] = [:]
        var edges: [ObjectGraphSnapshot.Edge] = []
        func state(_ object: ManagedObject) -> ObjectGraphSnapshot.State {
            object.isDeleted ? .deleted : object.isInserted ? .inserted : object.isUpdated ? .updated : object.isFault ? .fault : .materialized
        }
        func add(_ object: ManagedObject) {
            let id = object.objectID.uriString
            guard position[id] == nil else { return }
            position[id] = nodes.count
            nodes.append(.init(id: id, entity: object.entity.name, state: state(object), title: object.isFault ? nil : Self.title(of: object)))
        }
        chosen.forEach(add)
        /// The destination's node, added while there is room; nil when it is left out.
        func node(for id: ManagedObjectID, _ object: ManagedObject?) -> (uri: String, isFault: Bool)? {
            let uri = id.uriString
            if let at = position[uri] { return (uri, nodes[at].state == .fault) }
            guard nodes.count < limit else { return nil }
            if let object { add(object) } else {
                position[uri] = nodes.count
                nodes.append(.init(id: uri, entity: id.entity.name, state: .fault, title: nil))
            }
            return (uri, object?.isFault ?? true)
        }
        var elsewhere: [(object: ManagedObject, summaries: [ObjectGraphSnapshot.Summary])] = []
        for object in chosen where !object.isFault {
            var summaries: [ObjectGraphSnapshot.Summary] = []
            defer { if !summaries.isEmpty { elsewhere.append((object, summaries)) } }
            let from = object.objectID.uriString
            for relationship in object.entity.relationships where !relationship.isTransient && relationship.index < object.values.count {
                let declaring = relationship.entity?.name ?? object.entity.name
                let destinationName = relationship.destination?.name ?? "?"
                var left = 0
                func link(_ id: ManagedObjectID, _ destination: ManagedObject?) {
                    if let target = node(for: id, destination) {
                        edges.append(.init(from: from, to: target.uri, relationship: relationship.name, entity: declaring, isFault: target.isFault))
                    } else {
                        left += 1
                    }
                }
                switch object.values[relationship.index] {
                case .object(let destination):
                    link(destination.objectID, destination)
                case .integer(let packed):
                    let (key, number) = ToOneReference.unpack(packed, relationship: relationship)
                    guard let entity = number.flatMap({ model.entity(number: $0) }) ?? relationship.destination else { break }
                    let id = ManagedObjectID(entity: entity, key: key, storeIdentifier: coordinator.storeIdentifier)
                    link(id, registeredObject(for: id))
                case .many(let storage):
                    for member in storage.objects { link(member.objectID, member) }
                default:
                    // A to-many not loaded: said, unless members drawn already point at the object through its
                    // inverse (checked below, once every edge is known).
                    if relationship.isToMany {
                        summaries.append(.init(relationship: relationship.name, entity: destinationName, count: nil))
                    }
                }
                if left > 0 { summaries.append(.init(relationship: relationship.name, entity: destinationName, count: left)) }
            }
        }
        let pointedAt = Set(edges.map { "\($0.to)|\($0.relationship)" })
        for (object, summaries) in elsewhere {
            let from = object.objectID.uriString
            guard let at = position[from] else { continue }
            nodes[at].elsewhere = summaries.filter { summary in
                guard summary.count == nil, let inverse = object.entity.relationship(named: summary.relationship)?.inverse, !inverse.isToMany else { return true }
                return !pointedAt.contains("\(from)|\(inverse.name)")
            }
        }
        return ObjectGraphSnapshot(nodes: nodes, edges: edges, omitted: max(0, all.count - chosen.count))
    }
}

extension ManagedObjectContext {
    /// Names that say "this is the object's name", in the order they are preferred.
    static let titleNames = ["name", "title", "displayname", "label", "subject", "heading", "caption", "username", "email"]

    /// The object's handle for a diagram: a name-like attribute's value, else the first short string that is not an
    /// identifier (a UUID, a key), quoted; nil when it has none.
    static func title(of object: ManagedObject) -> String? {
        let strings = object.entity.attributes.filter { $0.type == .string && !$0.isTransient && $0.index < object.values.count }
        func text(_ attribute: AttributeDescription) -> String? {
            guard case .text(let value) = object.values[attribute.index], !value.isEmpty else { return nil }
            return value
        }
        func looksLikeIdentifier(_ attribute: AttributeDescription, _ value: String) -> Bool {
            let name = attribute.name, lower = name.lowercased()
            return UUID(uuidString: value) != nil || ["id", "uuid", "key", "url"].contains(lower) || lower.hasSuffix("identifier")
                || ["Id", "ID", "UUID", "Uuid", "Key", "URL", "Url"].contains { name.hasSuffix($0) } || value.count > 80
        }
        let ranked = strings.sorted { a, b in
            let (x, y) = (Self.titleRank(a.name), Self.titleRank(b.name))
            return x != y ? x < y : a.index < b.index
        }
        for attribute in ranked {
            guard let value = text(attribute), !looksLikeIdentifier(attribute, value) else { continue }
            return ConnectionProbe.literal(.text(value))
        }
        return nil
    }

    /// 0… for the preferred names, then names holding "name" or "title", then the rest.
    static func titleRank(_ name: String) -> Int {
        let lower = name.lowercased()
        if let exact = titleNames.firstIndex(of: lower) { return exact }
        if lower.contains("name") || lower.contains("title") { return titleNames.count }
        return titleNames.count + 1
    }
}
