import Foundation
import XCTest

/// The store's own indexes, judged with `--store`: redundant by their columns (an index whose columns begin a
/// compound index's), unused by the trace's plans; `explain` lists the fetched table's indexes the same way.
final class StoreIndexCLITests: CLITestCase {
    func testRedundantAndUnusedIndexesComeFromTheStoresSchema() throws {
        let model = try write("Cities.json", """
            {"entities":[{"name":"City","attributes":[{"name":"name","type":"string","indexed":true},
            {"name":"population","type":"integer64","indexed":true},{"name":"country","type":"string"}],"indexes":[["name","population"]]}]}
            """)
        let cities = (0..<3_000).map { #"{"name":"c\#($0)","population":\#($0 * 7 % 5_000),"country":"x\#($0 % 20)"}"# }.joined(separator: ",")
        XCTAssertEqual(try run(["load", "--model", model, "--store", "cities.sqlite", try write("cities.json", #"{"City":[\#(cities)]}"#)]).status, 0)
        // A traced run that searches by population: its plan uses the population index, and nothing else.
        let query = try run(["query", "--model", model, "--store", "cities.sqlite", "City", "population > 4990", "--result", "count"],
                            environment: ["FAULTLINE_TRACE": dir.appendingPathComponent("trace.jsonl").path])
        XCTAssertEqual(query.stdout, "{\"count\": 6}\n", query.stderr)
        let report = try run(["report", "trace.jsonl", "--store", "cities.sqlite", "--model", model, "--json"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let findings = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [[String: Any]])
        let indexFindings = findings.filter { ["redundant-index", "unused-index"].contains($0["id"] as? String) }.map { $0["evidence"] as? String ?? "" }
        XCTAssertEqual(indexFindings, [
            "ZCITY: the index ZCITY_ZNAME_INDEX (ZNAME) in cities.sqlite is redundant: ZCITY_ZNAME_ZPOPULATION (ZNAME, ZPOPULATION) begins with the same column and serves every search it serves",
            "ZCITY: the index ZCITY_ZNAME_ZPOPULATION (ZNAME, ZPOPULATION) in cities.sqlite was used by none of the 1 planned statement that read ZCITY in this trace",
        ])
        // Without --store nothing is said of indexes the trace did not create.
        let plain = try run(["report", "trace.jsonl", "--json"])
        XCTAssertFalse(plain.stdout.contains("index"), plain.stdout)

        let explain = try run(["explain", "--model", model, "--store", "cities.sqlite", "City", "population > 4990"])
        XCTAssertEqual(explain.status, 0, explain.stderr)
        XCTAssertTrue(explain.stdout.hasSuffix("""
            indexes of ZCITY:
              ZCITY_ZNAME_INDEX (ZNAME) — redundant: ZCITY_ZNAME_ZPOPULATION (ZNAME, ZPOPULATION) begins with the same column
              ZCITY_ZNAME_ZPOPULATION (ZNAME, ZPOPULATION)
              ZCITY_ZPOPULATION_INDEX (ZPOPULATION) — used by this fetch

            """), explain.stdout)
    }
}
