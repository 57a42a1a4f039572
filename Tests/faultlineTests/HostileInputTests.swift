import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Inputs a hostile or careless user gives the real binary: each gets an exact error and a non-zero exit, or the
/// exact right answer; none crashes, hangs or silently changes a value.
final class HostileInputTests: CLITestCase {
    /// Employee, Department and Project with to-one, to-many, many-to-many and self (manager/reports)
    /// relationships, as the tests' company model.
    func companyModel() throws -> String {
        try write("company.json", """
        {"entities": [
         {"name": "Department", "attributes": [{"name": "name", "type": "string"}],
          "relationships": [{"name": "employees", "destination": "Employee", "inverse": "department", "toMany": true}]},
         {"name": "Employee", "attributes": [{"name": "name", "type": "string"}, {"name": "salary", "type": "integer64"}],
          "relationships": [{"name": "department", "destination": "Department", "inverse": "employees"},
           {"name": "projects", "destination": "Project", "inverse": "members", "toMany": true},
           {"name": "manager", "destination": "Employee", "inverse": "reports"},
           {"name": "reports", "destination": "Employee", "inverse": "manager", "toMany": true}]},
         {"name": "Project", "attributes": [{"name": "title", "type": "string"}],
          "relationships": [{"name": "members", "destination": "Employee", "inverse": "projects", "toMany": true}]}
        ]}
        """)
    }

    func loadCompany(_ model: String) throws {
        let data = try write("company-data.json", """
        {"Department": [{"@id": "d1", "name": "Sales"}, {"@id": "d2", "name": "Tech"}],
         "Project": [{"@id": "p1", "title": "Apollo"}, {"@id": "p2", "title": "Gemini"}],
         "Employee": [{"@id": "e1", "name": "A", "salary": 9007199254740993, "department": "d1", "projects": ["p1", "p2"]},
                      {"@id": "e2", "name": "B", "salary": 9223372036854775807, "department": "d1", "projects": ["p1"], "manager": "e1"},
                      {"@id": "e3", "name": "C", "salary": -9223372036854775808, "department": "d2", "projects": ["p2"], "manager": "e1"}]}
        """)
        let load = try run(["load", "--model", model, "--store", "co.sqlite", data])
        XCTAssertEqual(load.status, 0, load.stderr)
    }

    /// Graphviz 2.42 (Debian's) freed a rank array twice when an edge label joined two objects of one cluster:
    /// every object of every entity, as a root, in every format, under glibc's strictest heap checks.
    func testObjectGraphsRootedAtEveryObjectRenderInEveryFormat() throws {
        let model = try companyModel()
        try loadCompany(model)
        let strictHeap = ["MALLOC_CHECK_": "3", "MALLOC_PERTURB_": "165"]
        for entity in ["Employee", "Department", "Project"] {
            let ids = try run(["query", "--model", model, "--store", "co.sqlite", entity, "--result", "ids"])
            let uris = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(ids.stdout.utf8)) as? [String])
            XCTAssertFalse(uris.isEmpty)
            for uri in uris {
                for format in ["svg", "png", "dot"] {
                    let result = try run(["diagram", model, "--store", "co.sqlite", "--root", uri, "-o", "graph.\(format)"], environment: strictHeap)
                    XCTAssertEqual(result.status, 0, "\(uri) as \(format): \(result.stderr)")
                    XCTAssertTrue(result.stdout.hasPrefix("wrote graph.\(format) ("), result.stdout)
                    let bytes = try Data(contentsOf: dir.appendingPathComponent("graph.\(format)"))
                    switch format {
                    case "png": XCTAssertEqual(Array(bytes.prefix(4)), [0x89, 0x50, 0x4E, 0x47])
                    case "svg": XCTAssertTrue(String(decoding: bytes, as: UTF8.self).contains("manager") || entity != "Employee")
                    default: XCTAssertTrue(String(decoding: bytes, as: UTF8.self).hasPrefix("digraph objects {"))
                    }
                }
            }
        }
        // The whole store from its first objects, and the model itself, under the same checks.
        XCTAssertEqual(try run(["diagram", model, "--store", "co.sqlite", "-o", "all.svg"], environment: strictHeap).status, 0)
        XCTAssertEqual(try run(["diagram", model, "-o", "model.png"], environment: strictHeap).status, 0)
    }

    /// Integer 64 values pass through load, predicates, `--arg` and every output exactly; values outside the type
    /// are refused with its range, never rounded or clamped.
    func testInteger64IsExactEverywhereANumberEnters() throws {
        let model = try companyModel()
        try loadCompany(model)
        func names(_ arguments: [String]) throws -> [String] {
            let result = try run(["query", "--model", model, "--store", "co.sqlite", "Employee"] + arguments + ["--result", "dictionary", "--properties", "name", "--sort", "name"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let rows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], result.stdout)
            return rows.compactMap { $0["name"] as? String }
        }
        XCTAssertEqual(try names(["salary == %@", "--arg", "9007199254740993"]), ["A"])
        XCTAssertEqual(try names(["salary == %@", "--arg", "9007199254740992"]), [])
        XCTAssertEqual(try names(["salary == 9007199254740993"]), ["A"])
        XCTAssertEqual(try names(["salary == 9223372036854775807"]), ["B"])
        XCTAssertEqual(try names(["salary == -9223372036854775808"]), ["C"])
        XCTAssertEqual(try names(["salary IN %@", "--arg", "[9007199254740993, -9223372036854775808]"]), ["A", "C"])
        XCTAssertEqual(try names(["salary == %d", "--arg=-9223372036854775808"]), ["C"])

        let printed = try run(["query", "--model", model, "--store", "co.sqlite", "Employee", "--sort", "name"])
        for exact in ["\"salary\": 9007199254740993", "\"salary\": 9223372036854775807", "\"salary\": -9223372036854775808"] {
            XCTAssertTrue(printed.stdout.contains(exact), printed.stdout)
        }
        let sums = try run(["query", "--model", model, "--store", "co.sqlite", "Employee", "name == 'A'", "--result", "dictionary",
                            "--properties", "sum(salary) as total", "--properties", "max(salary) as most"])
        XCTAssertEqual(sums.stdout, "[\n  {\"total\": 9007199254740993, \"most\": 9007199254740993}\n]\n", sums.stderr)

        let range = "does not fit in Integer 64 (-9223372036854775808 to 9223372036854775807)"
        let tooBig = try run(["query", "--model", model, "--store", "co.sqlite", "Employee", "salary == %@", "--arg", "9223372036854775808"])
        XCTAssertEqual(tooBig.status, 1)
        XCTAssertEqual(tooBig.stderr, "faultline query: --arg '9223372036854775808' \(range)\n")
        let inArray = try run(["predicate", "salary IN %@", "--arg", "[1, 18446744073709551615]"])
        XCTAssertEqual(inArray.stderr, "faultline predicate: --arg '18446744073709551615' \(range)\n")
        let literal = try run(["predicate", "salary == -9223372036854775809"])
        XCTAssertEqual(literal.status, 1)
        XCTAssertEqual(literal.stderr, "faultline predicate: the integer -9223372036854775809 \(range) (at character 11)\n  salary == -9223372036854775809\n            ^\n")
        let hex = try run(["predicate", "salary == 0x10000000000000000"])
        XCTAssertTrue(hex.stderr.hasPrefix("faultline predicate: the integer 0x10000000000000000 \(range)"), hex.stderr)

        let before = try Data(contentsOf: dir.appendingPathComponent("co.sqlite"))
        for (value, problem) in [("9223372036854775808", "9223372036854775808 \(range)"), ("-9223372036854775809", "-9223372036854775809 \(range)"),
                                 ("1e300", "1e+300 \(range)")] {
            let data = try write("big.json", #"{"Employee": [{"name": "Z", "salary": \#(value)}]}"#)
            let load = try run(["load", "--model", model, "--store", "co.sqlite", data])
            XCTAssertEqual(load.status, 1, value)
            XCTAssertEqual(load.stderr, "faultline load: data '\(data)', entity 'Employee', record #1, key 'salary': \(problem)\n")
        }
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("co.sqlite")), before, "refused loads change nothing")
    }

    /// Inputs built to exhaust the stack, the heap or time: each stops at a named limit with a clear error.
    func testDepthAndSizeLimitsGiveClearErrors() throws {
        let nesting = "the predicate nests more than 100 levels deep (Limits.predicateNestingDepth)"
        let cases: [(String, String)] = [
            (String(repeating: "(", count: 7_400) + "a == 1" + String(repeating: ")", count: 7_400), nesting),
            (String(repeating: "!", count: 47_000) + "a == 1", nesting),
            ("a == " + Array(repeating: "1", count: 37_500).joined(separator: "+"), nesting),
            ("a == " + String(repeating: "-(", count: 5_000) + "1" + String(repeating: ")", count: 5_000), nesting),
            ("a == " + String(repeating: "{", count: 5_000) + "1" + String(repeating: "}", count: 5_000), nesting),
            ("a == 2" + String(repeating: " ** 2", count: 5_000), nesting),
            ("a." + Array(repeating: "b", count: 50_000).joined(separator: ".") + " == 1", "a key path has more than 100 components (Limits.keyPathComponents)"),
        ]
        for (format, message) in cases {
            let result = try run(["predicate", format])
            XCTAssertEqual(result.status, 1, String(format.prefix(40)))
            XCTAssertTrue(result.stderr.hasPrefix("faultline predicate: \(message) (at character "), "\(format.prefix(40)): \(result.stderr.prefix(300))")
            XCTAssertLessThan(result.stderr.count, 400, "the caret line shows a window of the format, not all of it")
        }
        // 100 levels are allowed.
        let deepest = String(repeating: "(", count: 98) + "a == 1" + String(repeating: ")", count: 98)
        XCTAssertEqual(try run(["predicate", deepest]).stdout, "a == 1\n")

        let model = try companyModel()
        try loadCompany(model)
        let having = try run(["query", "--model", model, "--store", "co.sqlite", "Employee", "--result", "dictionary", "--properties", "name",
                              "--properties", "count(*) as n", "--group-by", "name",
                              "--having", String(repeating: "(", count: 20_000) + "n > 1" + String(repeating: ")", count: 20_000)])
        XCTAssertEqual(having.status, 1)
        XCTAssertTrue(having.stderr.hasPrefix("faultline query: --having: \(nesting)"), having.stderr)
        let longPath = Array(repeating: "manager", count: 10_000).joined(separator: ".") + ".name"
        for option in ["--sort", "--prefetch"] {
            let result = try run(["query", "--model", model, "--store", "co.sqlite", "Employee", option, longPath])
            XCTAssertEqual(result.status, 1, option)
            XCTAssertTrue(result.stderr.contains("has 10001 components; the limit is 100 (Limits.keyPathComponents)"), result.stderr)
        }

        // Inheritance: 2,000 levels of parents.
        var entities = [#"{"name": "E0", "attributes": [{"name": "a0", "type": "string"}]}"#]
        for i in 1..<2_000 { entities.append(#"{"name": "E\#(i)", "parent": "E\#(i - 1)", "attributes": [{"name": "a\#(i)", "type": "string"}]}"#) }
        let deep = try write("deep.json", #"{"entities": [\#(entities.joined(separator: ","))]}"#)
        let schema = try run(["schema", deep])
        XCTAssertEqual(schema.status, 1)
        XCTAssertEqual(schema.stderr, "faultline schema: model '\(deep)', entity 'E101': more than 100 levels of parent entities (Limits.inheritanceDepth)\n")

        // A model too large to lay out is drawn as a table; past 1,000 entities, the first 1,000.
        let wide = (0..<1_200).map { #"{"name": "E\#($0)", "relationships": [{"name": "next", "destination": "E\#(($0 + 1) % 1_200)"}]}"# }
        let wideModel = try write("wide.json", #"{"entities": [\#(wide.joined(separator: ","))]}"#)
        let diagram = try run(["diagram", wideModel, "-o", "wide.svg"])
        XCTAssertEqual(diagram.status, 0, diagram.stderr)
        XCTAssertEqual(diagram.stdout, "wrote wide.svg (1000 entities; drawn as a table: more than 150 entities or 150 edges to lay out; 1000 of 1200 entities (at most 1000))\n")
        let svg = try String(contentsOf: dir.appendingPathComponent("wide.svg"), encoding: .utf8)
        XCTAssertTrue(svg.contains(">next → E1<"), String(svg.prefix(500)))
        XCTAssertEqual(svg.components(separatedBy: "font-weight=\"bold\"").count - 1, 1_000, "one title per entity drawn")
        let objects = try run(["diagram", model, "--store", "co.sqlite", "--limit", "9000", "-o", "objects.svg"])
        XCTAssertNotEqual(objects.status, 0)
        XCTAssertTrue(objects.stderr.hasPrefix("Error: --limit is at most 5000 objects (Limits.diagramObjects)"), objects.stderr)
    }

    /// The commands that only read never create, convert or change a file: a missing store stays missing, and a
    /// zero-byte, foreign or text file stays byte-identical, each with an error naming it.
    func testReadCommandsNeverWrite() throws {
        let model = try companyModel()
        let empty = try write("empty.sqlite", "")
        let text = try write("notes.sqlite", "not a store\n")
        let foreign = dir.appendingPathComponent("foreign.sqlite").path
        let make = try run(["load", "--model", model, "--store", "made.sqlite", try write("one.json", #"{"Project": [{"title": "x"}]}"#)])
        XCTAssertEqual(make.status, 0, make.stderr)
        // A foreign SQLite file: a Faultline store of another model, in rollback-journal mode.
        let otherModel = try write("other.json", #"{"entities": [{"name": "Thing", "attributes": [{"name": "x", "type": "string"}]}]}"#)
        XCTAssertEqual(try run(["load", "--model", otherModel, "--store", foreign, try write("thing.json", #"{"Thing": [{"x": "y"}]}"#)]).status, 0)
        let cases: [(String, String)] = [
            (empty, "'\(empty)' is not a Faultline store: the file is empty"),
            (text, "'\(text)' is not a Faultline store: not an SQLite database (file is not a database)"),
            (foreign, "the store '\(foreign)' was made with a different model (migration needed)"),
            (dir.appendingPathComponent("absent.sqlite").path, "no store at"),
        ]
        for (store, message) in cases {
            let before = try? Data(contentsOf: URL(fileURLWithPath: store))
            let commands: [[String]] = [
                ["query", "--model", model, "--store", store, "Employee"],
                ["query", "--model", model, "--store", store, "Employee", "--result", "count"],
                ["explain", "--model", model, "--store", store, "Employee", "salary > 3"],
                ["diagram", model, "--store", store, "-o", "graph.svg"],
            ]
            for command in commands {
                let result = try run(command)
                XCTAssertEqual(result.status, 1, "\(command)")
                XCTAssertTrue(result.stderr.hasPrefix("faultline \(command[0]): ") && result.stderr.contains(message), "\(command): \(result.stderr)")
                XCTAssertEqual(try? Data(contentsOf: URL(fileURLWithPath: store)), before, "\(command) left \(store) as it was")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("absent.sqlite").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("graph.svg").path))
        let report = try run(["report", try write("t.jsonl", #"{"type":"header","format":"faultline-trace","version":1}"# + "\n"), "-o", "r.html",
                              "--model", model, "--store", empty])
        XCTAssertEqual(report.status, 1)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: empty)), Data())
        // Traces and results files are read, never written, whatever they hold.
        let emptyTrace = try write("empty.jsonl", ""), emptyResults = try write("empty.json", ""), textResults = try write("notes.json", "hello\n")
        for (arguments, message) in [(["report", emptyTrace, "-o", "r.html"], "faultline report: \(emptyTrace): empty — not a Faultline trace or Core Data SQL debug output\n"),
                                     (["compare", emptyTrace, emptyTrace], "faultline compare: \(emptyTrace): empty — not a Faultline trace or Core Data SQL debug output\n"),
                                     (["compare", emptyResults, textResults], "faultline compare: \(emptyResults) is not a Faultline results file: The given data was not valid JSON.\n")] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 1, "\(arguments)")
            XCTAssertEqual(result.stderr, message)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: emptyTrace)), Data())
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: emptyResults)), Data())
        XCTAssertEqual(try String(contentsOfFile: textResults, encoding: .utf8), "hello\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("r.html").path))
    }

    /// Devices, folders and missing folders are named as such, for input and output files alike.
    func testFilesThatAreNotFilesAreNamed() throws {
        let model = try companyModel()
        let cases: [([String], String)] = [
            (["schema", "/dev/null"], "faultline schema: model '/dev/null': is a device, not a file\n"),
            (["load", "--model", model, "--store", "s.sqlite", "/dev/null"], "faultline load: data '/dev/null': is a device, not a file\n"),
            (["load", "--model", model, "--store", "s.sqlite", dir.path], "faultline load: data '\(dir.path)': is a folder, not a file\n"),
            (["query", "--model", model, "--store", "/dev/null", "Employee"], "faultline query: '/dev/null' is not a Faultline store: it is not a regular file\n"),
            (["report", "/dev/null"], "faultline report: /dev/null: is a device, not a file\n"),
            (["compare", "/dev/null", "/dev/null"], "faultline compare: /dev/null: is a device, not a file\n"),
            (["diagram", model, "-o", "/nonexistent/model.svg"], "faultline diagram: cannot write '/nonexistent/model.svg': the folder '/nonexistent' does not exist\n"),
            (["report", "/dev/null", "-o", "/nonexistent/r.html"], "faultline report: cannot write '/nonexistent/r.html': the folder '/nonexistent' does not exist\n"),
            (["bench", "tiers", "--scale", "500", "--out", "\(model)/out"], "faultline bench: cannot make the folder '\(model)/out': '\(model)' is a file\n"),
        ]
        for (arguments, message) in cases {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 1, "\(arguments)")
            XCTAssertEqual(result.stderr, message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("s.sqlite").path), "a bad data file creates no store")
    }

    /// An object's text with a right-to-left override is drawn with the control shown, not obeyed; control
    /// characters that SVG does not allow are shown too, so the file stays valid XML.
    func testControlCharactersInObjectsAreShownInDiagrams() throws {
        let model = try companyModel()
        let data = try write("evil.json", #"{"Project": [{"title": "invoice\u202Efdp.exe\u0001"}]}"#)
        XCTAssertEqual(try run(["load", "--model", model, "--store", "co.sqlite", data]).status, 0)
        let result = try run(["diagram", model, "--store", "co.sqlite", "-o", "graph.svg"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let svg = try Data(contentsOf: dir.appendingPathComponent("graph.svg"))
        let text = String(decoding: svg, as: UTF8.self)
        XCTAssertTrue(text.contains("invoice[U+202E]fdp.exe[U+1]"), text)
        XCTAssertFalse(text.contains("\u{202E}") || text.contains("\u{1}"))
        XCTAssertNotNil(try? XMLDocument(data: svg), "the SVG is well-formed XML")
    }

    /// A model from a shipping app that Xcode compiles loads, with warnings naming each attribute it reads leniently.
    func testLenientModelsLoadWithWarnings() throws {
        let contents = try write("contents", """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Task" representedClassName="Task" syncable="YES">
                <attribute name="done" optional="YES" attributeType="Boolean" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="uuid" optional="YES" attributeType="UUID" defaultValueString="empy" usesScalarValueType="NO"/>
            </entity>
        </model>
        """)
        let schema = try run(["schema", contents])
        XCTAssertEqual(schema.status, 0, schema.stderr)
        XCTAssertEqual(schema.stderr, """
        faultline: warning: model '\(contents)', entity 'Task', property 'done': Boolean default value '0.0' read as a number, as Xcode does: NO
        faultline: warning: model '\(contents)', entity 'Task', property 'uuid': default value 'empy' is not a UUID; the attribute has no default, as in Core Data

        """)
        XCTAssertTrue(schema.stdout.contains("CREATE TABLE ZTASK"), schema.stdout)
    }

    /// A fetch index whose element names a to-many relationship: Xcode accepts it and a shipping app runs with it;
    /// the element (and an index left with none) is left out with a warning, and every command goes on.
    func testAFetchIndexOnAToManyIsLeftOutWithAWarning() throws {
        let contents = try write("contents", """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Folder" representedClassName="Folder" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Item" inverseName="folder" inverseEntity="Item"/>
                <fetchIndex name="byItems"><fetchIndexElement property="items" type="Binary" order="ascending"/></fetchIndex>
                <fetchIndex name="byTitleAndItems">
                    <fetchIndexElement property="title" type="Binary" order="descending"/>
                    <fetchIndexElement property="items" type="Binary" order="ascending"/>
                </fetchIndex>
            </entity>
            <entity name="Item" representedClassName="Item" syncable="YES">
                <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="items" inverseEntity="Folder"/>
            </entity>
        </model>
        """)
        let schema = try run(["schema", contents])
        XCTAssertEqual(schema.status, 0, schema.stderr)
        XCTAssertEqual(schema.stderr, """
        faultline: warning: model '\(contents)', entity 'Folder', property 'items': fetch index 'byItems' names a to-many relationship, which has no column: the element is left out, and with it the index
        faultline: warning: model '\(contents)', entity 'Folder', property 'items': fetch index 'byTitleAndItems' names a to-many relationship, which has no column: the element is left out

        """)
        XCTAssertTrue(schema.stdout.contains("CREATE INDEX Z_Folder_byTitleAndItems ON ZFOLDER (ZTITLE COLLATE BINARY DESC)"), schema.stdout)
        XCTAssertFalse(schema.stdout.contains("byItems"), schema.stdout)
        let diagram = try run(["diagram", contents, "-o", "folders.dot"])
        XCTAssertEqual(diagram.status, 0, diagram.stderr)
        let load = try run(["load", "--model", contents, "--store", "folders.sqlite", try write("folders.json", #"{"Folder": [{"title": "a"}]}"#)])
        XCTAssertEqual(load.status, 0, load.stderr)
    }
}
