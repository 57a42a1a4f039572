import ArgumentParser
import Faultline
import FaultlineData
import Foundation

@main
struct FaultlineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faultline",
        abstract: "Core Data's object-graph persistence for Swift on Linux, with Instruments built in.",
        subcommands: [SchemaCommand.self, LoadCommand.self, QueryCommand.self, PredicateCommand.self, DemoCommand.self])
}

/// Runs `body`, turning any error into one line on stderr and a non-zero exit.
func reportingErrors(_ command: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch {
        FileHandle.standardError.write(Data("faultline \(command): \(error)\n".utf8))
        throw ExitCode.failure
    }
}

/// Opens a model file (JSON or Xcode).
func loadModel(_ path: String) throws -> ManagedObjectModel {
    try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path))
}
