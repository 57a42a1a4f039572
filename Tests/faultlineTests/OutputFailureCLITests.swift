import Foundation
import XCTest

/// Output that cannot be written (`>/dev/full`, `2>/dev/full`: a full disk) never traps and never passes for success:
/// the command exits 1 and says why on standard error, after what it had already done — as coreutils and git do.
final class OutputFailureCLITests: CLITestCase {
    func full() throws -> FileHandle {
        guard let handle = FileHandle(forWritingAtPath: "/dev/full") else { throw XCTSkip("this system has no /dev/full") }
        return handle
    }

    func dogModel() throws -> String {
        try write("Dogs.json", #"{"entities":[{"name":"Dog","attributes":[{"name":"name","type":"string"}]}]}"#)
    }

    /// The store is loaded (the load committed), the summary could not be printed: both are said, and the status is 1.
    func testALoadWhoseSummaryCannotBePrintedSaysItLoaded() throws {
        let model = try dogModel()
        let data = try write("dogs.json", #"{"Dog":[{"name":"Fido"},{"name":"Rex"}]}"#)
        let load = try run(["load", "--model", model, "--store", "dogs.sqlite", data], standardOutput: try full())
        XCTAssertTrue(load.exited)
        XCTAssertEqual(load.status, 1)
        XCTAssertEqual(load.stderr, "faultline load: loaded 2 objects into dogs.sqlite; could not print the summary: No space left on device\n")
        let count = try run(["query", "--model", model, "--store", "dogs.sqlite", "Dog", "--result", "count"])
        XCTAssertEqual(count.stdout, "{\"count\": 2}\n", "the store was loaded")
    }

    /// Commands that only print: a lost result is an error, whatever its size (one buffer or many).
    func testALostResultIsAnError() throws {
        let model = try dogModel()
        let names = (1...3_000).map { #"{"name":"dog \#($0) with a name long enough to fill buffers"}"# }.joined(separator: ",")
        XCTAssertEqual(try run(["load", "--model", model, "--store", "dogs.sqlite", try write("dogs.json", #"{"Dog":[\#(names)]}"#)]).status, 0)
        for arguments in [["schema", model], ["query", "--model", model, "--store", "dogs.sqlite", "Dog"], ["predicate", "name == 'a'"]] {
            let result = try run(arguments, standardOutput: try full())
            XCTAssertTrue(result.exited, "\(arguments)")
            XCTAssertEqual(result.status, 1, "\(arguments)")
            XCTAssertEqual(result.stderr, "faultline \(arguments[0]): write error: standard output: No space left on device\n", "\(arguments)")
        }
    }

    /// A failing command whose error cannot be written either: no trap, status 1.
    func testAnErrorThatCannotBeWrittenStillExitsOne() throws {
        let model = try dogModel()
        for arguments in [["query", "--model", model, "--store", "missing.sqlite", "Dog"], ["schema", "nope.json"], ["predicate", "name =="],
                          ["report", "missing.jsonl"]] {
            let result = try run(arguments, standardError: try full())
            XCTAssertTrue(result.exited, "\(arguments): no trap")
            XCTAssertEqual(result.status, 1, "\(arguments)")
        }
        let both = try run(["schema", model], standardOutput: try full(), standardError: try full())
        XCTAssertTrue(both.exited)
        XCTAssertEqual(both.status, 1)
    }
}
