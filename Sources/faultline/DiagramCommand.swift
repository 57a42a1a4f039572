import ArgumentParser
import Faultline
import FaultlineReport
import Foundation

struct DiagramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagram",
        abstract: "Draw a model's entity-relationship diagram with Graphviz (SVG, PNG or DOT).",
        discussion: "Arrowheads as in Xcode's model editor: one for to-one, two for to-many; inverses share an edge; inheritance is dashed.")

    @Argument(help: "A JSON model, an .xcdatamodeld bundle, an .xcdatamodel folder or its contents file.")
    var model: String

    @Option(name: [.short, .long], help: "The file to write: .svg, .png or .dot.")
    var output: String = "model.svg"

    func validate() throws {
        guard GraphvizRenderer.Format(path: output) != nil else { throw ValidationError("-o must end in .svg, .png or .dot (got '\(output)')") }
    }

    func run() throws {
        try reportingErrors("diagram") {
            let diagram = ModelDiagram(model: try loadModel(model))
            let data = try GraphvizRenderer.render(diagram.dot, as: GraphvizRenderer.Format(path: output)!)
            try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            print("wrote \(output) (\(diagram.model.entities.count) entities)")
        }
    }
}
