import Faultline
import Foundation
import FuzzSupport

/// The JSON model loader on arbitrary bytes: a model loads and gives its schema, or is an error.
enum JSONModelFuzzer {
    static func run(_ data: Data) {
        guard let model = try? ManagedObjectModel(jsonData: data, source: "fuzz") else { return }
        _ = SchemaGenerator.script(for: model)
        _ = model.versionHashes
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONModel(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    JSONModelFuzzer.run(Data(bytes: bytes, count: count))
    return 0
}
#else
@main struct JSONModelReplay {
    static func main() { FuzzTarget.replay(Array(CommandLine.arguments.dropFirst()), JSONModelFuzzer.run) }
}
#endif
