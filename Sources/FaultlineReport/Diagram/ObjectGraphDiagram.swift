import Faultline
import Foundation

/// A snapshot of live objects as DOT: one node per object coloured by state (fault, materialized, inserted,
/// updated, deleted), objects of an entity grouped in a cluster, an edge per relationship held in memory — dashed
/// when it leads to a fault or is a relationship fault itself — and a note when objects were left out.
///
/// Edge names are `xlabel`s, placed after the layout: a `label` on an edge between two nodes of one rank inside a
/// cluster makes Graphviz 2.42's dot (Debian's) free a rank array twice (`flat_edges`, then `gvFreeLayout`).
public struct ObjectGraphDiagram {
    public let snapshot: ObjectGraphSnapshot

    public init(snapshot: ObjectGraphSnapshot) { self.snapshot = snapshot }

    static let colors: [ObjectGraphSnapshot.State: String] = [
        .fault: "#eeeeee", .materialized: "#cfe3ff", .inserted: "#c8f0c8", .updated: "#fff0b3", .deleted: "#f6c6c6",
    ]

    public var dot: String {
        let id = ModelDiagram.id, quoted = ModelDiagram.quoted
        var lines = ["digraph objects {",
                     "  graph [rankdir=LR, fontname=\"Helvetica\", fontsize=11, compound=true];",
                     "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];",
                     "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#666666\"];"]
        // The legend: a sample of each state's colour, named; objects left out said first.
        var legend = "<table border=\"0\" cellspacing=\"4\" cellpadding=\"3\"><tr>"
        if snapshot.omitted > 0 { legend += "<td>\(snapshot.omitted) more registered objects not shown</td>" }
        for state in ObjectGraphSnapshot.State.allCases {
            legend += "<td bgcolor=\"\(Self.colors[state]!)\" border=\"1\" color=\"#999999\">\(state.rawValue)</td>"
        }
        legend += "<td>dashed: a fault, or a relationship not loaded</td></tr></table>"
        lines.append("  label=<\(legend)>; labelloc=b;")
        var byEntity: [String: [ObjectGraphSnapshot.Node]] = [:]
        var order: [String] = []
        for node in snapshot.nodes {
            if byEntity[node.entity] == nil { order.append(node.entity) }
            byEntity[node.entity, default: []].append(node)
        }
        for (i, entity) in order.enumerated() {
            lines.append("  subgraph cluster_\(i) {")
            lines.append("    label=\(id(entity)); labelloc=t; fontsize=12; style=\"rounded\"; color=\"#bbbbbb\";")
            for node in byEntity[entity]! {
                let key = node.id.split(separator: "/").last.map(String.init) ?? node.id
                let text = node.title.map { "\(key)\\n\(quoted(String($0.prefix(40))))" } ?? key
                lines.append("    \(id(node.id)) [label=\"\(text)\", fillcolor=\"\(Self.colors[node.state]!)\", tooltip=\"\(quoted(node.id)) (\(node.state.rawValue))\"];")
            }
            lines.append("  }")
        }
        var unloaded = 0
        // A to-many not loaded needs no stub where its members are drawn with their inverse's edges to it.
        let pointedAt = Set(snapshot.edges.compactMap { edge in edge.to.map { "\($0)|\(edge.relationship)" } })
        for edge in snapshot.edges {
            let style = edge.isFault ? ", style=dashed" : ""
            if edge.to == nil, let inverse = edge.inverse, pointedAt.contains("\(edge.from)|\(inverse)") { continue }
            if let to = edge.to {
                lines.append("  \(id(edge.from)) -> \(id(to)) [xlabel=\"\(quoted(edge.relationship))\"\(style)];")
            } else {
                unloaded += 1
                lines.append("  \"unloaded_\(unloaded)\" [label=\"…\", shape=plaintext, style=\"\", tooltip=\"relationship fault: not loaded\"];")
                lines.append("  \(id(edge.from)) -> \"unloaded_\(unloaded)\" [xlabel=\"\(quoted(edge.relationship))\", style=dashed];")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}
