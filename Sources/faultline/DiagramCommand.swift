import ArgumentParser
import Faultline
import FaultlineReport
import Foundation

struct DiagramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diagram",
        abstract: "Draw a model's entity-relationship diagram, or a store's object graph, with Graphviz (SVG, PNG or DOT).",
        discussion: """
        Model: arrowheads as in Xcode's model editor, one for to-one, two for to-many; inverses share an edge; \
        inheritance is dashed. With --store: objects coloured by state, grouped by entity, relationships as edges \
        (dashed to a fault), destinations not drawn counted in the object's box (+37 Page), from --root out to \
        --depth, or the first objects of each entity; at most --limit.
        """)

    @Argument(help: "A JSON model, an .xcdatamodeld bundle, an .xcdatamodel folder or its contents file, a .momd or .mom, or a Core Data store (its cached model); optional with --store.")
    var model: String?

    @Option(name: [.short, .long], help: "The file to write: .svg, .png, .dot, or .json (Graphviz's JSON of the layout).")
    var output: String = "model.svg"

    @Option(help: "Draw the objects of this store instead of the model.")
    var store: String?

    @Option(help: "With --store: the object to start from (x-coredata://…/Entity/p1).")
    var root: String?

    @Option(help: "With --root: how many relationships away to go.")
    var depth = 2

    @Option(help: "With --store: the most objects to draw.")
    var limit = 100

    func validate() throws {
        guard GraphvizRenderer.Format(path: output) != nil else { throw ValidationError("-o must end in .svg, .png, .dot or .json (got '\(output)')") }
        guard depth >= 0, limit > 0 else { throw ValidationError("--depth must be 0 or more and --limit more than 0") }
        guard limit <= Limits.diagramObjects else { throw ValidationError("--limit is at most \(Limits.diagramObjects) objects (Limits.diagramObjects)") }
        guard depth <= Limits.keyPathComponents else { throw ValidationError("--depth is at most \(Limits.keyPathComponents)") }
        guard store != nil || root == nil else { throw ValidationError("--root needs --store") }
        guard model != nil || store != nil else { throw ValidationError("give a model, or a store with --store") }
    }

    func run() throws {
        try reportingErrors("diagram") {
            try OutputFile.check(output)
            let format = GraphvizRenderer.Format(path: output)!
            guard let store else {
                let diagram = ModelDiagram(model: try loadModel(model!, hint: "give its model file instead"))
                try OutputFile.write(GraphvizRenderer.render(diagram.dot, as: format), to: output)
                Console.committed = "wrote \(output)"
                try Console.out("wrote \(output) (\(diagram.entities.count) entities\(diagram.note.map { "; \($0)" } ?? ""))")
                return
            }
            guard FileManager.default.fileExists(atPath: store) else { throw ValidationError("no store at '\(store)'") }
            let coordinator = try openStore(store, model: model, readOnly: true, modelHint: "give the model first: faultline diagram MODEL --store STORE")
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            let snapshot = try context.performAndWait {
                // The picture is of the objects the loader reached: the context keeps them all for it.
                context.retainsRegisteredObjects = true
                try ObjectGraphLoader(context: context, limit: limit).load(root: root, depth: depth)
                if let error = context.lastFaultError { throw error }
                return context.objectGraphSnapshot(limit: limit)
            }
            try OutputFile.write(ObjectGraphDiagram(snapshot: snapshot).render(as: format), to: output)
            Console.committed = "wrote \(output)"
            try Console.out("wrote \(output) (\(snapshot.nodes.count) objects\(snapshot.omitted > 0 ? ", \(snapshot.omitted) more not shown" : ""))")
        }
    }
}
