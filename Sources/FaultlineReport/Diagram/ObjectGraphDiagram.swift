import Faultline
import Foundation

/// A snapshot of live objects as DOT: one node per object coloured by state (fault, materialized, inserted,
/// updated, deleted) and titled by a name-like attribute, each entity's objects in a cluster titled with the entity,
/// an edge per relationship to an object drawn — coloured by relationship, dashed when it leads to a fault — and,
/// in the object's box, a count per relationship of the destinations not drawn ("+37 Page"). A legend shows each
/// state's colour and each relationship's.
///
/// Laid out by Graphviz's `osage` (`layout=osage` in the graph, so that a saved DOT file draws the same): each
/// cluster a grid of objects in key order, the clusters a grid, the numbers chosen by `ObjectGraphLayout` so that
/// the picture fits a screen. Edges are straight lines drawn beneath the boxes (osage's spline router aborts the
/// process on some inputs: a GTS assertion). Each relationship is named once, on one of its edges, and only where
/// the name covers nothing (`forcelabels=false`, then `render(as:)` checks Graphviz's layout): the legend names them
/// all.
public struct ObjectGraphDiagram {
    public let snapshot: ObjectGraphSnapshot

    public init(snapshot: ObjectGraphSnapshot) { self.snapshot = snapshot }

    static let colors: [ObjectGraphSnapshot.State: String] = [
        .fault: "#eeeeee", .materialized: "#cfe3ff", .inserted: "#c8f0c8", .updated: "#fff0b3", .deleted: "#f6c6c6",
    ]
    /// Relationship colours, in the order relationships first appear (then again from the start).
    static let edgeColors = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#9c755f", "#76b7b2", "#d4a017", "#ff6f91", "#7f7f7f"]
    /// Characters of a title shown in a box.
    static let titleLength = 40
    /// Relationships named in one row of the legend.
    static let legendColumns = 5

    /// The DOT text, each relationship named on its first edge.
    public var dot: String { dot(naming: firstEdges) }

    /// The picture in `format`. Graphviz leaves some edge names over a box or another name: those are found in its
    /// layout and left out (the legend names every relationship), at most `Self.labelPasses` times, then all.
    public func render(as format: GraphvizRenderer.Format) throws -> Data {
        var named = firstEdges
        for _ in 0..<Self.labelPasses {
            let text = dot(naming: named)
            let layout = try GraphvizRenderer.render(text, as: .json)
            let covering = try GraphvizLayout(json: layout).coveringEdgeLabels.compactMap { Int($0.dropFirst()) }
            if covering.isEmpty { return format == .json ? layout : try GraphvizRenderer.render(text, as: format) }
            named.subtract(covering)
        }
        return try GraphvizRenderer.render(dot(naming: []), as: format)
    }

    /// Layouts tried before every edge name is left out.
    static let labelPasses = 3

    /// The first edge of each relationship (by its declaring entity and name), which names it.
    private var firstEdges: Set<Int> {
        var seen = Set<String>(), first = Set<Int>()
        for (i, edge) in snapshot.edges.enumerated() where seen.insert("\(edge.entity).\(edge.relationship)").inserted { first.insert(i) }
        return first
    }

    private func dot(naming named: Set<Int>) -> String {
        let id = ModelDiagram.id, html = ModelDiagram.html
        // Objects of an entity in key order (p2 before p10), entities in the order they first come.
        var firstIndex: [String: Int] = [:]
        for (i, node) in snapshot.nodes.enumerated() where firstIndex[node.entity] == nil { firstIndex[node.entity] = i }
        let order = snapshot.nodes.indices.sorted { a, b in
            let (x, y) = (snapshot.nodes[a], snapshot.nodes[b])
            return x.entity != y.entity ? firstIndex[x.entity]! < firstIndex[y.entity]! : Self.keyOrder(x.id, y.id)
        }
        var lines = ["digraph objects {",
                     "  graph [layout=osage, fontname=\"Helvetica\", fontsize=11, splines=false, outputorder=edgesfirst, forcelabels=false];",
                     "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, margin=\"0.08,0.04\"];",
                     "  edge [fontname=\"Helvetica\", fontsize=9, arrowsize=0.6];"]
        // Relationships by their declaring entity and name, in the order they first appear: colour and legend.
        var relationships: [String] = []
        var colorOf: [String: String] = [:]
        for edge in snapshot.edges {
            let key = "\(edge.entity).\(edge.relationship)"
            guard colorOf[key] == nil else { continue }
            colorOf[key] = Self.edgeColors[relationships.count % Self.edgeColors.count]
            relationships.append(key)
        }
        lines.append("  label=<\(legend(relationships, colorOf))>; labelloc=b;")
        // Each box's text: title, key, and the relationships whose destinations are not drawn.
        let texts = snapshot.nodes.map { node -> [String] in
            var text = node.title.map { [String($0.prefix(Self.titleLength)), Self.key(node.id)] } ?? [Self.key(node.id)]
            if !node.elsewhere.isEmpty { text.append(Self.summary(node.elsewhere)) }
            return text
        }
        let layout = ObjectGraphLayout(entities: order.map { snapshot.nodes[$0].entity }, lines: order.map { texts[$0] })
        lines.append("  pack=\(ObjectGraphLayout.clusterPacking); packmode=\"array_u\(layout.clustersPerRow)\";")
        for (c, cluster) in layout.clusters.enumerated() {
            lines.append("  subgraph cluster_\(c) {")
            lines.append("    label=<<b>\(html(cluster.entity))</b>>; labelloc=t; fontsize=12; style=\"rounded\"; color=\"#bbbbbb\"; sortv=\(c);")
            lines.append("    pack=\(ObjectGraphLayout.nodePacking); packmode=\"array_u\(cluster.columns)\";")
            for (k, position) in cluster.nodes.enumerated() {
                let i = order[position]
                let node = snapshot.nodes[i]
                lines.append("    \(id(node.id)) [label=<\(label(texts[i], hasTitle: node.title != nil, hasSummary: !node.elsewhere.isEmpty))>, fillcolor=\"\(Self.colors[node.state]!)\", sortv=\(k), tooltip=\"\(ModelDiagram.quoted(node.id)) (\(node.state.rawValue))\"];")
            }
            lines.append("  }")
        }
        for (i, edge) in snapshot.edges.enumerated() {
            let key = "\(edge.entity).\(edge.relationship)"
            let name = named.contains(i) ? ", xlabel=\"\(ModelDiagram.quoted(edge.relationship))\"" : ""
            lines.append("  \(id(edge.from)) -> \(id(edge.to)) [id=\"e\(i)\", color=\"\(colorOf[key]!)\", fontcolor=\"\(colorOf[key]!)\", tooltip=\"\(ModelDiagram.quoted(key))\"\(edge.isFault ? ", style=dashed" : "")\(name)];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The last part of an object's URI (`p12`).
    static func key(_ uri: String) -> String { uri.split(separator: "/").last.map(String.init) ?? uri }

    /// `p2` before `p10`: by the number after the key's letter, else by text.
    static func keyOrder(_ a: String, _ b: String) -> Bool {
        let (x, y) = (key(a), key(b))
        if let m = Int(x.drop { !$0.isNumber }), let n = Int(y.drop { !$0.isNumber }), m != n { return m < n }
        return x < y
    }

    /// A box's HTML-like label: the title in bold, the key, the summary small.
    private func label(_ text: [String], hasTitle: Bool, hasSummary: Bool) -> String {
        let html = ModelDiagram.html
        var parts: [String] = []
        for (k, line) in text.enumerated() {
            if k == 0 && hasTitle { parts.append("<b>\(html(line))</b>") }
            else if k == text.count - 1 && hasSummary { parts.append("<font point-size=\"8\" color=\"#555555\">\(html(line))</font>") }
            else { parts.append(html(line)) }
        }
        return parts.joined(separator: "<br/>")
    }

    /// "+37 Page · +1 Customer · notes: not loaded" (a relationship's name added when two lead to one entity).
    static func summary(_ summaries: [ObjectGraphSnapshot.Summary]) -> String {
        summaries.map { s in
            guard let count = s.count else { return "\(s.relationship): not loaded" }
            let shared = summaries.filter { $0.count != nil && $0.entity == s.entity }.count > 1
            return "+\(count) \(s.entity)" + (shared ? " (\(s.relationship))" : "")
        }.joined(separator: " · ")
    }

    /// The legend: a sample of each state's colour, named; each relationship's colour, named; objects left out.
    private func legend(_ relationships: [String], _ colorOf: [String: String]) -> String {
        let html = ModelDiagram.html
        var states = "<table border=\"0\" cellspacing=\"4\" cellpadding=\"3\"><tr>"
        if snapshot.omitted > 0 { states += "<td>\(snapshot.omitted) more registered objects not shown</td>" }
        for state in ObjectGraphSnapshot.State.allCases {
            states += "<td bgcolor=\"\(Self.colors[state]!)\" border=\"1\" color=\"#999999\">\(state.rawValue)</td>"
        }
        states += "<td>dashed: to a fault · +N Entity: related objects not drawn</td></tr></table>"
        var legend = "<table border=\"0\" cellspacing=\"0\" cellpadding=\"0\"><tr><td>\(states)</td></tr>"
        if !relationships.isEmpty {
            // A few relationships to a row, so that a model with many does not make the picture wide.
            var row = "<table border=\"0\" cellspacing=\"4\" cellpadding=\"1\">"
            for start in stride(from: 0, to: relationships.count, by: Self.legendColumns) {
                row += "<tr>" + relationships[start..<min(start + Self.legendColumns, relationships.count)].map { key in
                    "<td align=\"left\"><font color=\"\(colorOf[key]!)\">━━ \(html(key))</font></td>"
                }.joined() + "</tr>"
            }
            legend += "<tr><td>\(row)</table></td></tr>"
        }
        return legend + "</table>"
    }
}
