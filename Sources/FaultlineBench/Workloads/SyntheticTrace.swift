import Foundation

/// A trace of a given number of events shaped like an app's (docs/trace-format.md), for timing `faultline report`
/// at sizes no test run produces: screens of fetches with their statements, N+1 faults from one call site, saves
/// in a loop, a segment every 10,000 events.
public enum SyntheticTrace {
    /// Writes `events` events (the header not counted; one query plan more) to `url`.
    public static func write(events: Int, to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var text = #"{"type":"header","format":"faultline-trace","version":1,"started":"2026-11-25T10:00:00Z","process":"synthetic","pid":1,"sqlite":"3.40.1","host":"bench"}"# + "\n"
        let fetchSQL = "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZPOPULATION, t0.ZMAYOR FROM ZCITY t0 WHERE t0.ZPOPULATION > ? ORDER BY t0.ZNAME"
        let faultSQL = "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZHOMETOWN FROM ZPERSON t0 WHERE t0.Z_PK = ?"
        var written = 0
        var time = 0.0
        func line(_ json: String, counted: Bool = true) {
            text += json
            text += "\n"
            if counted { written += 1 }
        }
        while written < events {
            time += 0.000_05
            let t = String(format: "%.9f", time)
            let n = written
            switch n % 10 {
            case 0 where n % 10_000 == 0:
                line(#"{"type":"signpost","t":\#(t),"name":"screen \#(n / 10_000)"}"#)
            case 0, 5:
                line(#"{"type":"statement","t":\#(t),"sql":"\#(fetchSQL)","purpose":"fetch","bindings":["?"],"duration":0.000210,"rows":40,"fullScanSteps":1999,"sorts":1,"autoIndexes":0,"vmSteps":12400}"#)
                if n == 5 {
                    line(#"{"type":"queryPlan","t":\#(t),"sql":"\#(fetchSQL)","nodes":[{"id":2,"parent":0,"detail":"SCAN t0"},{"id":4,"parent":0,"detail":"USE TEMP B-TREE FOR ORDER BY"}]}"#, counted: false)
                }
            case 1, 6:
                line(#"{"type":"fetch","t":\#(t),"entity":"City","predicate":"population > \#(n % 7 * 1000)","sort":["name"],"limit":0,"offset":0,"batchSize":0,"prefetch":[],"resultType":"objects","statements":1,"rows":40,"results":40,"registered":0,"sqlTime":0.000210,"totalTime":0.000260,"callSite":"App/CityList.swift:40","context":1}"#)
            case 2, 3, 7:
                line(#"{"type":"statement","t":\#(t),"sql":"\#(faultSQL)","purpose":"fault","bindings":["?"],"duration":0.000012,"rows":1,"fullScanSteps":0,"sorts":0,"autoIndexes":0,"vmSteps":14}"#)
            case 4, 8:
                line(#"{"type":"cacheMiss","t":\#(t),"kind":"object","object":"x-coredata://8B0C903B-B071-4C5A-BE03-9862DCE016E9/Person/p\#(n % 5000 + 1)","relationship":null,"source":"database","duration":0.000018,"context":1,"callSite":"App/CityCell.swift:17"}"#)
            default:
                line(#"{"type":"save","t":\#(t),"inserted":{"Visit":1},"updated":{},"deleted":{},"statements":3,"duration":0.000150,"conflicts":0,"error":null,"callSite":"App/VisitLogger.swift:9","context":2}"#)
            }
            if text.utf8.count > 1 << 20 {
                try handle.write(contentsOf: Data(text.utf8))
                text = ""
            }
        }
        try handle.write(contentsOf: Data(text.utf8))
    }
}
