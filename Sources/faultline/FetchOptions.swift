import ArgumentParser
import Faultline
import Foundation

/// The entity, predicate, arguments and order shared by `query` and `explain`.
struct FetchOptions: ParsableArguments {
    @Argument(help: "The entity (its sub-entities' objects are included).")
    var entity: String

    @Argument(help: "A predicate format string (NSPredicate syntax); all objects when absent.")
    var predicate: String?

    @Option(name: .customLong("arg"), help: "A format argument for the predicate (number, true/false, nil, ISO 8601 date, JSON array or string); repeat in order.")
    var arguments: [String] = []

    @Option(help: "Sort key path, with :desc, :ci (case-insensitive) or :localized; repeat for more keys.")
    var sort: [String] = []

    /// A fetch request for these options; a predicate error comes with its caret.
    func request() throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        if let predicate {
            do {
                request.predicate = try ObjectPredicate(parsing: predicate, argumentArray: arguments.map(ArgumentValues.parse))
            } catch let error as ObjectPredicateError {
                throw QueryInputError(text: error.caretDescription)
            }
        } else if !arguments.isEmpty {
            throw ValidationError("--arg needs a predicate")
        }
        request.sortDescriptors = try sort.map(FetchSortDescriptor.init(parsing:))
        return request
    }
}

/// A predicate error, shown with its caret.
struct QueryInputError: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}
