import ArgumentParser
import FaultlineBench
import Foundation

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a sample store, say what the engine did, and measure its speed targets against raw SQLite.")

    @Option(help: "Folder for the sample stores and summary.txt.")
    var out: String = "Reports/latest"

    @Option(help: "Scale of the speed check (1 = 200,000 fetched and 50,000 inserted objects).")
    var scale: Double = 1

    func validate() throws {
        guard scale > 0, scale <= 10 else { throw ValidationError("--scale must be in (0, 10]") }
    }

    func run() throws {
        try reportingErrors("demo") {
            #if DEBUG
            FileHandle.standardError.write(Data("faultline demo: warning: this is a debug build; timings mean little (use make bench)\n".utf8))
            #endif
            let report = try Demo(folder: URL(fileURLWithPath: out), scale: scale).run { step in
                FileHandle.standardError.write(Data("… \(step)\n".utf8))
            }
            print(report, terminator: "")
        }
    }
}
