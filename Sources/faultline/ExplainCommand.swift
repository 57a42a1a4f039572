import ArgumentParser
import Faultline
import FaultlineBench
import FaultlineReport
import Foundation

struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show the SQL a fetch runs, SQLite's query plan with a verdict per step, and an index that would help.",
        discussion: "A suggested index is checked by creating it on a scratch copy of the store and planning again; the store itself is not changed.")

    @OptionGroup var options: StoreOptions

    @OptionGroup var fetch: FetchOptions

    func run() throws {
        try reportingErrors("explain") {
            guard FileManager.default.fileExists(atPath: options.store) else { throw ValidationError("no store at '\(options.store)'") }
            let request = try fetch.request()
            let context = try options.openContext(readOnly: true)
            let explanation = try context.performAndWait { try context.explain(request) }
            var out = "SQL: \(explanation.sql)\n"
            if !explanation.bindings.isEmpty { out += "bindings: \(explanation.bindings.joined(separator: ", "))\n" }
            out += "\n\(explanation.plan)\n"
            if let measured = explanation.measurement {
                out += "\nmeasured on a scratch copy: \(measured.examined) rows examined, \(measured.returned) returned, \(BenchFormat.seconds(measured.seconds))\n"
            }
            out += "\nverdict: \(explanation.verdict)\n"
            if explanation.suggestions.isEmpty && explanation.verdict.contains(" examines ") && !explanation.verdict.contains("right plan") {
                out += "no single index made it examine half as many rows on a scratch copy.\n"
            }
            for suggestion in explanation.suggestions {
                out += "\nsuggestion: \(suggestion.sql)\n  gives: \(suggestion.reason) (checked on a scratch copy)\n\n\(suggestion.planWithIndex)\n"
            }
            // The store's indexes on the fetched table: which this plan uses, and which are redundant by their columns.
            let table = context.coordinator.managedObjectModel.entity(named: request.entityName)?.table.name
            let indexes = try context.coordinator.storeIndexes().filter { $0.table.uppercased() == table?.uppercased() }
            if !indexes.isEmpty {
                let planned = Set(explanation.plan.steps.compactMap { StoreIndexReview.usedIndex(in: $0.detail) })
                let redundant = Dictionary(StoreIndexReview.redundant(indexes).map { ($0.index.name, $0.coveredBy) }, uniquingKeysWith: { a, _ in a })
                out += "\nindexes of \(table ?? ""):\n"
                for index in indexes {
                    var notes: [String] = []
                    if planned.contains(index.name) { notes.append("used by this fetch") }
                    if index.isUnique { notes.append("unique") }
                    if index.isPartial { notes.append("partial") }
                    if let covering = redundant[index.name] {
                        notes.append("redundant: \(covering.name) (\(covering.columns.joined(separator: ", "))) begins with the same column\(index.columns.count == 1 ? "" : "s")")
                    }
                    out += "  \(index.name) (\(index.columns.joined(separator: ", ")))\(notes.isEmpty ? "" : " — " + notes.joined(separator: "; "))\n"
                }
            }
            try Console.out(out, terminator: "")
        }
    }
}
