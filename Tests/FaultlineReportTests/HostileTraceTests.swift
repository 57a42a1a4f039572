import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// Traces a hostile or broken program could leave: impossible numbers, wrong header types, bytes that are not
/// UTF-8, text made to read backwards. Each is an exact error naming the line, or is shown as it really is.
final class HostileTraceTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    let header = #"{"type":"header","format":"faultline-trace","version":1,"process":"test"}"#

    func trace(_ lines: [String]) throws -> String {
        let path = dir.appendingPathComponent("trace-\(UUID().uuidString).jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testImpossibleNumbersAreRejectedWithTheirLine() throws {
        let fetch = #""type":"fetch","entity":"City","sql":"SELECT 1""#
        let cases: [(String, String)] = [
            (#"{\#(fetch),"t":-1}"#, #""t" must be a time in seconds from 0 to 315576000, got -1"#),
            (#"{\#(fetch),"t":1e300}"#, #""t" must be a time in seconds from 0 to 315576000, got 1e+300"#),
            (#"{\#(fetch),"t":1,"totalTime":-0.5}"#, #""totalTime" must be a time in seconds from 0 to 315576000, got -0.5"#),
            (#"{\#(fetch),"t":1,"rows":9223372036854775807}"#, #""rows" must be a whole number from 0 to 4294967296, got 9223372036854775807"#),
            (#"{\#(fetch),"t":1,"results":-3}"#, #""results" must be a whole number from 0 to 4294967296, got -3"#),
            (#"{\#(fetch),"t":1,"statements":1.5}"#, #""statements" must be a whole number from 0 to 4294967296, got 1.5"#),
            (#"{\#(fetch),"t":1,"statements":"many"}"#, #""statements" must be a whole number from 0 to 4294967296, got many"#),
            (#"{"type":"save","t":1,"inserted":{"City":18446744073709551616}}"#, #""City" must be a whole number from 0 to 4294967296, got 18446744073709551616"#),
            (#"{"type":"fault","t":true}"#, #""t" must be a time in seconds from 0 to 315576000, got 1"#),
            (#"{"type":"merge","t":1,"inserted":-1}"#, #""inserted" must be a whole number from 0 to 4294967296, got -1"#),
            (#"{"type":"save","t":1,"inserted":"City"}"#, #""inserted" must be an object of entity names to counts, or a count, got City"#),
        ]
        for (line, message) in cases {
            let path = try trace([header, #"{"type":"signpost","t":0,"name":"s"}"#, line])
            XCTAssertThrowsError(try TraceFile(path: path), line) { error in
                XCTAssertEqual("\(error)", "\(path):3: \(message)")
            }
        }
        // The largest allowed values read, summarize and draw.
        let path = try trace([header, #"{\#(fetch),"t":315576000,"totalTime":315576000,"rows":4294967296,"results":4294967296}"#,
                              #"{\#(fetch),"t":0,"rows":4294967296}"#,
                              #"{"type":"merge","t":2,"inserted":1,"updated":2,"deleted":0,"refreshed":1,"duration":0.001,"context":1}"#])
        let file = try TraceFile(path: path)
        let page = ReportPage(inputs: [.init(trace: file, analyzers: Analyzers())]).html
        XCTAssertTrue(page.contains("Timeline"), String(page.prefix(400)))
    }

    func testHeaderVersionAndEncodingErrorsSayWhatIsWrong() throws {
        let cases: [(String, String)] = [
            (#"{"type":"header","format":"faultline-trace","version":"1"}"#, #":1: the header's "version" must be a whole number (this faultline reads version 1), got the string 1"#),
            (#"{"type":"header","format":"faultline-trace","version":true}"#, #":1: the header's "version" must be a whole number (this faultline reads version 1), got 1"#),
            (#"{"type":"header","format":"faultline-trace","version":2}"#, ":1: trace version 2 is newer than this faultline reads (1)"),
            (#"{"type":"header","format":"faultline-trace","version":0}"#, ":1: trace version 0 does not exist (this faultline reads version 1)"),
            (#"{"type":"header","format":"faultline-trace"}"#, #":1: the header's "version" must be a whole number (this faultline reads version 1), got nothing"#),
        ]
        for (line, message) in cases {
            let path = try trace([line])
            XCTAssertThrowsError(try TraceFile(path: path), line) { error in XCTAssertEqual("\(error)", path + message) }
        }
        let linePrefix = #"{"type":"fetch","t":1,"entity":"ab"#
        var bytes = Data((header + "\n" + linePrefix).utf8)
        bytes.append(0xFF)
        bytes.append(contentsOf: Array(#""}"#.utf8) + [0x0A])
        let path = dir.appendingPathComponent("latin1.jsonl").path
        try bytes.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try TraceFile(path: path)) { error in
            XCTAssertEqual("\(error)", "\(path): not UTF-8: byte 0xFF at offset \(header.utf8.count + 1 + linePrefix.utf8.count) (line 2, column \(linePrefix.utf8.count + 1)) does not begin a valid UTF-8 sequence")
        }
        for (target, problem) in [("/dev/null", "is a device, not a file"), (dir.path, "is a folder, not a file"), (dir.appendingPathComponent("none").path, "no such file")] {
            XCTAssertThrowsError(try TraceFile(path: target)) { error in XCTAssertEqual("\(error)", "\(target): \(problem)") }
        }
    }

    /// A line longer than any the engine writes, and JSON nested deeper than a trace's, are named, not read.
    func testOverlongLinesAndDeepNestingAreRefused() throws {
        let long = #"{"type":"fetch","t":1,"entity":""# + String(repeating: "x", count: Limits.traceLineBytes + 1) + #""}"#
        let path = try trace([header, long])
        XCTAssertThrowsError(try TraceFile(path: path)) { error in
            XCTAssertEqual("\(error)", "\(path):2: a line longer than \(Limits.traceLineBytes) bytes — not a Faultline trace line")
        }
        let deep = #"{"type":"fetch","t":1,"x":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        let nested = try trace([header, #"{"type":"signpost","t":0,"name":"s"}"#, deep, #"{"type":"signpost","t":1,"name":"after"}"#])
        XCTAssertThrowsError(try TraceFile(path: nested)) { error in
            XCTAssertEqual("\(error)", "\(nested):3: not a JSON object — is this a Faultline trace (docs/trace-format.md)?")
        }
    }

    /// Every string a trace carries, 10 MB long, in every field of every event kind (one such field an event: a line
    /// holds at most 16 MB): read, analysed, drawn on the page and its charts, exported to Chrome's format and to
    /// JSON, each in time linear in the text. A 10 MB entity name once took minutes (a chart label shortened a
    /// character at a time, re-measuring the whole name each time); a statement of many `(?, ?)` lists did too.
    func testTenMegabytesInEveryStringFieldCostLinearTime() throws {
        let size = 10 << 20
        let texts = ["x", "(?, ?) ", "a <é&\"\u{301} 'q' "].map { unit in String(repeating: unit, count: size / unit.utf8.count) }
        // JSON text by bytes: `"` and U+0301 are one Character, which a Character-wise replace would not see.
        func json(_ text: String) -> String {
            var out: [UInt8] = [UInt8(ascii: "\"")]
            for part in text.utf8.split(separator: UInt8(ascii: "\""), omittingEmptySubsequences: false) {
                if out.count > 1 { out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")] }
                out += part
            }
            return String(decoding: out + [UInt8(ascii: "\"")], as: UTF8.self)
        }
        var lines = [header]
        var t = 0.0
        for (index, text) in texts.enumerated() {
            let big = json(text)
            // A template per kind, `BIG` where one field at a time takes the text.
            let templates: [String] = [
                #"{"type":"connect","path":BIG}"#,
                #"{"type":"signpost","name":BIG}"#,
                #"{"type":"statement","sql":BIG,"purpose":"fetch","duration":0.001,"rows":1}"#,
                #"{"type":"statement","sql":"SELECT 0 FROM ZE t0 WHERE t0.ZA = ?","purpose":"fetch","bindings":[BIG],"duration":0.001,"rows":1}"#,
                #"{"type":"queryPlan","sql":BIG,"nodes":[{"id":1,"parent":0,"detail":"SCAN t0"}]}"#,
                #"{"type":"queryPlan","sql":"SELECT 0 FROM ZE t0","nodes":[{"id":1,"parent":0,"detail":BIG}]}"#,
                #"{"type":"fetch","entity":BIG,"predicate":"a == 1","resultType":"objects","statements":1,"rows":900,"results":900,"totalTime":0.002,"callSite":"App/F.swift:1","context":1}"#,
                #"{"type":"fetch","entity":"E","predicate":BIG,"sort":["k"],"resultType":"objects","statements":1,"rows":1,"results":1,"totalTime":0.002,"callSite":"App/F.swift:1","context":1,"optionalNotEqual":["o"]}"#,
                #"{"type":"fetch","entity":"E","sort":[BIG],"prefetch":[BIG],"resultType":"objects","statements":1,"rows":1,"results":1,"totalTime":0.002,"callSite":BIG,"context":1,"optionalNotEqual":[BIG]}"#,
                #"{"type":"fault","kind":"object","object":BIG,"relationship":null,"source":"rowCache","duration":0.0001,"context":1,"callSite":"App/F.swift:2"}"#,
                #"{"type":"fault","kind":"relationship","object":"x-coredata://U/E/p1","relationship":BIG,"source":"rowCache","duration":0.0001,"context":1,"callSite":BIG}"#,
                #"{"type":"cacheMiss","kind":"object","object":BIG,"source":"database","duration":0.0001,"context":1,"callSite":"App/F.swift:3"}"#,
                #"{"type":"cacheMiss","kind":"relationship","object":"x-coredata://U/E/p1","relationship":BIG,"source":"database","duration":0.0001,"context":1,"callSite":BIG,"count":3}"#,
                #"{"type":"save","inserted":{BIG:1},"updated":{"U":1},"deleted":{"D":1},"statements":3,"duration":0.001,"conflicts":0,"error":null,"callSite":"App/F.swift:4","context":1}"#,
                #"{"type":"save","inserted":{"I":1},"updated":{BIG:1},"deleted":{"D":1},"statements":3,"duration":0.001,"conflicts":0,"error":BIG,"callSite":BIG,"context":1}"#,
                #"{"type":"save","inserted":{"I":1},"deleted":{BIG:1},"statements":3,"duration":0.001,"conflicts":0,"error":null,"context":1}"#,
                #"{"type":"batch","kind":"update","entity":BIG,"rows":1,"statements":1,"duration":0.001,"error":BIG,"callSite":BIG,"context":1}"#,
                #"{"type":"migration","step":1,"from":BIG,"to":BIG,"entity":BIG,"rows":1,"statements":2,"duration":0.001}"#,
                #"{"type":"prefetchUse","keyPath":BIG,"entity":BIG,"loaded":5,"used":1,"callSite":BIG,"context":1}"#,
            ]
            for template in templates {
                // Each `BIG` in turn; the others a short text.
                let parts = template.components(separatedBy: "BIG")
                // Every field with plain text; the texts made to trip a parser (placeholder lists, quotes, markup) in
                // the fields that are parsed: a fetch's entity and predicate, a statement's SQL.
                for position in 1..<parts.count where index == 0 || (templates.firstIndex(of: template)! < 8
                    && ["\"entity\":", "\"sql\":", "\"predicate\":"].contains { parts[position - 1].hasSuffix($0) }) {
                    var line = parts[0]
                    for k in 1..<parts.count { line += (k == position ? big : "\"s\(k)\"") + parts[k] }
                    t += 0.001
                    lines.append(String(line.dropLast()) + ",\"t\":\(t)}")
                }
            }
        }
        let path = try trace(lines)
        var analysis = TraceAnalysis(analyzers: Analyzers())
        var chrome = 0
        let writer = ChromeTraceWriter { chrome += $0.count }
        let info = try TraceFile.read(path: path) { event in
            analysis.add(event)
            try writer.add(event)
        }
        try writer.finish()
        XCTAssertEqual(info.warnings, [])
        let input = ReportPage.Input(path: path, info: info, analysis: analysis)
        let page = ReportPage(inputs: [input], history: nil).html
        XCTAssertGreaterThan(page.utf8.count, size, "the page shows what the trace holds")
        XCTAssertGreaterThan(chrome, size)
        let findings = try FindingsJSON.data([(path, info.source, input.findings)])
        XCTAssertFalse(findings.isEmpty)
        XCTAssertTrue(input.findings.contains { $0.kind == .optionalNotEqual }, "\(input.findings.map(\.kind))")
    }

    /// Reads, analyses, draws and exports a file of any source, as `faultline report` does.
    private func reportEverything(_ path: String) throws -> (events: Int, page: Int) {
        var analysis = TraceAnalysis(analyzers: Analyzers())
        var chrome = 0
        let writer = ChromeTraceWriter { chrome += $0.count }
        var events = 0
        let info = try TraceFile.read(path: path) { event in
            events += 1
            analysis.add(event)
            try writer.add(event)
        }
        try writer.finish()
        let input = ReportPage.Input(path: path, info: info, analysis: analysis)
        let page = ReportPage(inputs: [input], history: nil).html
        _ = try FindingsJSON.data([(path, info.source, input.findings)])
        return (events, page.utf8.count)
    }

    /// Part 4 for Core Data's own logs: 10 MB in every text a log line carries (a table, an entity, a URI, a bound
    /// value, a plan line, a level-3 values list) is read, analysed, drawn and exported in linear time.
    func testTenMegabytesInEveryCoreDataLogFieldCostLinearTime() throws {
        let big = String(repeating: "Q", count: 10 << 20)
        let templates = [
            "CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZBIG t0 WHERE  t0.ZNAME = ?\nCoreData: annotation: sql connection fetch time: 0.0010s\nCoreData: annotation: total fetch execution time: 0.0020s for 5 rows.",
            "CoreData: sql: SELECT 0, t0.Z_PK FROM ZCITY t0 WHERE  t0.ZNAME = ?\nCoreData: details: SQLite bind[0] = \"BIG\"\nCoreData: details: SQLite: EXPLAIN QUERY PLAN SELECT 0, t0.Z_PK FROM ZCITY t0\nCoreData: details: SQLite: |--SCAN BIG\nCoreData: annotation: sql connection fetch time: 0.0010s\nCoreData: annotation: total fetch execution time: 0.0020s for 1 rows.",
            "CoreData: annotation: fetch using NSSQLiteStatement <0x600002c4c000> on entity 'BIG' with sql text 'SELECT 0, t0.Z_PK FROM ZBIG t0' returned 2 rows with values: (BIG)\nCoreData: annotation: total fetch execution time: 0.0025s for 2 rows.",
            "CoreData: annotation: fetch using NSSQLiteStatement <0x600002c4c000> on entity 'Note' with sql text 'SELECT 0, t0.Z_PK FROM ZNOTE t0' returned 2 rows with values: (\nBIG\n)",
            "CoreData: sql: SELECT t0.Z_ENT, t0.Z_PK FROM ZBIG t0 WHERE  t0.Z_PK = ?\nCoreData: annotation: sql connection fetch time: 0.0003s\nCoreData: annotation: total fetch execution time: 0.0004s for 1 rows.\nCoreData: annotation: fault fulfilled from database for : 0x9c1a2d0e4f5a6b7c <x-coredata://UUID/BIG/p3> with row values: <NSSQLRow: 0x600 BIG p3>",
            "CoreData: annotation: Connecting to sqlite database file at \"/tmp/BIG.sqlite\"",
            "CoreData: sql: BIG\nCoreData: annotation: sql execution time: 0.0001s",
        ]
        let log = templates.map { $0.replacingOccurrences(of: "BIG", with: big) }.joined(separator: "\n") + "\n"
        let path = dir.appendingPathComponent("big.log").path
        try Data(log.utf8).write(to: URL(fileURLWithPath: path))
        let (events, page) = try reportEverything(path)
        XCTAssertEqual(events, 13, "every statement, fetch, fault and connection the log holds")
        XCTAssertGreaterThan(page, 1 << 20, "the page shows what the log holds")
    }

    /// Part 4 for OTLP spans: 10 MB in a span's name, its entity, predicate, SQL, object URI, relationship and call
    /// site (one field a line) is read, analysed, drawn and exported in linear time.
    func testTenMegabytesInEveryOTLPFieldCostLinearTime() throws {
        let big = String(repeating: "Q", count: 10 << 20)
        func line(name: String, _ attributes: [String: Any]) throws -> String {
            let list = attributes.sorted { $0.key < $1.key }.map { key, value -> [String: Any] in
                ["key": key, "value": value is Int ? ["intValue": "\(value)"] : ["stringValue": "\(value)"]]
            }
            let json: [String: Any] = ["resourceSpans": [["scopeSpans": [["spans": [[
                "traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": name,
                "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000002000000", "attributes": list,
            ]]]]]]]
            return String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
        }
        let fetch: [String: Any] = ["faultline.entity": "City", "faultline.predicate": "name == 'x'", "faultline.rows": 900, "faultline.results": 900,
                                    "faultline.statements": 1, "code.filepath": "App/F.swift", "faultline.context": 1]
        var lines: [String] = []
        for key in ["faultline.entity", "faultline.predicate", "code.filepath", "faultline.result_type"] {
            var attributes = fetch
            attributes[key] = big
            lines.append(try line(name: "fetch City", attributes))
        }
        lines.append(try line(name: "fetch " + big, fetch))
        lines.append(try line(name: "SELECT", ["db.query.text": "SELECT 0, t0.Z_PK FROM Z\(big) t0", "faultline.rows": 1]))
        for key in ["faultline.object", "faultline.relationship", "code.filepath"] {
            var attributes: [String: Any] = ["faultline.object": "x-coredata://U/City/p1", "faultline.relationship": "mayor", "faultline.source": "database", "faultline.context": 1]
            attributes[key] = big
            lines.append(try line(name: "fault City", attributes))
        }
        let path = dir.appendingPathComponent("big.otlp.jsonl").path
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let (events, page) = try reportEverything(path)
        XCTAssertEqual(events, lines.count)
        XCTAssertGreaterThan(page, 10 << 20, "the page shows what the spans hold")
    }

    /// A name with a right-to-left override would read backwards on the page ("exe.txt" as "txt.exe"): shown as
    /// `[U+202E]` instead, in the HTML and in the SVG Graphviz draws.
    func testBidirectionalControlsAreShownNotObeyed() throws {
        let disguised = "invoice\u{202E}fdp.exe\u{2066}x\u{2069}"
        let path = try trace([header, #"{"type":"fetch","t":1,"entity":"\#(disguised)","sql":"SELECT '\#(disguised)'","totalTime":0.001,"callSite":"\#(disguised).swift:1"}"#])
        let page = ReportPage(inputs: [.init(trace: try TraceFile(path: path), analyzers: Analyzers())]).html
        XCTAssertTrue(page.contains("invoice[U+202E]fdp.exe[U+2066]x[U+2069]"), page)
        for control in ["\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}"] {
            XCTAssertFalse(page.contains(control), "U+\(String(control.unicodeScalars.first!.value, radix: 16)) reaches the page")
            XCTAssertEqual(HTMLText.escape("a\(control)b"), "a[U+\(String(control.unicodeScalars.first!.value, radix: 16, uppercase: true))]b")
        }
        XCTAssertEqual(HTMLText.escape("עברית and العربية stay"), "עברית and العربية stay", "right-to-left text itself is left alone")
        let dot = "digraph g { a [label=\"\(ModelDiagram.quoted(disguised + "\u{1}\u{7F}"))\"]; }"
        let svg = String(decoding: try GraphvizRenderer.render(dot, as: .svg), as: UTF8.self)
        XCTAssertTrue(svg.contains("invoice[U+202E]fdp.exe[U+2066]x[U+2069][U+1][U+7F]"), svg)
        XCTAssertFalse(svg.contains("\u{202E}") || svg.contains("\u{1}"), svg)
    }
}
