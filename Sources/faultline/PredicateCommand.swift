import ArgumentParser
import Faultline
import Foundation

struct PredicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "predicate",
        abstract: "Check a predicate format string and print its canonical form.",
        discussion: "Without --arg values, format specifiers (%@, %K, %d …) stay visible as placeholders. A syntax error is printed with a caret under its position, and the exit status is 1.")

    @Argument(help: "An NSPredicate format string, e.g. \"age > %d AND name BEGINSWITH[cd] %@\".")
    var format: String

    @Option(name: .customLong("arg"), help: "A format argument (number, true/false, nil, ISO 8601 date, JSON array or string); repeat in order.")
    var arguments: [String] = []

    func run() throws {
        do {
            let predicate = arguments.isEmpty
                ? try ObjectPredicate(unboundFormat: format)
                : try ObjectPredicate(parsing: format, argumentArray: arguments.map(ArgumentValues.parse))
            try Console.out(predicate.predicateFormat)
        } catch let error as ObjectPredicateError {
            Console.error("faultline predicate: \(error.caretDescription)")
            throw ExitCode.failure
        } catch let error as ArgumentValues.Failure {
            Console.error("faultline predicate: \(error)")
            throw ExitCode.failure
        }
    }
}
