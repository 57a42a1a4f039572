import ArgumentParser
import Faultline
import FaultlineData
import Foundation

extension DataExporter.Format: ExpressibleByArgument {}

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of an entity with their object IDs, attributes and relationships.")

    @OptionGroup var options: StoreOptions

    @Argument(help: "The entity (its sub-entities' objects are included).")
    var entity: String

    @Option(help: "Output format: json or table.")
    var format: DataExporter.Format = .json

    @Option(help: "At most this many objects (0 = all).")
    var limit: Int = 0

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        try reportingErrors("query") {
            guard FileManager.default.fileExists(atPath: options.store) else {
                throw ValidationError("no store at '\(options.store)'")
            }
            let context = try options.openContext()
            print(try DataExporter(context: context).export(entityName: entity, format: format, limit: limit), terminator: "")
        }
    }
}
