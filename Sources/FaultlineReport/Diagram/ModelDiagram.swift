import Faultline
import Foundation

/// The entity-relationship diagram of a model, as DOT: one node per entity listing its attributes (type, optional
/// `?`, indexed, unique), its indexes and uniqueness constraints; one edge per relationship pair (inverses merged)
/// with a single arrowhead for to-one and a double one for to-many, as Xcode's model editor draws them, labelled
/// with the names, `ordered` and non-default delete rules; inheritance drawn as dashed edges with hollow heads.
///
/// Graphviz's layout time grows steeply with edges: a model with more than `Limits.diagramLaidOutEntities` entities
/// or `Limits.diagramLaidOutEdges` edges is drawn as a table instead (`Layout.table`: entities in a grid, each
/// listing its relationships and parent, no edges), and one with more than `Limits.diagramEntities` entities shows
/// its first ones; the diagram's title says so.
public struct ModelDiagram {
    /// How the diagram is drawn.
    public enum Layout: Sendable {
        /// Entities as nodes, relationships and inheritance as edges.
        case graph
        /// Entities in a grid, relationships listed in each entity's box.
        case table
    }

    public let model: ManagedObjectModel

    /// The entities drawn: the model's first `Limits.diagramEntities`, in its order.
    public let entities: [EntityDescription]

    public let layout: Layout

    private let edges: [String]

    public init(model: ManagedObjectModel) {
        self.model = model
        let entities = Array(model.entities.prefix(Limits.diagramEntities))
        self.entities = entities
        let shown = Set(entities.map(ObjectIdentifier.init))
        var edges: [String] = []
        for entity in entities {
            if let parent = entity.superentity, shown.contains(ObjectIdentifier(parent)) {
                edges.append("\(Self.id(entity.name)) -> \(Self.id(parent.name)) [style=dashed, arrowhead=empty, color=\"#888888\", tooltip=\"\(Self.quoted(entity.name)) is a \(Self.quoted(parent.name))\"];")
            }
        }
        var drawn: Set<ObjectIdentifier> = []
        for entity in entities {
            for relationship in entity.relationships where relationship.entity === entity && !drawn.contains(ObjectIdentifier(relationship))
                && shown.contains(ObjectIdentifier(relationship.destination)) {
                drawn.insert(ObjectIdentifier(relationship))
                if let inverse = relationship.inverse { drawn.insert(ObjectIdentifier(inverse)) }
                edges.append(Self.edge(relationship))
            }
            // Fetched properties: weak and one-way, dashed with an open head.
            for fetched in entity.declaredFetchedProperties where shown.contains(ObjectIdentifier(fetched.destination)) {
                edges.append("\(Self.id(entity.name)) -> \(Self.id(fetched.destination.name)) [style=dashed, arrowhead=open, color=\"#5577aa\", fontcolor=\"#5577aa\", label=\"\(Self.quoted(fetched.name)) (fetched)\", tooltip=\"\(Self.quoted(entity.name)).\(Self.quoted(fetched.name)): fetched property, \(Self.quoted(fetched.destination.name)) objects\(fetched.predicate.map { " where " + Self.quoted($0.predicateFormat) } ?? "")\"];")
            }
        }
        let fits = entities.count <= Limits.diagramLaidOutEntities && edges.count <= Limits.diagramLaidOutEdges
        self.layout = fits ? .graph : .table
        self.edges = fits ? edges : []
    }

    /// Entities left out because the model has more than `Limits.diagramEntities`.
    public var omittedEntities: Int { model.entities.count - entities.count }

    /// What the diagram leaves out or draws differently, for the title and the command's output; nil when nothing.
    public var note: String? {
        var parts: [String] = []
        if layout == .table {
            parts.append("drawn as a table: more than \(Limits.diagramLaidOutEntities) entities or \(Limits.diagramLaidOutEdges) edges to lay out")
        }
        if omittedEntities > 0 {
            parts.append("\(entities.count) of \(model.entities.count) entities (at most \(Limits.diagramEntities))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    public var dot: String {
        let columns = max(1, Int(Double(entities.count).squareRoot().rounded(.up)))
        var lines = ["digraph model {",
                     layout == .graph
                        ? "  graph [rankdir=LR, fontname=\"Helvetica\", nodesep=0.4, ranksep=0.9];"
                        : "  graph [rankdir=TB, fontname=\"Helvetica\", nodesep=0.3, ranksep=0.3];",
                     "  node [shape=plain, fontname=\"Helvetica\", fontsize=11];",
                     "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];"]
        if let note { lines.append("  label=\"\(Self.quoted(note))\"; labelloc=t;") }
        for entity in entities { lines.append("  \(Self.id(entity.name)) [label=<\(label(entity))>];") }
        switch layout {
        case .graph:
            lines += edges.map { "  " + $0 }
        case .table:
            // Rows of `columns` entities, held in place by invisible edges from each entity to the one below it.
            for i in entities.indices where i + columns < entities.count {
                lines.append("  \(Self.id(entities[i].name)) -> \(Self.id(entities[i + columns].name)) [style=invis];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func edge(_ r: RelationshipDescription) -> String {
        func head(_ toMany: Bool) -> String { toMany ? "normalnormal" : "normal" }
        func describe(_ r: RelationshipDescription) -> String {
            var parts = [r.name]
            if r.isOrdered { parts.append("ordered") }
            if r.deleteRule != .nullify { parts.append("\(r.deleteRule)".lowercased()) }
            if r.isToMany && (r.minCount > 0 || r.maxCount > 0) { parts.append("\(r.minCount)…\(r.maxCount > 0 ? String(r.maxCount) : "*")") }
            return parts.count == 1 ? parts[0] : "\(parts[0]) (\(parts.dropFirst().joined(separator: ", ")))"
        }
        var attributes = ["arrowhead=\(head(r.isToMany))", "label=\"\(quoted(describe(r)))\""]
        if let inverse = r.inverse {
            attributes += ["dir=both", "arrowtail=\(head(inverse.isToMany))", "taillabel=\"\(quoted(describe(inverse)))\"", "labelfontsize=8"]
        } else {
            attributes.append("style=bold")
        }
        return "\(id(r.entity.name)) -> \(id(r.destination.name)) [\(attributes.joined(separator: ", "))];"
    }

    /// An HTML-like label: the entity's name, then a row per attribute, then indexes and constraints.
    private func label(_ entity: EntityDescription) -> String {
        let h = Self.html
        let unique = Set(entity.uniquenessConstraints.filter { $0.count == 1 }.flatMap { $0 })
        var rows = ["<tr><td bgcolor=\"\(entity.isAbstract ? "#e8e8e8" : "#dde8f7")\"><b>\(h(entity.name))</b>\(entity.isAbstract ? " <i>(abstract)</i>" : "")</td></tr>"]
        let inherited = Set(entity.superentity?.attributes.map(\.name) ?? [])
        for attribute in entity.attributes where !inherited.contains(attribute.name) && !attribute.isCompositeElement {
            var text = "\(h(attribute.name)): \(h(attribute.type.rawValue))\(attribute.isOptional ? "?" : "")"
            var marks: [String] = []
            if attribute.isIndexed { marks.append("indexed") }
            if unique.contains(attribute.name) { marks.append("unique") }
            if attribute.isTransient { marks.append("transient") }
            if !marks.isEmpty { text += " <font color=\"#777777\">\(marks.joined(separator: ", "))</font>" }
            rows.append("<tr><td align=\"left\">\(text)</td></tr>")
        }
        if layout == .table {
            if let parent = entity.superentity {
                rows.append("<tr><td align=\"left\"><font color=\"#777777\">is a \(h(parent.name))</font></td></tr>")
            }
            for relationship in entity.relationships where relationship.entity === entity {
                rows.append("<tr><td align=\"left\">\(h(relationship.name)) → \(h(relationship.destination.name))\(relationship.isToMany ? " (to-many)" : "")</td></tr>")
            }
            for fetched in entity.declaredFetchedProperties {
                rows.append("<tr><td align=\"left\"><font color=\"#5577aa\">\(h(fetched.name)) ⇢ \(h(fetched.destinationEntityName)) (fetched)</font></td></tr>")
            }
        }
        for index in entity.compoundIndexes where index.count > 1 {
            rows.append("<tr><td align=\"left\"><font color=\"#777777\">index (\(h(index.joined(separator: ", "))))</font></td></tr>")
        }
        for constraint in entity.uniquenessConstraints where constraint.count > 1 {
            rows.append("<tr><td align=\"left\"><font color=\"#777777\">unique (\(h(constraint.joined(separator: ", "))))</font></td></tr>")
        }
        return "<table border=\"1\" cellborder=\"0\" cellspacing=\"0\" cellpadding=\"3\">\(rows.joined())</table>"
    }

    /// A DOT identifier for a name (quoted).
    static func id(_ name: String) -> String { "\"\(quoted(name))\"" }

    /// Text inside a DOT quoted string; control characters shown as `[U+202E]`.
    static func quoted(_ text: String) -> String {
        HTMLText.showingControls(text).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// Text inside an HTML-like label.
    static func html(_ text: String) -> String {
        HTMLText.showingControls(text).replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
