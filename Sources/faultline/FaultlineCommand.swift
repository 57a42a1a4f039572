import ArgumentParser
import Faultline
import FaultlineData
import Foundation

@main
struct FaultlineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultline",
        abstract: "Core Data's object-graph persistence for Swift on Linux, with Instruments built in.",
        discussion: """
        Probes: FAULTLINE_SQLDEBUG=1…4 (or the launch argument -com.apple.CoreData.SQLDebug N) writes Core Data-style \
        SQL debug lines to standard error; FAULTLINE_TRACE=PATH writes a JSON Lines trace (docs/trace-format.md).
        """,
        subcommands: [SchemaCommand.self, InfoCommand.self, HistoryCommand.self, LoadCommand.self, QueryCommand.self, PredicateCommand.self, ExplainCommand.self, BenchCommand.self, CompareCommand.self, ReportCommand.self, DiagramCommand.self, MigrateCommand.self])

    /// Core Data's launch arguments (`-com.apple.CoreData.SQLDebug N`, `-com.apple.CoreData.ConcurrencyDebug 1`)
    /// are read by the engine's probes; they are taken out before the command line is parsed.
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let launchArguments: Set<String> = ["-com.apple.CoreData.SQLDebug", "-com.apple.CoreData.ConcurrencyDebug", "-com.faultline.SQLDebug"]
        while let i = arguments.firstIndex(where: launchArguments.contains) {
            arguments.removeSubrange(i..<min(i + 2, arguments.count))
        }
        var name = "faultline"
        do {
            var command = try parseAsRoot(arguments)
            name += " " + (type(of: command).configuration.commandName ?? "")
            try command.run()
            Probes.shared.flush()
            try Console.flush()
        } catch let error as Console.WriteError {
            Probes.shared.flush()
            Console.error(writeFailure(name, error))
            Foundation.exit(1)
        } catch {
            Probes.shared.flush()
            // What was printed before the error goes out first (the error keeps its own status either way).
            try? Console.flush()
            exit(withError: error)
        }
    }
}

/// The message for output that could not be written: what the command had done that stays done, then why.
func writeFailure(_ command: String, _ error: Console.WriteError) -> String {
    guard let committed = Console.committed else { return "\(command): \(error)" }
    return "\(command): \(committed); could not print the summary: \(error.reason)"
}

/// Runs `body`, turning any error into one line on stderr and a non-zero exit.
func reportingErrors(_ command: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as Console.WriteError {
        Console.error(writeFailure("faultline \(command)", error))
        throw ExitCode.failure
    } catch {
        Console.error("faultline \(command): \(error)")
        throw ExitCode.failure
    }
}

/// Opens `store` with `modelPath`. For an `.xcdatamodeld` bundle and an existing store, the version the store was
/// made with is found among the bundle's versions (said on stderr when it is not the current one).
func openStore(_ store: String, model modelPath: String?, readOnly: Bool, modelHint: String = "give --model") throws -> PersistentStoreCoordinator {
    let storeURL = URL(fileURLWithPath: store)
    let size = (try? FileManager.default.attributesOfItem(atPath: store)[.size] as? NSNumber)?.intValue ?? 0
    var isDirectory: ObjCBool = false
    if let modelPath, ["xcdatamodeld", "momd"].contains(URL(fileURLWithPath: modelPath).pathExtension), size > 0,
       FileManager.default.fileExists(atPath: modelPath, isDirectory: &isDirectory), isDirectory.boolValue {
        let modelURL = URL(fileURLWithPath: modelPath)
        let current = try ManagedObjectModel.currentVersion(ofBundle: modelURL).deletingPathExtension().lastPathComponent
        let (coordinator, version) = try PersistentStoreCoordinator.open(storeURL, withVersionOf: modelURL, options: readOnly ? .readOnly : [])
        if version != current {
            Console.error("faultline: the store was made with model version '\(version)' (the bundle's current version is '\(current)'); using '\(version)'")
        }
        return coordinator
    }
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try loadModel(modelPath ?? store, hint: modelHint))
    try coordinator.addPersistentStore(at: storeURL, options: readOnly ? .readOnly : [])
    return coordinator
}

/// Opens a model file (JSON, Xcode, compiled `.mom`/`.momd`), or the model a Core Data store caches
/// (`Z_MODELCACHE`) when `path` is a SQLite file; what the loader accepted only as Xcode does is printed as warnings.
/// `hint` says how the command is given a model, for a store that caches none.
func loadModel(_ path: String, hint: String = "give --model") throws -> ManagedObjectModel {
    if isSQLiteFile(path) {
        guard let model = try ManagedObjectModel.cachedInStore(at: URL(fileURLWithPath: path)) else {
            throw ValidationError("'\(path)' carries no model: its Z_MODELCACHE is absent or empty (Core Data before iOS 10 and macOS 10.12 wrote none; Faultline's own stores keep it empty); \(hint)")
        }
        return model
    }
    let model = try ManagedObjectModel(loadingContentsOf: URL(fileURLWithPath: path))
    for warning in model.warnings.prefix(maximumModelWarningsShown) {
        Console.error("faultline: warning: \(warning)")
    }
    if model.warnings.count > maximumModelWarningsShown {
        Console.error("faultline: warning: … and \(model.warnings.count - maximumModelWarningsShown) more of the model's warnings (ManagedObjectModel.warnings lists them all)")
    }
    return model
}

/// The most model warnings a command prints before it says how many more there are.
let maximumModelWarningsShown = 20

/// True when `path` is a file that starts with SQLite's header.
func isSQLiteFile(_ path: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    let header = (try? handle.read(upToCount: 16)) ?? Data()
    return header == Data("SQLite format 3\u{0}".utf8)
}
