import ArgumentParser
import Faultline
import FaultlineData
import Foundation

extension DataExporter.Format: ExpressibleByArgument {}
extension DataExporter.ResultType: ExpressibleByArgument {}

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of an entity with their object IDs, attributes and relationships.")

    @OptionGroup var options: StoreOptions

    @Argument(help: "The entity (its sub-entities' objects are included).")
    var entity: String

    @Argument(help: "A predicate format string (NSPredicate syntax); all objects when absent.")
    var predicate: String?

    @Option(name: .customLong("arg"), help: "A format argument for the predicate; repeat in order.")
    var arguments: [String] = []

    @Option(help: "Sort key path, with :desc, :ci (case-insensitive) or :localized; repeat for more keys.")
    var sort: [String] = []

    @Option(help: "Skip this many objects.")
    var offset: Int = 0

    @Option(help: "What to print: objects, ids or count.")
    var result: DataExporter.ResultType = .objects

    @Option(help: "Output format: json or table.")
    var format: DataExporter.Format = .json

    @Option(help: "At most this many objects (0 = all).")
    var limit: Int = 0

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
        guard offset >= 0 else { throw ValidationError("--offset must be 0 or more") }
    }

    func run() throws {
        try reportingErrors("query") {
            guard FileManager.default.fileExists(atPath: options.store) else {
                throw ValidationError("no store at '\(options.store)'")
            }
            var request = FetchRequest<ManagedObject>(entityName: entity)
            if let predicate {
                do {
                    request.predicate = try ObjectPredicate(format: predicate, argumentArray: arguments.map(ArgumentValues.parse))
                } catch let error as ObjectPredicateError {
                    throw QueryInputError(text: error.caretDescription)
                }
            } else if !arguments.isEmpty {
                throw ValidationError("--arg needs a predicate")
            }
            request.sortDescriptors = try sort.map(FetchSortDescriptor.init(parsing:))
            request.fetchOffset = offset
            let context = try options.openContext()
            print(try DataExporter(context: context).export(request, result: result, format: format, limit: limit), terminator: "")
        }
    }
}

/// A predicate error, shown with its caret.
struct QueryInputError: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}
