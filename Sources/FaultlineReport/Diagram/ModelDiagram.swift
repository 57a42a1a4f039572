import Faultline
import Foundation

/// The entity-relationship diagram of a model, as DOT: one node per entity listing its attributes (type, optional
/// `?`, indexed, unique), its indexes and uniqueness constraints; one edge per relationship pair (inverses merged)
/// with a single arrowhead for to-one and a double one for to-many, as Xcode's model editor draws them, labelled
/// with the names, `ordered` and non-default delete rules; inheritance drawn as dashed edges with hollow heads.
public struct ModelDiagram {
    public let model: ManagedObjectModel

    public init(model: ManagedObjectModel) { self.model = model }

    public var dot: String {
        var lines = ["digraph model {",
                     "  graph [rankdir=LR, fontname=\"Helvetica\", nodesep=0.4, ranksep=0.9];",
                     "  node [shape=plain, fontname=\"Helvetica\", fontsize=11];",
                     "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];"]
        for entity in model.entities { lines.append("  \(Self.id(entity.name)) [label=<\(label(entity))>];") }
        for entity in model.entities {
            if let parent = entity.superentity {
                lines.append("  \(Self.id(entity.name)) -> \(Self.id(parent.name)) [style=dashed, arrowhead=empty, color=\"#888888\", tooltip=\"\(entity.name) is a \(parent.name)\"];")
            }
        }
        var drawn: Set<ObjectIdentifier> = []
        for entity in model.entities {
            for relationship in entity.relationships where relationship.entity === entity && !drawn.contains(ObjectIdentifier(relationship)) {
                drawn.insert(ObjectIdentifier(relationship))
                if let inverse = relationship.inverse { drawn.insert(ObjectIdentifier(inverse)) }
                lines.append("  " + edge(relationship))
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    private func edge(_ r: RelationshipDescription) -> String {
        func head(_ toMany: Bool) -> String { toMany ? "normalnormal" : "normal" }
        func describe(_ r: RelationshipDescription) -> String {
            var parts = [r.name]
            if r.isOrdered { parts.append("ordered") }
            if r.deleteRule != .nullify { parts.append("\(r.deleteRule)".lowercased()) }
            if r.isToMany && (r.minCount > 0 || r.maxCount > 0) { parts.append("\(r.minCount)…\(r.maxCount > 0 ? String(r.maxCount) : "*")") }
            return parts.count == 1 ? parts[0] : "\(parts[0]) (\(parts.dropFirst().joined(separator: ", ")))"
        }
        var attributes = ["arrowhead=\(head(r.isToMany))", "label=\"\(Self.quoted(describe(r)))\""]
        if let inverse = r.inverse {
            attributes += ["dir=both", "arrowtail=\(head(inverse.isToMany))", "taillabel=\"\(Self.quoted(describe(inverse)))\"", "labelfontsize=8"]
        } else {
            attributes.append("style=bold")
        }
        return "\(Self.id(r.entity.name)) -> \(Self.id(r.destination.name)) [\(attributes.joined(separator: ", "))];"
    }

    /// An HTML-like label: the entity's name, then a row per attribute, then indexes and constraints.
    private func label(_ entity: EntityDescription) -> String {
        let h = Self.html
        let unique = Set(entity.uniquenessConstraints.filter { $0.count == 1 }.flatMap { $0 })
        var rows = ["<tr><td bgcolor=\"\(entity.isAbstract ? "#e8e8e8" : "#dde8f7")\"><b>\(h(entity.name))</b>\(entity.isAbstract ? " <i>(abstract)</i>" : "")</td></tr>"]
        let inherited = Set(entity.superentity?.attributes.map(\.name) ?? [])
        for attribute in entity.attributes where !inherited.contains(attribute.name) {
            var text = "\(h(attribute.name)): \(h(attribute.type.rawValue))\(attribute.isOptional ? "?" : "")"
            var marks: [String] = []
            if attribute.isIndexed { marks.append("indexed") }
            if unique.contains(attribute.name) { marks.append("unique") }
            if attribute.isTransient { marks.append("transient") }
            if !marks.isEmpty { text += " <font color=\"#777777\">\(marks.joined(separator: ", "))</font>" }
            rows.append("<tr><td align=\"left\">\(text)</td></tr>")
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

    static func quoted(_ text: String) -> String { text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") }

    /// Text inside an HTML-like label.
    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
