import Faultline
import FaultlineReport
import Foundation
import FuzzSupport

/// The trace reader, its analyses and the report page on arbitrary bytes: a trace reads and reports, or is an error
/// naming its line.
enum TraceFuzzer {
    static let path = FuzzTarget.scratchFolder("trace").appendingPathComponent("trace.jsonl").path

    static func run(_ data: Data) {
        guard FileManager.default.createFile(atPath: path, contents: data) else { fatalError("cannot write \(path)") }
        guard let trace = try? TraceFile(path: path) else { return }
        let input = ReportPage.Input(trace: trace, analyzers: Analyzers())
        _ = ReportPage(inputs: [input, input]).html
        _ = try? ChromeTrace.data(trace)
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrace(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    TraceFuzzer.run(Data(bytes: bytes, count: count))
    return 0
}
#else
@main struct TraceReplay {
    static func main() { FuzzTarget.replay(Array(CommandLine.arguments.dropFirst()), TraceFuzzer.run) }
}
#endif
