import ArgumentParser
import Faultline
import Foundation

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to a version of its model: inferred (lightweight) or mapped steps through every version in between.",
        discussion: """
        The store's version is found by its version hashes (a version that only fits its tables is a guess: give \
        --from). Each step writes a new store beside the old one in one transaction; the old file is replaced only \
        when every step succeeded. A change a lightweight migration cannot infer, or data the new version does not \
        allow, is an error naming the entity, the property or the objects, and the store is left as it was. Each \
        step's values dropped, defaulted and converted are counted; dropping any needs --allow-loss. --dry-run runs \
        the whole migration on a scratch copy and prints the same account, or the error, leaving the store as it was.
        """)

    @Option(help: "The model bundle: .xcdatamodeld or .momd, holding the store's version and the target.")
    var model: String

    @Option(help: "The SQLite store to migrate.")
    var store: String

    @Option(help: "The version to migrate to (default: the bundle's current version).")
    var to: String?

    @Flag(help: "Migrate even when the new version drops values (a removed attribute, relationship or entity that holds some); without it such a migration is refused, writing nothing.")
    var allowLoss = false

    @Option(help: "The version the store was made with, when its Core Data version hashes are no version's (found by its tables alone, a guess, the migration refuses without it).")
    var from: String?

    @Option(help: "A mapping model (.xcmappingmodel, or the compiled .cdm from the built app) for a step inference cannot do; repeatable.")
    var mapping: [String] = []

    @Flag(help: "Print the plan (per step: entities and properties added, removed, renamed, converted; rows) and write nothing.")
    var dryRun = false

    func run() throws {
        try reportingErrors("migrate") {
            guard FileManager.default.fileExists(atPath: store) else { throw ValidationError("no store at '\(store)'") }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: model, isDirectory: &isDirectory), isDirectory.boolValue,
                  ["xcdatamodeld", "momd"].contains(URL(fileURLWithPath: model).pathExtension) else {
                throw ValidationError("--model must be an .xcdatamodeld or .momd bundle holding the store's version (got '\(model)')")
            }
            let mappings = try mapping.map { path -> MappingModel in
                let url = URL(fileURLWithPath: path)
                return url.pathExtension == "xcmappingmodel" || url.pathExtension == "xml"
                    ? try MappingModel(xcodeMappingModelAt: url) : try MappingModel(compiledMappingModelAt: url)
            }
            let plan = try PersistentStoreCoordinator.migrateStore(at: URL(fileURLWithPath: store), toVersionOf: URL(fileURLWithPath: model),
                                                                    version: to, from: from, dryRun: dryRun, allowLoss: allowLoss || dryRun, mappings: mappings)
            if !dryRun && !plan.steps.isEmpty { Console.committed = "migrated \(store) to '\(plan.to)'" }
            try Console.out("\(plan)", terminator: "")
            if !dryRun && !plan.steps.isEmpty { try Console.out("migrated \(store) to '\(plan.to)'") }
            // A dry run of a migration that drops values says yes only to a run with --allow-loss: it exits 1 without it.
            if dryRun && plan.dropped > 0 && !allowLoss { throw ExitCode.failure }
        }
    }
}
