import CSQLite
import Foundation
import XCTest

/// `faultline history` on stores Core Data and SwiftData wrote with history tracking: transactions and changes as
/// SQLite holds them, read without changing a byte.
final class HistoryCLITests: CLITestCase {
    private func copy(_ name: String) throws -> (path: String, files: [String: Data]) { try copyFixtureStore(name) }

    /// Integers a query on the store returns, each row's first column.
    private func sqlite(_ store: String, _ sql: String) throws -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(store, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw XCTSkip("cannot open \(store)") }
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { XCTFail(sql); return [] }
        defer { sqlite3_finalize(statement) }
        var values: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { values.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "") }
        return values
    }

    func testHistoryOfTheSwiftDataStoreMatchesItsTables() throws {
        let (store, files) = try copy("swiftdata-metacocktails/PreloadedCocktails.store")
        // What SQLite says, read before the command runs (a read-only open of a WAL store leaves its files alone).
        let transactions = try sqlite(store, "SELECT count(*) FROM ATRANSACTION")
        let changes = try sqlite(store, "SELECT count(*) FROM ACHANGE")
        let updates = try sqlite(store, "SELECT count(*) FROM ACHANGE WHERE ZCHANGETYPE = 1")
        let bundle = try sqlite(store, "SELECT s.ZNAME FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZBUNDLEIDTS ORDER BY t.Z_PK LIMIT 1")
        for (suffix, data) in files { XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), data, "sqlite3 left \(suffix) alone") }

        let result = try run(["history", store, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["tracked"] as? Bool, true)
        let list = try XCTUnwrap(object["transactions"] as? [[String: Any]])
        XCTAssertEqual(String(list.count), transactions.first)
        let all = list.flatMap { $0["changes"] as? [[String: Any]] ?? [] }
        XCTAssertEqual(String(all.count), changes.first)
        XCTAssertEqual(list.first?["bundleID"] as? String, bundle.first)
        XCTAssertEqual(list.first?["process"] as? String, "MetaCocktailsSwiftData")
        XCTAssertTrue(list.first?["author"] is NSNull)
        XCTAssertEqual((list.first?["timestamp"] as? String)?.hasPrefix("2025-01-31T20:43:33"), true, "\(list.first?["timestamp"] ?? "")")
        let updated = all.filter { $0["type"] as? String == "update" }
        XCTAssertEqual(String(updated.count), updates.first)
        // Every update of a Garnish sets its many-to-many to cocktails: bit 1, after its one attribute.
        XCTAssertTrue(updated.allSatisfy { $0["entity"] as? String == "Garnish" && $0["updatedProperties"] as? [String] == ["cocktails"] }, "\(updated.prefix(2))")
        XCTAssertTrue(all.allSatisfy { ($0["object"] as? String)?.hasPrefix("x-coredata://402FA77C-C653-4FEF-A9BE-710B4B3F56C1/") == true })

        let text = try run(["history", store, "--limit", "1"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("2 transactions, 2861 changes (2783 inserts, 78 updates)"), text.stdout)
        XCTAssertTrue(text.stdout.contains("changes by entity: Ingredient 1893"), text.stdout)
        XCTAssertTrue(text.stdout.contains("… 1 earlier transactions"), text.stdout)
        for (suffix, data) in files { XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), data, "history wrote nothing to \(suffix)") }
    }

    func testHistoryOfACoreDataStoreAndOfOneWithout() throws {
        let (store, _) = try copy("coredataplus-samplemodel2/SampleModel2_V2.sqlite")
        let result = try run(["history", store, "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let list = try XCTUnwrap(object["transactions"] as? [[String: Any]])
        XCTAssertEqual(String(list.count), try sqlite(store, "SELECT count(*) FROM ATRANSACTION").first)
        XCTAssertEqual(list.first?["bundleID"] as? String, "com.apple.dt.xctest.tool")
        let kinds = Set(list.flatMap { $0["changes"] as? [[String: Any]] ?? [] }.compactMap { $0["entity"] as? String })
        XCTAssertTrue(kinds.isSuperset(of: ["Book", "Page"]), "\(kinds)")
        let (plain, _) = try copy("coredataplus-samplemodel/SampleModel_V1.sqlite")
        let none = try run(["history", plain])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.stdout.contains("no persistent history"), none.stdout)
        let missing = try run(["history", "nope.sqlite"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains("nope.sqlite"), missing.stderr)
    }

    /// `faultline report --store` adds the store's history: the text's line and the page's section.
    func testReportWithTheStoreShowsItsHistory() throws {
        let (store, files) = try copy("swiftdata-metacocktails/PreloadedCocktails.store")
        let trace = dir.appendingPathComponent("app.jsonl").path
        let traced = try run(["query", "--store", store, "Garnish", "--result", "count"], environment: ["FAULTLINE_TRACE": trace])
        XCTAssertEqual(traced.status, 0, traced.stderr)
        let report = try run(["report", trace, "--store", store, "-o", "report.html"])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.contains("persistent history: 2 transactions, 2861 changes (2783 inserts, 78 updates)"), report.stdout)
        let page = try String(contentsOf: dir.appendingPathComponent("report.html"), encoding: .utf8)
        XCTAssertTrue(page.contains("Persistent history of PreloadedCocktails.store"), page)
        XCTAssertTrue(page.contains("<h3>Changes by entity</h3>") && page.contains("<td>Ingredient</td><td class=n>1893</td>"), page)
        XCTAssertTrue(page.contains("<h3>Largest transactions</h3>"))
        for (suffix, data) in files { XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), data, "report wrote nothing to \(suffix)") }
    }

    /// `load` and `bench --store` write to the store whose derived attribute Core Data's triggers keep: the triggers
    /// run (Core Data's SQL functions are there), and the count is right after the load.
    func testLoadAndBenchWriteToTheDerivedAttributeFixture() throws {
        let (store, _) = try copy("coredataplus-samplemodel2/SampleModel2_V2.sqlite")
        let before = try sqlite(store, "SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 2").first.flatMap { Int($0) } ?? -1
        let one = try run(["query", "--store", store, "Page", "--limit", "1"])
        XCTAssertEqual(one.status, 0, one.stderr)
        let page = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [[String: Any]])?.first)
        let uuid = try XCTUnwrap((page["@id"] as? String)?.split(separator: "/").dropFirst().first)
        let data = try JSONSerialization.data(withJSONObject: ["Page": [["number": 500, "isBookmarked": false, "content": page["content"]!,
                                                                           "book": "x-coredata://\(uuid)/Book/p2"]]])
        let file = dir.appendingPathComponent("pages.json")
        try data.write(to: file)
        let load = try run(["load", "--store", store, file.path])
        XCTAssertEqual(load.status, 0, load.stderr)
        XCTAssertEqual(try sqlite(store, "SELECT ZPAGESCOUNT FROM ZBOOK WHERE Z_PK = 2").first, String(before + 1), "the PARAMETER_INSERT trigger ran")
        let bench = try run(["bench", "--store", store, "--scale", "1000", "--repetitions", "1", "--out", "run", "model-insert"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        XCTAssertFalse(bench.stdout.contains("no such function") || bench.stderr.contains("no such function"), bench.stdout + bench.stderr)
        let results = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("run/results.json"))) as? [String: Any])
        let scenario = try XCTUnwrap((results["scenarios"] as? [[String: Any]])?.first)
        XCTAssertEqual(scenario["status"] as? String, "ran", "\(scenario["note"] ?? "")")
    }

    /// A damaged store's timestamps (far past any calendar) are shown as seconds, said not to be dates, never a trap.
    func testTimestampsNoCalendarHoldsAreShownAsSeconds() throws {
        let (store, _) = try copy("coredataplus-samplemodel2/SampleModel2_V2.sqlite")
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store, &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, "UPDATE ATRANSACTION SET ZTIMESTAMP = 1e300", nil, nil, nil), SQLITE_OK)
        sqlite3_close(db)
        for arguments in [["history", store, "--json"], ["history", store]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.contains("1e+300 s since 2001 (not a date)"), result.stdout.prefix(400).description)
        }
    }
}

