import Foundation
import XCTest

/// The report page in a real browser: headless Chromium (Debian's `chromium`; `make test-browser` installs it) opens
/// the page `faultline report` wrote, runs its script, and the test reads the DOM it ends with and the console.
///
/// `FAULTLINE_CHROMIUM` names the browser to use instead of Debian's paths; naming one that is not there runs the
/// suite as on a machine without Chromium (CI does, to prove that `make test` passes there).
final class ReportBrowserTests: CLITestCase {
    static let chromium: String? = {
        let candidates = ProcessInfo.processInfo.environment["FAULTLINE_CHROMIUM"].map { [$0] } ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Skips the test, with its message, where Chromium is absent: called first, before any assertion (an `XCTSkip`
    /// thrown inside an assertion's autoclosure is recorded as an error, not a skip).
    func requireChromium() throws -> String {
        guard let chromium = Self.chromium else {
            throw XCTSkip("Chromium is not installed (`make test-browser` installs Debian's chromium)")
        }
        return chromium
    }

    /// The DOM after the page's scripts ran, and the console lines (errors included) Chromium logged.
    func open(_ url: String) throws -> (dom: String, console: [String]) {
        let chromium = try requireChromium()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chromium)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(dir.appendingPathComponent("chromium").path)",
                             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000", "--dump-dom", url]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let dom = out.fileHandleForReading.readDataToEndOfFile()
        let log = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: log, as: UTF8.self))
        let console = String(decoding: log, as: UTF8.self).split(separator: "\n").map(String.init).filter { $0.contains(":CONSOLE(") || $0.contains("Uncaught") }
        return (String(decoding: dom, as: UTF8.self), console)
    }

    func testTheReportPageRunsWithoutErrorsAndItsTablesSort() throws {
        _ = try requireChromium()
        // The console is read: a page with a script error shows in it.
        let broken = try write("broken.html", "<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>")
        XCTAssertTrue(try open("file://\(broken)").console.contains { $0.contains("Uncaught ReferenceError") }, "a script error is seen")

        let bench = try run(["bench", "--scale", "10000", "--repetitions", "1", "--out", "run", "prefetch-mayors"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        let report = try run(["report", "run/trace.jsonl", "-o", "report.html", "--json"])
        XCTAssertEqual(report.status, 0, report.stderr)
        let findings = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [[String: Any]])
        XCTAssertFalse(findings.isEmpty)
        // Sorted on opening by the statements table's count column, smallest first.
        let page = dir.appendingPathComponent("report.html").path
        let (dom, console) = try open("file://\(page)#sort=statements1:1:asc")
        XCTAssertEqual(console, [], "no script errors or messages")
        let tables = try String(contentsOfFile: page, encoding: .utf8).components(separatedBy: "<table class=sortable").count - 1
        XCTAssertGreaterThan(tables, 4)
        XCTAssertTrue(dom.contains("data-sortable-tables=\"\(tables)\""), "the script ran over every table: \(dom.prefix(300))")
        // The bar chart: one bar per finding, each linking to it.
        let bars = try XCTUnwrap(dom.range(of: "aria-label=\"time per finding\"")).upperBound
        let chart = dom[bars..<(dom.range(of: "</svg>", range: bars..<dom.endIndex)?.lowerBound ?? dom.endIndex)]
        XCTAssertEqual(chart.components(separatedBy: "class=\"bar\"").count - 1, min(findings.count, 25))
        XCTAssertTrue(chart.contains("href=\"#finding1-1\"") && dom.contains("id=\"finding1-1\""))
        XCTAssertTrue(dom.contains("aria-label=\"statement durations\"") && dom.contains("aria-label=\"timeline\""))
        XCTAssertTrue(dom.contains("class=\"marker\""), "findings are marked on the timeline")
        // The contexts' gauges: three lines (registered, materialized, row cache) per context drawn.
        let growth = try XCTUnwrap(dom.range(of: "aria-label=\"objects held over time\""), "the growth chart is there")
        let lines = dom[growth.upperBound...].components(separatedBy: "</svg>")[0]
        XCTAssertGreaterThanOrEqual(lines.components(separatedBy: "class=\"gauge\"").count - 1, 3)
        XCTAssertEqual((lines.components(separatedBy: "class=\"gauge\"").count - 1) % 3, 0)
        // The statements table's rows now run by count, smallest first, and its header says so.
        let table = try XCTUnwrap(dom.range(of: "id=\"statements1\""))
        let body = dom[table.upperBound..<(dom.range(of: "</tbody>", range: table.upperBound..<dom.endIndex)?.lowerBound ?? dom.endIndex)]
        let counts = body.components(separatedBy: "<tr>").dropFirst().compactMap { row -> Double? in
            let cells = row.components(separatedBy: "data-v=\"")
            return cells.count > 1 ? Double(cells[1].prefix { $0 != "\"" }) : nil
        }
        XCTAssertGreaterThan(counts.count, 3)
        XCTAssertEqual(counts, counts.sorted(), "sorted by count")
        XCTAssertTrue(dom[table.upperBound...].prefix(600).contains("<th aria-sort=\"ascending\">count</th>"), String(dom[table.upperBound...].prefix(600)))
    }
}
