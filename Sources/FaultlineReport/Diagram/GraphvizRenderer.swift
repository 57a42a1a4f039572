import CGraphviz
import Foundation

/// Renders DOT text with Graphviz's libraries in-process (cgraph reads it, gvc lays it out with `dot` and renders
/// it): SVG, PNG, DOT with the layout's coordinates, or Graphviz's JSON of the layout (positions, sizes and drawing
/// operations).
public enum GraphvizRenderer {
    public enum Format: String, Sendable {
        case svg, png, dot, json

        /// The format for an output path's extension (`.svg`, `.png`, `.dot`/`.gv`, `.json`).
        public init?(path: String) {
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "svg": self = .svg
            case "png": self = .png
            case "dot", "gv": self = .dot
            case "json": self = .json
            default: return nil
            }
        }
    }

    /// Graphviz keeps global state: one rendering at a time.
    private static let lock = NSLock()

    /// One Graphviz context for the life of the process, used under `lock`. Graphviz 2.42's pango plugin caches a
    /// pointer to the last font name it laid out, which lives in the context's font dictionary: freeing the context
    /// after a rendering leaves that pointer dangling for the next one (AddressSanitizer: a heap-buffer-overflow
    /// read in `textspan_size`).
    nonisolated(unsafe) private static var sharedContext: OpaquePointer?

    public static func render(_ dot: String, as format: Format) throws -> Data {
        lock.lock()
        defer { lock.unlock() }
        if sharedContext == nil {
            // Warnings ("2 out of 3 exterior labels positioned": a name left out where it would overlap) are the
            // layout's business, not the user's; errors still reach stderr.
            agseterr(AGERR)
            sharedContext = gvContext()
        }
        guard let context = sharedContext else { throw ReportError("Graphviz: cannot create a context") }
        guard let graph = dot.withCString({ agmemread($0) }) else { throw ReportError("Graphviz could not read the generated graph") }
        defer { agclose(graph) }
        guard gvLayout(context, graph, "dot") == 0 else { throw ReportError("Graphviz: the dot layout failed") }
        defer { gvFreeLayout(context, graph) }
        var result: UnsafeMutablePointer<CChar>?
        var length: UInt32 = 0
        guard gvRenderData(context, graph, format.rawValue, &result, &length) == 0, let result else {
            throw ReportError("Graphviz: rendering \(format.rawValue) failed")
        }
        defer { gvFreeRenderData(result) }
        return Data(bytes: result, count: Int(length))
    }
}
