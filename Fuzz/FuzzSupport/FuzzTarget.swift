import Foundation

/// What every fuzz target shares: a function of one input that must return (errors are fine; a trap, an overflow
/// or a hang is a finding), run by libFuzzer when built with `-sanitize=fuzzer` (`make fuzz`), or over files given
/// on the command line otherwise (`swift run fuzz-predicate CRASH-FILE …` replays a finding).
public enum FuzzTarget {
    /// Runs `body` once per file named in `arguments`, or per line of standard input when none is named.
    public static func replay(_ arguments: [String], _ body: (Data) -> Void) {
        if arguments.isEmpty {
            while let line = readLine(strippingNewline: true) { body(Data(line.utf8)) }
            return
        }
        for path in arguments {
            guard let data = FileManager.default.contents(atPath: path) else {
                FileHandle.standardError.write(Data("cannot read \(path)\n".utf8))
                exit(2)
            }
            body(data)
            print("ok \(path)")
        }
    }

    /// A folder of its own under the temporary folder, for the stores and files a target writes.
    public static func scratchFolder(_ name: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-fuzz-\(name)-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A small company model (to-one, to-many, many-to-many and self relationships; every common attribute type)
    /// that the predicate and data targets work against.
    public static let companyModelJSON = """
    {"entities": [
     {"name": "Department", "attributes": [{"name": "name", "type": "string"}, {"name": "budget", "type": "decimal"}],
      "relationships": [{"name": "employees", "destination": "Employee", "inverse": "department", "toMany": true}]},
     {"name": "Employee", "attributes": [{"name": "name", "type": "string"}, {"name": "salary", "type": "integer64"},
       {"name": "age", "type": "integer16"}, {"name": "rating", "type": "double"}, {"name": "active", "type": "boolean"},
       {"name": "hired", "type": "date"}, {"name": "badge", "type": "uuid"}, {"name": "photo", "type": "binary"}],
      "relationships": [{"name": "department", "destination": "Department", "inverse": "employees"},
       {"name": "projects", "destination": "Project", "inverse": "members", "toMany": true},
       {"name": "manager", "destination": "Employee", "inverse": "reports"},
       {"name": "reports", "destination": "Employee", "inverse": "manager", "toMany": true}]},
     {"name": "Project", "attributes": [{"name": "title", "type": "string"}],
      "relationships": [{"name": "members", "destination": "Employee", "inverse": "projects", "toMany": true, "ordered": true}]}
    ]}
    """
}
