import Faultline
import Foundation
import XCTest

/// Runs the real `faultline` binary, as a user would.
final class CLITests: CLITestCase {
    func testDogWalkRoundTripsThroughLoadAndQuery() throws {
        let model = try dogWalkBundle()
        let data = try write("walks.json", """
        {"Dog": [{"@id": "fido", "name": "Fido", "walks": ["w3", "w1", "w2"]}],
         "Walk": [{"@id": "w1", "date": "2017-03-01T08:00:00Z"},
                  {"@id": "w2", "date": "2017-03-02T08:00:00Z"},
                  {"@id": "w3", "date": "2017-03-03T08:00:00Z"}]}
        """)
        let load = try run(["load", "--model", model, "--store", "dogs.sqlite", data])
        XCTAssertEqual(load.status, 0, load.stderr)
        XCTAssertEqual(load.stdout, "loaded 4 objects into dogs.sqlite: 1 Dog, 3 Walk\n")

        let dogs = try run(["query", "--model", model, "--store", "dogs.sqlite", "Dog"])
        XCTAssertEqual(dogs.status, 0, dogs.stderr)
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(dogs.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(parsed.count, 1)
        XCTAssertEqual(parsed[0]["name"] as? String, "Fido")
        let id = try XCTUnwrap(parsed[0]["@id"] as? String)
        XCTAssertTrue(id.hasPrefix("x-coredata://") && id.hasSuffix("/Dog/p1"), id)
        let walkIDs = try XCTUnwrap(parsed[0]["walks"] as? [String])
        XCTAssertEqual(walkIDs.map { String($0.split(separator: "/").last!) }, ["p3", "p1", "p2"], "the ordered relationship keeps its order")

        let walks = try run(["query", "--model", model, "--store", "dogs.sqlite", "Walk", "--format", "table", "--limit", "2"])
        XCTAssertEqual(walks.status, 0, walks.stderr)
        let lines = walks.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[0], "@id      @entity  date                      dog")
        XCTAssertEqual(lines[2], "Walk/p1  Walk     2017-03-01T08:00:00.000Z  Dog/p1")
        XCTAssertEqual(lines.last, "(2 objects)")

        // The store is in Core Data's layout.
        let schema = try run(["schema", model])
        XCTAssertEqual(schema.status, 0)
        XCTAssertTrue(schema.stdout.contains("CREATE TABLE ZWALK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZDOG INTEGER, Z_FOK_DOG INTEGER, ZDATE TIMESTAMP )"), schema.stdout)
    }

    func testBadInputExitsNonZeroWithAClearMessageAndWritesNothing() throws {
        let model = try dogWalkBundle()
        let good = try write("good.json", #"{"Dog": [{"name": "Rex"}]}"#)
        XCTAssertEqual(try run(["load", "--model", model, "--store", "dogs.sqlite", good]).status, 0)

        let bad = try write("bad.json", #"{"Dog": [{"name": "Ok"}, {"name": 7}]}"#)
        let result = try run(["load", "--model", model, "--store", "dogs.sqlite", bad])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.stderr, "faultline load: data '\(bad)', entity 'Dog', record #2, key 'name': expected a string for a String attribute, got the number 7\n")
        // The file is named as the user gave it.
        XCTAssertEqual(try run(["load", "--model", model, "--store", "dogs.sqlite", "bad.json"]).stderr,
                       "faultline load: data 'bad.json', entity 'Dog', record #2, key 'name': expected a string for a String attribute, got the number 7\n")
        let after = try run(["query", "--model", model, "--store", "dogs.sqlite", "Dog", "--format", "table"])
        XCTAssertTrue(after.stdout.hasSuffix("(1 object)\n"), "the bad file wrote nothing: \(after.stdout)")

        let badModel = try write("model.json", #"{"entities": [{"name": "A", "relationships": [{"name": "b", "destination": "Nope"}]}]}"#)
        let schema = try run(["schema", badModel])
        XCTAssertNotEqual(schema.status, 0)
        XCTAssertEqual(schema.stderr, "faultline schema: model '\(badModel)', entity 'A', property 'b': destination entity 'Nope' does not exist\n")

        let junk = try write("junk.sqlite", String(repeating: "not a database ", count: 200))
        let query = try run(["query", "--model", model, "--store", junk, "Dog"])
        XCTAssertNotEqual(query.status, 0)
        XCTAssertTrue(query.stderr.hasPrefix("faultline query: '\(junk)' is not a Faultline store: not an SQLite database"), query.stderr)

        let missing = try run(["query", "--model", model, "--store", "absent.sqlite", "Dog"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("absent.sqlite").path), "query never creates a store")

        let unknownEntity = try run(["query", "--model", model, "--store", "dogs.sqlite", "Cat"])
        XCTAssertEqual(unknownEntity.stderr, "faultline query: fetch request: the model has no entity named 'Cat' (its entities: Dog, Walk)\n")
        let explainUnknown = try run(["explain", "--model", model, "--store", "dogs.sqlite", "Cat"])
        XCTAssertTrue(explainUnknown.stderr.hasSuffix("the model has no entity named 'Cat' (its entities: Dog, Walk)\n"), explainUnknown.stderr)

        // A store that caches no model: each hint names what the command takes.
        let uncached = dir.appendingPathComponent("dogs.sqlite").path
        for (arguments, hint) in [(["diagram", "--store", uncached], "give the model first: faultline diagram MODEL --store STORE"),
                                  (["diagram", uncached], "give its model file instead"), (["schema", uncached], "give its model file instead"),
                                  (["query", "--store", uncached, "Dog"], "give --model")] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 1, "\(arguments)")
            XCTAssertTrue(result.stderr.hasSuffix("carries no model: its Z_MODELCACHE is absent or empty (Core Data before iOS 10 and macOS 10.12 wrote none; Faultline's own stores keep it empty); \(hint)\n"), "\(arguments): \(result.stderr)")
        }
    }

    func testPredicateLinter() throws {
        let unbound = try run(["predicate", "(SUBQUERY(%K, $x, $x.%K >= %lu).@count == 0)"])
        XCTAssertEqual(unbound.status, 0, unbound.stderr)
        XCTAssertEqual(unbound.stdout, "SUBQUERY(%K, $x, $x.%K >= %lu).@count == 0\n")
        let bound = try run(["predicate", "(SUBQUERY(%K, $x, $x.%K >= %lu).@count == 0)", "--arg", "residents", "--arg", "age", "--arg", "36"])
        XCTAssertEqual(bound.stdout, "SUBQUERY(residents, $x, $x.age >= 36).@count == 0\n")
        let bad = try run(["predicate", "name == 'x' AND age >= "])
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual(bad.stderr, "faultline predicate: expected an expression, found the end (at character 24)\n  name == 'x' AND age >= \n                         ^\n")
        let wrongArgument = try run(["predicate", "age > %d", "--arg", "old"])
        XCTAssertEqual(wrongArgument.status, 1)
        XCTAssertTrue(wrongArgument.stderr.contains("%d needs an integer, got String"), wrongArgument.stderr)
    }

    func testQueryWithPredicateSortAndResultTypes() throws {
        let model = try dogWalkBundle()
        let data = try write("walks.json", """
        {"Dog": [{"@id": "fido", "name": "Fido"}, {"@id": "rex", "name": "Rex"}],
         "Walk": [{"date": "2017-03-01T08:00:00Z", "dog": "fido"}, {"date": "2017-03-02T08:00:00Z", "dog": "fido"},
                  {"date": "2017-03-03T08:00:00Z", "dog": "rex"}]}
        """)
        XCTAssertEqual(try run(["load", "--model", model, "--store", "dogs.sqlite", data]).status, 0)
        let count = try run(["query", "--model", model, "--store", "dogs.sqlite", "Walk", "dog.name ==[c] %@", "--arg", "FIDO", "--result", "count"])
        XCTAssertEqual(count.stdout, "{\"count\": 2}\n", count.stderr)
        let ids = try run(["query", "--model", model, "--store", "dogs.sqlite", "Walk", "date >= %@", "--arg", "2017-03-02T00:00:00Z",
                           "--sort", "date:desc", "--result", "ids", "--format", "table"])
        XCTAssertEqual(ids.stdout.split(separator: "\n").map { String($0.split(separator: "/").suffix(2).joined(separator: "/")) }, ["Walk/p3", "Walk/p2", "(2 objects)"])
        let paged = try run(["query", "--model", model, "--store", "dogs.sqlite", "Dog", "--sort", "name:desc", "--offset", "1", "--format", "table"])
        XCTAssertTrue(paged.stdout.contains("Fido") && !paged.stdout.contains("Rex"), paged.stdout)
        let grouped = try run(["query", "--model", model, "--store", "dogs.sqlite", "Walk", "--result", "dictionary",
                               "--properties", "dog.name", "--properties", "count(*) as walks", "--group-by", "dog.name",
                               "--sort", "dog.name", "--having", "walks >= 1"])
        XCTAssertEqual(grouped.status, 0, grouped.stderr)
        let parsedRows = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(grouped.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(parsedRows.map { $0["dog.name"] as? String }, ["Fido", "Rex"])
        XCTAssertEqual(parsedRows.map { $0["walks"] as? Int }, [2, 1])
        let prefetched = try run(["query", "--model", model, "--store", "dogs.sqlite", "Dog", "--prefetch", "walks", "--batch-size", "1", "--format", "table"])
        XCTAssertEqual(prefetched.status, 0, prefetched.stderr)
        XCTAssertTrue(prefetched.stdout.contains("[Walk/p1, Walk/p2]"), prefetched.stdout)
        let misuse = try run(["query", "--model", model, "--store", "dogs.sqlite", "Dog", "--group-by", "name"])
        XCTAssertNotEqual(misuse.status, 0)
        XCTAssertTrue(misuse.stderr.contains("--properties, --group-by, --having and --distinct go with --result dictionary"), misuse.stderr)
        let syntax = try run(["query", "--model", model, "--store", "dogs.sqlite", "Walk", "date >"])
        XCTAssertEqual(syntax.status, 1)
        XCTAssertEqual(syntax.stderr, "faultline query: expected an expression, found the end (at character 7)\n  date >\n        ^\n")
        let unknown = try run(["query", "--model", model, "--store", "dogs.sqlite", "Walk", "dog.nme == 1"])
        XCTAssertEqual(unknown.stderr, "faultline query: fetch request: entity 'Dog' has no key 'nme'\n")
    }

    func testExplainShowsPlanAndProvenIndex() throws {
        let model = try dogWalkBundle()
        // 1,500 walks an hour apart from 1 March 2017, 08:00: 43 of them after 1 May.
        let start = Date(timeIntervalSince1970: 1_488_355_200)
        let walks = (0..<1_500).map { #"{"date": "\#(ISO8601DateFormatter().string(from: start.addingTimeInterval(Double($0) * 3_600)))"}"# }
        let data = try write("walks.json", #"{"Walk": ["# + walks.joined(separator: ", ") + "]}")
        XCTAssertEqual(try run(["load", "--model", model, "--store", "dogs.sqlite", data]).status, 0)
        let before = try Data(contentsOf: dir.appendingPathComponent("dogs.sqlite"))
        let result = try run(["explain", "--model", model, "--store", "dogs.sqlite", "Walk", "date > %@", "--arg", "2017-05-01T00:00:00Z", "--sort", "date:desc"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("measured on a scratch copy: 1500 rows examined, 43 returned"), result.stdout)
        XCTAssertTrue(result.stdout.contains("verdict: the statement scans all 1500 rows of ZWALK: it examines 1500 rows to return 43 (2.9%)."), result.stdout)
        XCTAssertTrue(result.stdout.contains("gives: examines 43 rows instead of 1500"), result.stdout)
        XCTAssertTrue(result.stdout.hasPrefix("SQL: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZDOG, t0.Z_FOK_DOG, t0.ZDATE FROM ZWALK t0 WHERE t0.ZDATE > ? ORDER BY t0.ZDATE DESC\n"), result.stdout)
        XCTAssertTrue(result.stdout.contains("`--SCAN t0   [full scan]"), result.stdout)
        XCTAssertTrue(result.stdout.contains("suggestion: CREATE INDEX ZWALK_ZDATE ON ZWALK (ZDATE)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("`--SEARCH t0 USING INDEX ZWALK_ZDATE (ZDATE>?)"), result.stdout)
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent("dogs.sqlite")), before, "the store itself is not changed")
    }

    func testSQLDebugLaunchArgumentAndEnvironment() throws {
        let model = try dogWalkBundle()
        let data = try write("walks.json", #"{"Dog": [{"name": "Rex"}]}"#)
        XCTAssertEqual(try run(["load", "--model", model, "--store", "dogs.sqlite", data]).status, 0)
        let result = try run(["query", "--model", model, "--store", "dogs.sqlite", "Dog", "name == %@", "--arg", "Rex", "--result", "count",
                              "-com.apple.CoreData.SQLDebug", "2"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "{\"count\": 1}\n")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains("Faultline: sql: SELECT COUNT(*) FROM ZDOG t0 WHERE t0.ZNAME = ?"), result.stderr)
        XCTAssertTrue(lines.contains("Faultline: details: SQLite bind[0] = \"Rex\""), result.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("Faultline: annotation: total count request execution time: ") && $0.hasSuffix("for count of 1.") }, result.stderr)

        // The same through the environment, as a user sets it in a scheme or a shell.
        let query = ["query", "--model", model, "--store", "dogs.sqlite", "Dog", "name == %@", "--arg", "Rex", "--result", "count"]
        let environment = try run(query, environment: ["FAULTLINE_SQLDEBUG": "1"])
        XCTAssertEqual(environment.status, 0, environment.stderr)
        XCTAssertTrue(environment.stderr.contains("Faultline: sql: SELECT COUNT(*) FROM ZDOG t0 WHERE t0.ZNAME = ?\n"), environment.stderr)
        XCTAssertFalse(environment.stderr.contains("bind[0]"), "level 1 shows no bindings: \(environment.stderr)")
        let traced = try run(query, environment: ["FAULTLINE_TRACE": dir.appendingPathComponent("query.jsonl").path])
        XCTAssertEqual(traced.status, 0, traced.stderr)
        XCTAssertEqual(traced.stderr, "", "a trace alone prints nothing")
        let trace = try String(contentsOf: dir.appendingPathComponent("query.jsonl"), encoding: .utf8).split(separator: "\n")
        XCTAssertTrue(trace.first?.contains(#""format":"faultline-trace""#) == true, "\(trace.first ?? "")")
        XCTAssertEqual(trace.filter { $0.contains(#""type":"fetch""#) && $0.contains(#""entity":"Dog""#) }.count, 1, trace.joined(separator: "\n"))
        // A variable in the test runner's own environment does not reach the child.
        setenv("FAULTLINE_SQLDEBUG", "3", 1)
        defer { unsetenv("FAULTLINE_SQLDEBUG") }
        let plain = try run(query)
        XCTAssertEqual(plain.stderr, "", "inherited FAULTLINE_* variables are stripped")
    }

    func testSchemaOfEveryFixtureModel() throws {
        var fixtures = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { fixtures.deleteLastPathComponent() }
        fixtures = fixtures.appendingPathComponent("shared/fixtures/xcdatamodels")
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent") }
        let files = try FileManager.default.contentsOfDirectory(atPath: fixtures.path).filter({ $0.hasSuffix(".xml") }).sorted()
        XCTAssertGreaterThanOrEqual(files.count, 20, "the fixture folder holds its models")
        for file in files {
            let result = try run(["schema", fixtures.appendingPathComponent(file).path])
            XCTAssertEqual(result.status, 0, "\(file): \(result.stderr)")
            // One table per root entity: every root entity named in the XML has its CREATE TABLE.
            let xml = try String(contentsOf: fixtures.appendingPathComponent(file), encoding: .utf8)
            let roots = xml.components(separatedBy: "<entity ").dropFirst().compactMap { element -> String? in
                let tag = String(element.prefix { $0 != ">" })
                guard !tag.contains("parentEntity=") else { return nil }
                return tag.range(of: #"name="([^"]+)""#, options: .regularExpression).map { String(tag[$0].dropFirst(6).dropLast()) }
            }
            XCTAssertTrue(result.stdout.contains("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);"), file)
            for root in roots {
                XCTAssertTrue(result.stdout.contains("CREATE TABLE Z\(root.uppercased()) ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER"), "\(file): \(root)")
            }
        }
    }

    /// `bench --list` by theme, citing works a Core Data developer can look up (the digests' keys only in brackets);
    /// `--tag` selects a theme's scenarios, and an unknown tag is named.
    func testBenchListsByThemeWithSourcesUsersKnowAndRunsATag() throws {
        let list = try run(["bench", "--list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("Inserting, changing and saving (--tag saving)\n  "), list.stdout)
        XCTAssertTrue(list.stdout.contains("source: objc.io, Core Data (Eggert & Kugler) › Performance › Inserting and Changing Objects [P-35"), list.stdout)
        XCTAssertTrue(list.stdout.contains("waiting for NSAsynchronousFetchRequest: "), list.stdout)
        XCTAssertTrue(list.stdout.contains("\n  noindex\n"), "noindex: is built: a scenario, no longer waiting")
        XCTAssertFalse(list.stdout.contains("seed 0"), "no digest file names")
        XCTAssertNil(list.stdout.range(of: #"\bL[0-9]{3,4}\b"#, options: .regularExpression), "no digest line numbers")
        let themes = list.stdout.split(separator: "\n").filter { $0.hasSuffix(")") && $0.contains(" (--tag ") }
        XCTAssertGreaterThanOrEqual(themes.count, 15, "\(themes)")

        let saving = try run(["bench", "--list", "--tag", "saving"])
        XCTAssertEqual(saving.status, 0, saving.stderr)
        XCTAssertTrue(saving.stdout.hasPrefix("Inserting, changing and saving (--tag saving)\n"), saving.stdout)
        XCTAssertTrue(saving.stdout.contains("\n  insert\n") && !saving.stdout.contains("\n  tiers\n"), saving.stdout)

        let bad = try run(["bench", "--tag", "speed", "--out", "bad"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("speed") && bad.stderr.contains("sqlite"), bad.stderr)
    }

    /// `faultline bench` as a user runs it: a small run writes its three files and a summary; bad arguments and
    /// files are named, with a non-zero exit.
    func testBenchRunsScenariosAndWritesItsFiles() throws {
        let list = try run(["bench", "--list"])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("tiers\n") && list.stdout.contains("claim: "), list.stdout)

        let result = try run(["bench", "--scale", "500", "--repetitions", "1", "--out", "out", "tiers", "insert"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("tiers — Tiers"), result.stdout)
        XCTAssertTrue(result.stdout.contains("ratio engine / raw SQLite"), result.stdout)
        XCTAssertTrue(result.stderr.contains("[1/2] tiers"), "progress on stderr")
        #if DEBUG
        XCTAssertTrue(result.stderr.contains("WARNING: this is a DEBUG build"), result.stderr)
        #endif
        for file in ["results.json", "trace.jsonl.gz", "index.html"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("out/\(file)").path), file)
        }
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("out/results.json"))) as? [String: Any])
        XCTAssertEqual(json["format"] as? String, "faultline-bench-results")
        XCTAssertEqual((json["scenarios"] as? [[String: Any]])?.compactMap { $0["id"] as? String }, ["tiers", "insert"])

        let compared = try run(["bench", "--scale", "500", "--repetitions", "1", "--out", "again", "--baseline", "out/results.json", "insert"])
        XCTAssertEqual(compared.status, 0, compared.stderr)
        XCTAssertTrue(compared.stdout.contains("vs baseline"), compared.stdout)

        // The README's tables from the run's results: the speed table (insert has peers), the memory one (no memory
        // scenario ran: its header only); an unknown table is named.
        let speed = try run(["bench", "--markdown", "out/results.json"])
        XCTAssertEqual(speed.status, 0, speed.stderr)
        XCTAssertTrue(speed.stdout.contains("| `insert` | engine |"), speed.stdout)
        let memory = try run(["bench", "--markdown", "out/results.json", "--table", "memory"])
        XCTAssertEqual(memory.status, 0, memory.stderr)
        XCTAssertTrue(memory.stdout.contains("| scenario | kept (allocated), per variant | verdict |"), memory.stdout)
        XCTAssertFalse(memory.stdout.contains("`insert`"), memory.stdout)
        let claims = try run(["bench", "--markdown", "out/results.json", "--table", "claims"])
        XCTAssertEqual(claims.status, 0, claims.stderr)
        XCTAssertTrue(claims.stdout.contains("| The stack's tiers and overheads | `tiers`:"), claims.stdout)
        XCTAssertNotNil(claims.stdout.range(of: #"2 claims measured: \d held, \d refuted, \d not judged; \d+ waiting\. The run took \d+( m \d+)? s\."#,
                                             options: .regularExpression), claims.stdout)
        let table = try run(["bench", "--markdown", "out/results.json", "--table", "colour"])
        XCTAssertNotEqual(table.status, 0)
        XCTAssertTrue(table.stderr.contains("colour"), table.stderr)
    }

    func testBenchNamesBadArguments() throws {
        let unknown = try run(["bench", "--scale", "500", "no-such-scenario"])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("unknown scenario 'no-such-scenario'"), unknown.stderr)
        let scale = try run(["bench", "--scale", "tiny"])
        XCTAssertNotEqual(scale.status, 0)
        XCTAssertTrue(scale.stderr.contains("--scale must be small, medium, large or a row count"), scale.stderr)
        let baseline = try write("baseline.json", "{\"format\": \"something else\", \"version\": 1, \"run\": {}, \"scenarios\": []}")
        let bad = try run(["bench", "--scale", "500", "--baseline", baseline, "tiers"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains(baseline), bad.stderr)
        let model = try run(["bench", "--model", "missing.xcdatamodeld"])
        XCTAssertNotEqual(model.status, 0)
        XCTAssertTrue(model.stderr.contains("missing.xcdatamodeld"), model.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("Reports").path), "nothing written on bad input")
    }

    /// `faultline compare` is a CI gate: identical runs pass; a run with an injected regression (more statements,
    /// a slower engine variant) exits 1 and says what regressed.
    func testCompareGatesRegressions() throws {
        let bench = try run(["bench", "--scale", "500", "--repetitions", "1", "--out", "base", "tiers", "prefetch-mayors"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        let same = try run(["compare", "base/results.json", "base/results.json", "--html", "same.html"])
        XCTAssertEqual(same.status, 0, same.stdout + same.stderr)
        XCTAssertTrue(same.stdout.contains("no regression"), same.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("same.html").path))

        // Inject: prefetching issues one more statement; the SQLite tier runs three times slower.
        var json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("base/results.json"))) as? [String: Any])
        var scenarios = try XCTUnwrap(json["scenarios"] as? [[String: Any]])
        for i in scenarios.indices {
            var variants = try XCTUnwrap(scenarios[i]["variants"] as? [[String: Any]])
            for j in variants.indices {
                switch (scenarios[i]["id"] as? String, variants[j]["name"] as? String) {
                case ("prefetch-mayors", "prefetch"):
                    var counters = try XCTUnwrap(variants[j]["counters"] as? [String: Any])
                    counters["statements"] = (counters["statements"] as? Int ?? 0) + 1
                    variants[j]["counters"] = counters
                case ("tiers", "SQLite fault"):
                    variants[j]["median"] = (variants[j]["median"] as? Double ?? 0) * 3
                default: break
                }
            }
            scenarios[i]["variants"] = variants
        }
        json["scenarios"] = scenarios
        try JSONSerialization.data(withJSONObject: json).write(to: dir.appendingPathComponent("new.json"))
        let regressed = try run(["compare", "base/results.json", "new.json"])
        XCTAssertEqual(regressed.status, 1, regressed.stdout + regressed.stderr)
        XCTAssertTrue(regressed.stdout.contains("prefetch-mayors / prefetch") && regressed.stdout.contains("3 statements, 2 in the baseline"), regressed.stdout)
        XCTAssertTrue(regressed.stdout.contains("tiers / SQLite fault") && regressed.stdout.contains("more than 10% slower"), regressed.stdout)
        let allowed = try run(["compare", "base/results.json", "new.json", "--allow", "prefetch-mayors", "--max-slowdown", "300%"])
        XCTAssertEqual(allowed.status, 0, allowed.stdout)
        // A scenario changed to do twice the operations a run, with twice the time and statements: the same per
        // operation, so no regression, and a note saying how it was compared.
        var doubled = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("base/results.json"))) as? [String: Any])
        var doubledScenarios = try XCTUnwrap(doubled["scenarios"] as? [[String: Any]])
        for i in doubledScenarios.indices where doubledScenarios[i]["id"] as? String == "prefetch-mayors" {
            var variants = try XCTUnwrap(doubledScenarios[i]["variants"] as? [[String: Any]])
            for j in variants.indices {
                variants[j]["operations"] = (variants[j]["operations"] as? Int ?? 1) * 2
                variants[j]["median"] = (variants[j]["median"] as? Double ?? 0) * 2
                var counters = try XCTUnwrap(variants[j]["counters"] as? [String: Any])
                counters["statements"] = (counters["statements"] as? Int ?? 0) * 2
                variants[j]["counters"] = counters
            }
            doubledScenarios[i]["variants"] = variants
        }
        doubled["scenarios"] = doubledScenarios
        try JSONSerialization.data(withJSONObject: doubled).write(to: dir.appendingPathComponent("doubled.json"))
        let perOperation = try run(["compare", "base/results.json", "doubled.json"])
        XCTAssertEqual(perOperation.status, 0, perOperation.stdout + perOperation.stderr)
        XCTAssertTrue(perOperation.stdout.contains("prefetch-mayors/prefetch: 200 operations a run in the baseline, 400 now: compared per operation"),
                      perOperation.stdout)
        // One statement more than twice as many is more per operation: a regression, said per operation.
        for i in doubledScenarios.indices where doubledScenarios[i]["id"] as? String == "prefetch-mayors" {
            var variants = try XCTUnwrap(doubledScenarios[i]["variants"] as? [[String: Any]])
            for j in variants.indices where variants[j]["name"] as? String == "prefetch" {
                var counters = try XCTUnwrap(variants[j]["counters"] as? [String: Any])
                counters["statements"] = (counters["statements"] as? Int ?? 0) + 1
                variants[j]["counters"] = counters
            }
            doubledScenarios[i]["variants"] = variants
        }
        doubled["scenarios"] = doubledScenarios
        try JSONSerialization.data(withJSONObject: doubled).write(to: dir.appendingPathComponent("more.json"))
        let more = try run(["compare", "base/results.json", "more.json"])
        XCTAssertEqual(more.status, 1, more.stdout + more.stderr)
        XCTAssertTrue(more.stdout.contains("prefetch-mayors / prefetch") && more.stdout.contains("5 statements in 400 operations, 2 in 200 in the baseline"), more.stdout)
        // Traces: the N+1 variant's trace against the prefetching one's gains a finding and statements.
        let traces = String(decoding: try InputFile.read(dir.appendingPathComponent("base/trace.jsonl.gz").path), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let header = String(traces[0])
        func segment(_ name: String) -> String {
            var inside = false
            var lines = [header]
            for line in traces.dropFirst() where !line.isEmpty {
                if line.contains(#""type":"signpost""#) { inside = line.contains(#""name":"prefetch-mayors/\#(name)""#); if inside { lines.append(#"{"type":"signpost","t":0,"name":"mayors"}"#) }; continue }
                if inside { lines.append(String(line)) }
            }
            return lines.joined(separator: "\n") + "\n"
        }
        let good = try write("good.jsonl", segment("prefetch")), worse = try write("worse.jsonl", segment("N+1"))
        XCTAssertEqual(try run(["compare", good, good]).status, 0)
        let traceRegression = try run(["compare", good, worse])
        XCTAssertEqual(traceRegression.status, 1, traceRegression.stdout + traceRegression.stderr)
        XCTAssertTrue(traceRegression.stdout.contains("REGRESSION: new finding: N+1 faults in mayors"), traceRegression.stdout)
        let bad = try run(["compare", "base/results.json", "missing.json"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("missing.json"), bad.stderr)
    }

    /// `faultline report` on a bench trace: findings on the N+1 variant, none on the prefetching one; the page,
    /// the Chrome export; a file that is not a trace is named.
    func testReportFindsTheNPlusOneOfABenchTrace() throws {
        let bench = try run(["bench", "--scale", "10000", "--repetitions", "1", "--out", "run", "prefetch-mayors"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        let report = try run(["report", "run/trace.jsonl.gz", "-o", "report.html", "--chrome", "chrome.json.gz"])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.contains("N+1 faults (prefetch-mayors/N+1"), report.stdout)
        XCTAssertFalse(report.stdout.contains("N+1 faults (prefetch-mayors/prefetch"), report.stdout)
        XCTAssertFalse(report.stdout.contains("N+1 faults (prefetch-mayors/batch faulting"), report.stdout)
        XCTAssertFalse(report.stdout.contains(" at Faultline/"), "call sites point at the caller's code: \(report.stdout)")
        // The caller here is Faultline's own benchmark code: said so, never given as the program's call site.
        XCTAssertTrue(report.stdout.contains("at Faultline's own code, FaultlineBench/"), report.stdout)
        XCTAssertFalse(report.stdout.contains(" at FaultlineBench/"), report.stdout)
        let json = try run(["report", "run/trace.jsonl.gz", "--json"])
        // Every run gives the same findings to the last bit (times are summed in trace order, never a set's).
        XCTAssertEqual(try run(["report", "run/trace.jsonl.gz", "--json"]).stdout, json.stdout)
        let findings = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        XCTAssertFalse(findings.isEmpty)
        XCTAssertTrue(findings.allSatisfy { $0["callSite"] is NSNull }, json.stdout)
        XCTAssertTrue(findings.contains { ($0["faultlineSite"] as? String)?.hasPrefix("FaultlineBench/") == true }, json.stdout)
        let page = try String(contentsOf: dir.appendingPathComponent("report.html"), encoding: .utf8)
        XCTAssertTrue(page.contains("Findings") && page.contains("Statements by fingerprint") && page.contains("<svg"))
        // Named .gz: written compressed (Perfetto's UI opens it so).
        let compressedChrome = try Data(contentsOf: dir.appendingPathComponent("chrome.json.gz"))
        XCTAssertEqual(Array(compressedChrome.prefix(2)), [0x1f, 0x8b])
        let chrome = try XCTUnwrap(JSONSerialization.jsonObject(with: try InputFile.read(dir.appendingPathComponent("chrome.json.gz").path)) as? [String: Any])
        XCTAssertGreaterThan((chrome["traceEvents"] as? [Any])?.count ?? 0, 100)
        let notTrace = try write("notes.txt", "hello\n")
        let bad = try run(["report", notTrace, "-o", "bad.html"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("notes.txt:1"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("bad.html").path))
    }

    /// `report` on a folder (or a glob) of traces from several processes: one finding per problem across them, with
    /// the processes that showed it; a malformed file is named with its line and field, the others still reported.
    func testReportOnAFleetAggregatesAcrossProcessesAndNamesABadFile() throws {
        let bench = try run(["bench", "--scale", "10000", "--repetitions", "1", "--out", "run", "prefetch-mayors"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        let trace = String(decoding: try InputFile.read(dir.appendingPathComponent("run/trace.jsonl.gz").path), as: UTF8.self)
        let lines = trace.split(separator: "\n", omittingEmptySubsequences: false)
        // The same run as seen from a second process on another host: its header says so.
        let header = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        var other = header
        other["pid"] = 999_999
        other["host"] = "host-b"
        let otherHeader = String(decoding: try JSONSerialization.data(withJSONObject: other, options: [.sortedKeys]), as: UTF8.self)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("fleet"), withIntermediateDirectories: true)
        _ = try write("fleet/a.jsonl", trace)
        _ = try write("fleet/b.jsonl", ([otherHeader] + lines.dropFirst().map(String.init)).joined(separator: "\n"))
        _ = try write("fleet/c.jsonl", String(lines[0]) + "\n" + #"{"type":"fetch","t":1,"entity":"City","totalTime":"slow"}"# + "\n")
        let json = try run(["report", "fleet", "--json"])
        XCTAssertEqual(json.status, 1, "a file was not read: \(json.stderr)")
        XCTAssertTrue(json.stderr.contains("c.jsonl:2:") && json.stderr.contains("totalTime"), json.stderr)
        let findings = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], json.stdout)
        let nPlusOne = findings.filter { ($0["id"] as? String) == "n-plus-one" }
        XCTAssertEqual(nPlusOne.count, 1, "one finding across the fleet: \(nPlusOne)")
        XCTAssertEqual((nPlusOne.first?["segments"] as? [String])?.count, 2, "shown by both processes: \(nPlusOne)")
        XCTAssertTrue((nPlusOne.first?["segments"] as? [String])?.contains { $0.hasSuffix("@host-b/999999") } == true, "\(nPlusOne)")
        // A quoted glob pattern is a fleet too; the two good files alone give no error.
        let text = try run(["report", "fleet/[ab].jsonl", "-o", "fleet.html"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("fleet of 2 files, 2 processes"), text.stdout)
        XCTAssertTrue(text.stdout.contains("N+1 faults (2 of 2 processes"), text.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("fleet.html").path))
        let none = try run(["report", "fleet/*.nothing"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("no file matches 'fleet/*.nothing'"), none.stderr)
    }

    func testDiagramWritesSVGAndPNGAndNamesBadArguments() throws {
        let bundle = try dogWalkBundle()
        let svg = try run(["diagram", bundle, "-o", "dogs.svg"])
        XCTAssertEqual(svg.status, 0, svg.stderr)
        let text = try String(contentsOf: dir.appendingPathComponent("dogs.svg"), encoding: .utf8)
        XCTAssertTrue(text.contains(">Dog<") && text.contains(">Walk<"), text)
        XCTAssertEqual(try run(["diagram", bundle, "-o", "dogs.png"]).status, 0)
        XCTAssertEqual(Array(try Data(contentsOf: dir.appendingPathComponent("dogs.png")).prefix(4)), [0x89, 0x50, 0x4E, 0x47])
        let wrong = try run(["diagram", bundle, "-o", "dogs.pdf"])
        XCTAssertNotEqual(wrong.status, 0)
        XCTAssertTrue(wrong.stderr.contains("-o must end in .svg, .png, .dot or .json"), wrong.stderr)
        // A model folder given where a store goes is named as a folder, not an I/O error.
        for command in [["info", bundle], ["history", bundle]] {
            let folder = try run(command)
            XCTAssertNotEqual(folder.status, 0)
            XCTAssertTrue(folder.stderr.contains("it is a folder"), folder.stderr)
        }
        let missing = try run(["diagram", "nope.xcdatamodeld"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("nope.xcdatamodeld"), missing.stderr)
    }

    /// The object graph of a store: from its first objects, or from a root out to a depth; a bad root is named.
    func testDiagramOfAStoresObjects() throws {
        let bench = try run(["bench", "--scale", "10000", "--repetitions", "1", "--out", "run", "--keep-data", "prefetch-mayors"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        let store = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("run/data/shared").path).first { $0.hasSuffix(".sqlite") })
        let model = try write("city.json", """
        {"entities":[{"name":"City","attributes":[{"name":"name","type":"string","optional":false,"default":""},{"name":"name_normalized","type":"string","optional":false,"default":"","indexed":true},{"name":"population","type":"integer64","optional":false,"default":0,"indexed":true},{"name":"isCapital","type":"boolean","optional":false,"default":false}],"relationships":[{"name":"residents","destination":"Person","inverse":"homeTown","toMany":true},{"name":"mayor","destination":"Person","inverse":"mayorOf"}]},{"name":"Person","attributes":[{"name":"name","type":"string","optional":false,"default":""}],"relationships":[{"name":"homeTown","destination":"City","inverse":"residents"},{"name":"mayorOf","destination":"City","inverse":"mayor"}]}]}
        """)
        let path = "run/data/shared/\(store)"
        let first = try run(["diagram", model, "--store", path, "--limit", "20", "-o", "objects.dot"])
        XCTAssertEqual(first.status, 0, first.stderr)
        let dot = try String(contentsOf: dir.appendingPathComponent("objects.dot"), encoding: .utf8)
        XCTAssertTrue(dot.contains("Berlin") && dot.contains("cluster") && dot.contains("+1 Person · residents: not loaded") && dot.contains("layout=osage"), dot)
        let uuid = try XCTUnwrap(dot.range(of: #"x-coredata://[^/]+"#, options: .regularExpression).map { String(dot[$0]) })
        let rooted = try run(["diagram", model, "--store", path, "--root", "\(uuid)/City/p2", "--depth", "1", "-o", "root.svg"])
        XCTAssertEqual(rooted.status, 0, rooted.stderr)
        XCTAssertTrue(try String(contentsOf: dir.appendingPathComponent("root.svg"), encoding: .utf8).contains("San Francisco"))
        let bad = try run(["diagram", model, "--store", path, "--root", "x-coredata://nope/City/p1", "-o", "bad.svg"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("x-coredata://nope/City/p1"), bad.stderr)
    }
}
