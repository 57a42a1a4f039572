import ArgumentParser
import Faultline
import Foundation

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the SQL schema (Core Data's layout) a store for MODEL uses.")

    @Argument(help: "A JSON model, an .xcdatamodeld bundle, an .xcdatamodel folder or its contents file, a .momd or .mom, or a Core Data store (its cached model).")
    var model: String

    func run() throws {
        try reportingErrors("schema") {
            try Console.out(SchemaGenerator.script(for: try loadModel(model, hint: "give its model file instead")), terminator: "")
        }
    }
}
