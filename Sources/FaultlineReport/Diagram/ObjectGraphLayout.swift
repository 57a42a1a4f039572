import Foundation

/// How an object-graph diagram arranges its clusters so that the picture fits a screen: each entity's objects in a
/// grid of `columns` (a long cluster wraps into rows instead of making one tall column), the clusters themselves in
/// a grid of `clustersPerRow`. Graphviz's `osage` packs both grids (`packmode="array_uN"`); this only chooses the
/// numbers, from the labels' text, taking the choice whose estimated width : height is closest to `aspect`.
struct ObjectGraphLayout {
    /// One entity's cluster: its objects (indexes in the diagram's node list, in their order) in `columns`.
    struct Cluster {
        var entity: String
        var nodes: [Int]
        var columns = 1
    }

    var clusters: [Cluster]
    var clustersPerRow = 1

    /// Width : height the choice aims for (a landscape screen).
    static let aspect = 1.5
    /// Points per character of the labels' text at their font size (Helvetica 10 averages about 5.5).
    static let characterWidth = 6.0
    static let lineHeight = 13.0
    /// Points osage leaves between two objects of a cluster and between two clusters (`pack`), and a cluster's
    /// title.
    static let nodePacking = 10, clusterPacking = 16
    static let clusterTitle = 24.0

    /// `lines[i]`: the text lines of node `i`'s label; `entities[i]`: its entity. Clusters keep the order in which
    /// their entities' first objects come.
    init(entities: [String], lines: [[String]]) {
        var clusters: [Cluster] = []
        var slot: [String: Int] = [:]
        for (i, entity) in entities.enumerated() {
            if let at = slot[entity] { clusters[at].nodes.append(i); continue }
            slot[entity] = clusters.count
            clusters.append(Cluster(entity: entity, nodes: [i]))
        }
        // A cell of a cluster's grid fits its widest and tallest label.
        let cells = clusters.map { cluster -> (width: Double, height: Double) in
            let width = cluster.nodes.map { i in Double(lines[i].map(\.count).max() ?? 1) * Self.characterWidth + 16 }.max() ?? 40
            let height = cluster.nodes.map { i in Double(lines[i].count) * Self.lineHeight + 10 }.max() ?? 36
            return (width + Double(Self.nodePacking), height + Double(Self.nodePacking))
        }
        let tallest = clusters.map(\.nodes.count).max() ?? 1
        var best = (score: Double.infinity, rows: 1, perRow: 1)
        var rows = 1
        // Each cluster at most `rows` rows; then every way of putting its clusters in rows.
        while rows <= tallest {
            let sizes = clusters.indices.map { c -> (width: Double, height: Double) in
                let n = clusters[c].nodes.count
                let columns = (n + rows - 1) / rows
                let used = (n + columns - 1) / columns
                return (max(Double(columns) * cells[c].width, Double(clusters[c].entity.count) * 8 + 16) + Double(Self.clusterPacking),
                        Double(used) * cells[c].height + Self.clusterTitle + Double(Self.clusterPacking))
            }
            for perRow in 1...max(1, clusters.count) {
                let score = abs(log(Self.extent(sizes, perRow: perRow) / Self.aspect))
                if score < best.score { best = (score, rows, perRow) }
            }
            // Steps that change some cluster's columns; past `tallest` every cluster is one column.
            rows = rows < 64 ? rows + 1 : rows * 5 / 4
        }
        self.clusters = clusters.map { cluster in
            var sized = cluster
            sized.columns = (cluster.nodes.count + best.rows - 1) / best.rows
            return sized
        }
        clustersPerRow = best.perRow
    }

    /// Width : height of clusters of `sizes` in a grid of `perRow` columns (each column as wide as its widest
    /// cluster, each row as tall as its tallest).
    static func extent(_ sizes: [(width: Double, height: Double)], perRow: Int) -> Double {
        var widths = [Double](repeating: 0, count: perRow), height = 0.0
        for start in stride(from: 0, to: sizes.count, by: perRow) {
            let row = sizes[start..<min(start + perRow, sizes.count)]
            for (k, size) in row.enumerated() { widths[k] = max(widths[k], size.width) }
            height += row.map(\.height).max() ?? 0
        }
        return max(widths.reduce(0, +), 1) / max(height, 1)
    }
}
