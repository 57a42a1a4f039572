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
        let report = try run(["report", "run/trace.jsonl.gz", "-o", "report.html", "--json"])
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

    /// Every chart's text fits, measured by the browser's own layout: each label inside its picture, over no other
    /// label and no bar — for a Core Data log whose entities have long names and a bench trace of several contexts.
    func testChartLabelsFitInTheBrowser() throws {
        _ = try requireChromium()
        let entity = "SyncableSettingsMetadataJournalEntryAttachment"
        let log = try write("long.txt", (1...14).map { n in """
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE FROM ZSYNCABLESETTINGSMETADATAJOURNALENTRY t0 WHERE t0.ZTITLE = ? ORDER BY t0.ZDATE
            CoreData: annotation: sql connection fetch time: 0.0\(n % 10)10s
            CoreData: annotation: total fetch execution time: 0.0\(n % 10)12s for 3 rows.
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZSYNCABLESETTINGSMETADATAJOURNALENTRYATTACHMENT t0 WHERE  t0.Z_PK = ?
            CoreData: annotation: sql execution time: 0.00\(n % 10)1s
            CoreData: annotation: fault fulfilled from database for : 0x8f1c2d0a <x-coredata://95E4B0A1-CBFB-4257-B10B-EE64F7558656/\(entity)/p\(n)>

            """ }.joined())
        let bench = try run(["bench", "--scale", "10000", "--repetitions", "1", "--out", "run", "prefetch-mayors"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        let report = try run(["report", log, "run/trace.jsonl.gz", "-o", "report.html"])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.contains(entity), report.stdout)
        let (texts, problems, dom) = try measureCharts("report.html")
        XCTAssertGreaterThan(texts, 40, "the charts' text was measured")
        XCTAssertEqual(problems, "[]", "labels that do not fit")
        // The bench's own page: its bar charts too.
        let benchPage = try measureCharts("run/index.html")
        XCTAssertGreaterThan(benchPage.texts, 4, "the bench page's charts were measured")
        XCTAssertEqual(benchPage.problems, "[]", "labels that do not fit")
        // The long entity's finding is labelled with its entity, shortened, the whole text in the title.
        XCTAssertTrue(dom.contains("<title>#1 N+1 faults · \(entity)</title>") || dom.contains("· \(entity)</title>"), "the full label is the title")
    }

    /// Opens `page` (in the test's folder) with a script that measures every `svg.chart`'s text where the browser drew
    /// it: the number of texts, and each one cut off at the picture's edge, over a bar, or over another text.
    func measureCharts(_ page: String) throws -> (texts: Int, problems: String, dom: String) {
        let measure = """
        <script>
        const problems = [];
        let texts = 0;
        for (const svg of document.querySelectorAll('svg.chart')) {
          const frame = svg.getBoundingClientRect();
          const boxes = [...svg.querySelectorAll('text')].map(t => [t, t.getBoundingClientRect()]);
          const bars = [...svg.querySelectorAll('rect.bar')].map(r => r.getBoundingClientRect());
          const name = svg.getAttribute('aria-label');
          texts += boxes.length;
          for (const [t, b] of boxes) {
            if (b.left < frame.left - 0.5 || b.right > frame.right + 0.5 || b.top < frame.top - 0.5 || b.bottom > frame.bottom + 0.5)
              problems.push(name + ': "' + t.textContent + '" is cut off');
            for (const r of bars) if (b.right > r.left + 0.5 && r.right > b.left + 0.5 && b.bottom > r.top + 0.5 && r.bottom > b.top + 0.5)
              problems.push(name + ': "' + t.textContent + '" covers a bar');
          }
          for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const [a, b] = [boxes[i][1], boxes[j][1]];
            if (a.right > b.left + 0.5 && b.right > a.left + 0.5 && a.bottom > b.top + 0.5 && b.bottom > a.top + 0.5)
              problems.push(name + ': "' + boxes[i][0].textContent + '" overlaps "' + boxes[j][0].textContent + '"');
          }
        }
        document.body.setAttribute('data-texts', texts);
        document.body.setAttribute('data-problems', JSON.stringify(problems));
        </script>
        """
        let html = try String(contentsOf: dir.appendingPathComponent(page), encoding: .utf8)
        let measured = try write("measured-\(page.replacingOccurrences(of: "/", with: "-"))", html.replacingOccurrences(of: "</body>", with: measure + "</body>"))
        let (dom, console) = try open("file://\(measured)")
        XCTAssertEqual(console, [], "\(page): no script errors or messages")
        let texts = Int(try XCTUnwrap(dom.range(of: #"data-texts="\d+""#, options: .regularExpression).map { dom[$0].filter(\.isNumber) })) ?? 0
        let problems = try XCTUnwrap(dom.range(of: #"data-problems="[^"]*""#, options: .regularExpression).map { String(dom[$0]) })
        return (texts, String(problems.dropFirst("data-problems=\"".count).dropLast()).replacingOccurrences(of: "&quot;", with: "\""), dom)
    }
}
