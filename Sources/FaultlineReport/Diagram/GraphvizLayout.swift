import Foundation

/// A layout Graphviz made, read from its JSON output: the boxes of the nodes and of the text it draws (node, cluster
/// and graph labels, and edge labels by the edge's `id`), to find edge labels that cover something — Graphviz's
/// placement with `forcelabels=false` leaves some over a node or another label.
struct GraphvizLayout {
    struct Box {
        var minX, minY, maxX, maxY: Double
        func overlaps(_ other: Box) -> Bool {
            let slack = 0.5
            return minX < other.maxX - slack && other.minX < maxX - slack && minY < other.maxY - slack && other.minY < maxY - slack
        }
    }

    /// Node boxes, cluster and graph label text.
    var fixed: [Box] = []
    /// Each labelled edge's label text, by the edge's `id`.
    var edgeLabels: [(id: String, boxes: [Box])] = []

    init(json: Data) throws {
        guard let layout = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw ReportError("Graphviz's JSON layout is not an object")
        }
        fixed += Self.textBoxes(layout["_ldraw_"])
        for object in layout["objects"] as? [[String: Any]] ?? [] {
            if object["nodes"] != nil {
                fixed += Self.textBoxes(object["_ldraw_"])
                continue
            }
            let pos = (object["pos"] as? String ?? "").split(separator: ",").compactMap { Double($0) }
            guard pos.count == 2 else { continue }
            let w = (Double(object["width"] as? String ?? "") ?? 0) * 36, h = (Double(object["height"] as? String ?? "") ?? 0) * 36
            fixed.append(Box(minX: pos[0] - w, minY: pos[1] - h, maxX: pos[0] + w, maxY: pos[1] + h))
        }
        for edge in layout["edges"] as? [[String: Any]] ?? [] where edge["xlp"] != nil || edge["lp"] != nil {
            guard let id = edge["id"] as? String else { continue }
            edgeLabels.append((id, Self.textBoxes(edge["_ldraw_"]) + Self.textBoxes(edge["_xldraw_"])))
        }
    }

    /// The ids of edges whose label covers a node, a cluster's or the graph's label, or an earlier edge's label.
    var coveringEdgeLabels: Set<String> {
        var covering = Set<String>(), kept: [Box] = []
        for (id, boxes) in edgeLabels {
            if boxes.contains(where: { box in fixed.contains { box.overlaps($0) } || kept.contains { box.overlaps($0) } }) {
                covering.insert(id)
            } else {
                kept += boxes
            }
        }
        return covering
    }

    /// The boxes of the text a drawing's operations write (`T`: baseline point, alignment, width; `F`: font size).
    static func textBoxes(_ operations: Any?) -> [Box] {
        var size = 14.0, boxes: [Box] = []
        for op in operations as? [[String: Any]] ?? [] {
            if op["op"] as? String == "F" { size = op["size"] as? Double ?? size }
            guard op["op"] as? String == "T", let pt = op["pt"] as? [Double], pt.count == 2, let width = op["width"] as? Double else { continue }
            let left = op["align"] as? String == "l" ? pt[0] : op["align"] as? String == "r" ? pt[0] - width : pt[0] - width / 2
            boxes.append(Box(minX: left, minY: pt[1] - size * 0.25, maxX: left + width, maxY: pt[1] + size * 0.75))
        }
        return boxes
    }
}
