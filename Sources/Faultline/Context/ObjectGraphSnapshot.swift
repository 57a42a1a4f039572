import Foundation

/// A picture of a context's object graph as it is in memory: each registered object with its state, and the
/// relationships it holds — without firing a fault. For diagrams (`faultline diagram --store`) and debugging.
public struct ObjectGraphSnapshot: Sendable {
    public enum State: String, Sendable, CaseIterable {
        case fault, materialized, inserted, updated, deleted
    }

    public struct Node: Sendable, Equatable {
        /// The object's URI (`x-coredata://…/Entity/p12`).
        public var id: String
        public var entity: String
        public var state: State
        /// A name-like attribute's value (`name`, `title`, … or a short string that is not an identifier), when the
        /// object is not a fault: a human handle for the diagram.
        public var title: String?
    }

    public struct Edge: Sendable, Equatable {
        public var from: String
        /// The destination's URI; nil for a to-many relationship not loaded yet (a relationship fault).
        public var to: String?
        public var relationship: String
        /// True when the destination is a fault or the relationship itself has not been loaded.
        public var isFault: Bool
        /// For a to-many not loaded: its inverse to-one, whose edges from the members already drawn show the links.
        public var inverse: String? = nil
    }

    public var nodes: [Node]
    public var edges: [Edge]
    /// Registered objects left out to stay within the limit.
    public var omitted: Int
}

extension ManagedObjectContext {
    /// The registered objects (at most `limit`, taken evenly across entities) with their states and the
    /// relationships they hold in memory; destinations outside the picture appear as faults. Fires no fault.
    public func objectGraphSnapshot(limit: Int = 200) -> ObjectGraphSnapshot {
        if checksQueue { checkQueue(touching: nil) }
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
        var known: Set<String> = []
        var edges: [ObjectGraphSnapshot.Edge] = []
        func state(_ object: ManagedObject) -> ObjectGraphSnapshot.State {
            object.isDeleted ? .deleted : object.isInserted ? .inserted : object.isUpdated ? .updated : object.isFault ? .fault : .materialized
        }
        func add(_ object: ManagedObject) {
            let id = object.objectID.uriString
            guard known.insert(id).inserted else { return }
            let title = object.isFault ? nil : Self.title(of: object)
            nodes.append(.init(id: id, entity: object.entity.name, state: state(object), title: title))
        }
        chosen.forEach(add)
        for object in chosen where !object.isFault {
            let from = object.objectID.uriString
            for relationship in object.entity.relationships where !relationship.isTransient && relationship.index < object.values.count {
                switch object.values[relationship.index] {
                case .object(let destination):
                    add(destination)
                    edges.append(.init(from: from, to: destination.objectID.uriString, relationship: relationship.name, isFault: destination.isFault))
                case .integer(let packed):
                    let (key, number) = ToOneReference.unpack(packed, relationship: relationship)
                    let entity = number.flatMap { model.entity(number: $0) } ?? relationship.destination!
                    let id = ManagedObjectID(entity: entity, key: key, storeIdentifier: coordinator.storeIdentifier)
                    if let registered = registeredObject(for: id) {
                        add(registered)
                        edges.append(.init(from: from, to: id.uriString, relationship: relationship.name, isFault: registered.isFault))
                    } else {
                        if known.insert(id.uriString).inserted { nodes.append(.init(id: id.uriString, entity: entity.name, state: .fault, title: nil)) }
                        edges.append(.init(from: from, to: id.uriString, relationship: relationship.name, isFault: true))
                    }
                case .many(let storage):
                    for member in storage.objects {
                        add(member)
                        edges.append(.init(from: from, to: member.objectID.uriString, relationship: relationship.name, isFault: member.isFault))
                    }
                default:
                    if relationship.isToMany {
                        edges.append(.init(from: from, to: nil, relationship: relationship.name, isFault: true,
                                           inverse: relationship.inverse.flatMap { $0.isToMany ? nil : $0.name }))
                    }
                }
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
