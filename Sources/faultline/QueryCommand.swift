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

    @OptionGroup var fetch: FetchOptions

    @Option(help: "Skip this many objects.")
    var offset: Int = 0

    @Option(help: "What to print: objects, ids, count or dictionary.")
    var result: DataExporter.ResultType = .objects

    @Option(name: .customLong("batch-size"), help: "Read IDs first, then objects in batches of N (one statement per batch).")
    var batchSize: Int = 0

    @Option(help: "A relationship key path to prefetch with the result; repeat for more.")
    var prefetch: [String] = []

    @Option(help: "For --result dictionary: a key path or function(key path) [as name], e.g. avg(salary) as average; repeat.")
    var properties: [String] = []

    @Option(name: .customLong("group-by"), help: "For --result dictionary: a key path to group by; repeat.")
    var groupBy: [String] = []

    @Option(help: "For --result dictionary with --group-by: which groups to keep (may name aggregates).")
    var having: String?

    @Flag(help: "For --result dictionary: leave out duplicate rows.")
    var distinct = false

    @Option(help: "Output format: json or table.")
    var format: DataExporter.Format = .json

    @Option(help: "At most this many objects (0 = all).")
    var limit: Int = 0

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
        guard offset >= 0 else { throw ValidationError("--offset must be 0 or more") }
        guard batchSize >= 0 else { throw ValidationError("--batch-size must be 0 or more") }
        if result != .dictionary && (!properties.isEmpty || !groupBy.isEmpty || having != nil || distinct) {
            throw ValidationError("--properties, --group-by, --having and --distinct go with --result dictionary")
        }
    }

    func run() throws {
        try reportingErrors("query") {
            guard FileManager.default.fileExists(atPath: options.store) else {
                throw ValidationError("no store at '\(options.store)'")
            }
            var request = try fetch.request()
            request.fetchOffset = offset
            request.fetchBatchSize = batchSize
            request.relationshipKeyPathsForPrefetching = prefetch
            if !properties.isEmpty { request.propertiesToFetch = try properties.map(PropertyToFetch.init(parsing:)) }
            request.propertiesToGroupBy = groupBy
            request.returnsDistinctResults = distinct
            if let having {
                do {
                    request.havingPredicate = try ObjectPredicate(parsing: having)
                } catch let error as ObjectPredicateError {
                    throw QueryInputError(text: "--having: " + error.caretDescription)
                }
            }
            let context = try options.openContext(readOnly: true)
            let output = try DataExporter(context: context).export(request, result: result, format: format, limit: limit)
            // A fault the store could not fulfil (a damaged row) would print as empty values: the error instead.
            if let error = context.lastFaultError { throw error }
            try Console.out(output, terminator: "")
        }
    }
}
