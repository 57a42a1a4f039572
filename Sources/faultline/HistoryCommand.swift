import ArgumentParser
import Faultline
import FaultlineReport
import Foundation

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show a store's persistent history: its transactions (when, author, context, bundle, process) and the changes in each.",
        discussion: """
        Core Data records history in ATRANSACTION, ACHANGE and ATRANSACTIONSTRING when a store's \
        NSPersistentHistoryTrackingKey is on (SwiftData turns it on for every store). Updated properties are read \
        from each change's column mask with the model (--model, or the one the store caches). The store is read, \
        never written.
        """)

    @Argument(help: "The SQLite store file.")
    var store: String

    @Option(help: "The store's model (for the names of updated properties); without it, the model the store caches, if any.")
    var model: String?

    @Flag(help: "Print JSON: {\"transactions\": [{\"timestamp\", \"author\", \"contextName\", \"bundleID\", \"process\", \"changes\": [{\"type\", \"entity\", \"object\", \"updatedProperties\"}]}]}.")
    var json = false

    @Option(help: "Text: the most recent transactions to list one by one.")
    var limit = 20

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        try reportingErrors("history") {
            guard FileManager.default.fileExists(atPath: store) else { throw ValidationError("no store at '\(store)'") }
            let url = URL(fileURLWithPath: store)
            let storeModel: ManagedObjectModel?
            if let model {
                storeModel = try openStore(store, model: model, readOnly: true).managedObjectModel
            } else {
                storeModel = try? ManagedObjectModel.cachedInStore(at: url)
            }
            let history = try PersistentHistory.read(storeAt: url, model: storeModel)
            if json {
                try Console.out(try Self.json(history, hasModel: storeModel != nil))
                return
            }
            try Console.out(Self.text(history, store: store, limit: limit, hasModel: storeModel != nil))
        }
    }

    static func timestamp(_ date: Date) -> String { HistorySection.timestamp(date) }

    static func json(_ history: PersistentHistory, hasModel: Bool) throws -> String {
        let transactions: [[String: Any]] = history.transactions.map { t in
            [
                "token": t.number, "timestamp": timestamp(t.timestamp), "author": t.author ?? NSNull(), "contextName": t.contextName ?? NSNull(),
                "bundleID": t.bundleID ?? NSNull(), "process": t.process ?? NSNull(),
                "changes": t.changes.map { c in
                    ["type": c.kind.rawValue, "entity": c.entity, "object": c.object,
                     "updatedProperties": c.updatedProperties.map { $0 as Any } ?? NSNull()] as [String: Any]
                },
            ]
        }
        let object: [String: Any] = ["tracked": history.isTracked, "transactions": transactions, "orphanChanges": history.orphanChanges,
                                     "updatedPropertiesNamed": hasModel]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static func text(_ history: PersistentHistory, store: String, limit: Int, hasModel: Bool) -> String {
        guard history.isTracked else { return "\(store): no persistent history (the store has no ATRANSACTION, ACHANGE and ATRANSACTIONSTRING tables)" }
        let summary = HistorySummary(history)
        var lines = ["\(store): \(summary.transactions) transaction\(summary.transactions == 1 ? "" : "s"), \(summary.changes) change\(summary.changes == 1 ? "" : "s") (\(summary.kinds.map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", ")))"
                     + (summary.first.map { ", \(timestamp($0)) to \(timestamp(summary.last ?? $0))" } ?? "")]
        if summary.transactions > 0 {
            lines.append("  busiest second: \(summary.peakPerSecond) transaction\(summary.peakPerSecond == 1 ? "" : "s")")
            lines.append("  by author: " + summary.byAuthor.map { "\($0.name) \($0.transactions) (\($0.changes) changes)" }.joined(separator: ", "))
            lines.append("  by context: " + summary.byContext.map { "\($0.name) \($0.transactions) (\($0.changes) changes)" }.joined(separator: ", "))
            lines.append("  changes by entity: " + summary.byEntity.map { "\($0.name) \($0.changes) (\($0.kinds))" }.joined(separator: ", "))
            lines.append("  largest: " + summary.largest.map { "#\($0.number) \($0.changes.count) changes" }.joined(separator: ", "))
        }
        if history.orphanChanges > 0 { lines.append("  \(history.orphanChanges) changes belong to no transaction in ATRANSACTION") }
        if !hasModel { lines.append("  (no model: updated properties are not named; give --model)") }
        for t in history.transactions.suffix(limit) {
            let counts = Dictionary(grouping: t.changes, by: \.entity).map { "\($0.key) \($0.value.count)" }.sorted().joined(separator: ", ")
            lines.append("  #\(t.number) \(timestamp(t.timestamp)) author \(t.author ?? "-") context \(t.contextName ?? "-") bundle \(t.bundleID ?? "-") process \(t.process ?? "-"): \(t.changes.count) changes\(counts.isEmpty ? "" : " (\(counts))")")
        }
        if history.transactions.count > limit { lines.append("  … \(history.transactions.count - limit) earlier transactions (--limit, or --json for all)") }
        return lines.joined(separator: "\n")
    }
}
