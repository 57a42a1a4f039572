import ArgumentParser
import Faultline
import FaultlineData
import Foundation

struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Insert the records of a JSON data file into a store (created when absent), in one save, reading the file record by record.",
        discussion: "Every record is checked before anything is written; bad data writes nothing. Format: docs/data-format.md.")

    @OptionGroup var options: StoreOptions

    @Argument(help: "The JSON data file.")
    var data: String

    func run() throws {
        try reportingErrors("load") {
            // The file must be readable before a store is created for it.
            do { try InputFile.checkReadable(data) } catch { throw DataFileError(file: data, problem: "\(error)") }
            // A store this command creates is removed again when the load fails: bad data leaves nothing behind.
            let created = !FileManager.default.fileExists(atPath: options.store)
            let summary: DataImporter.Summary
            do {
                let context = try options.openContext(readOnly: false)
                summary = try DataImporter(context: context).load(contentsOfFile: data)
            } catch {
                if created {
                    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: options.store + suffix) }
                }
                throw error
            }
            let detail = summary.inserted.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            let loaded = "loaded \(summary.total) object\(summary.total == 1 ? "" : "s") into \(options.store)"
            Console.committed = loaded
            try Console.out(loaded + (detail.isEmpty ? "" : ": " + detail))
        }
    }
}

/// The `--model` and `--store` options of the commands that work on a store.
struct StoreOptions: ParsableArguments {
    @Option(help: "The model: JSON, .xcdatamodeld, .xcdatamodel, contents, .momd or .mom file; without it, the model the store caches (Z_MODELCACHE).")
    var model: String?

    @Option(help: "The SQLite store file.")
    var store: String

    /// A private-queue context on a coordinator with the store opened: created when absent, or, for the commands
    /// that only read, read only (a missing, empty or foreign file is an error and stays as it was).
    func openContext(readOnly: Bool) throws -> ManagedObjectContext {
        ManagedObjectContext(.privateQueue, coordinator: try openStore(store, model: model, readOnly: readOnly))
    }
}
