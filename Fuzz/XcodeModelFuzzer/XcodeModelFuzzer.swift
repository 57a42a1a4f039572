import Faultline
import Foundation
import FuzzSupport

/// The Xcode model loader on arbitrary bytes: a model either loads, and then gives its store's schema, or is an
/// error; never a trap (Foundation's XMLParser traps on some bytes that are not UTF-8, so they are checked first).
enum XcodeModelFuzzer {
    static func run(_ data: Data) {
        guard let model = try? ManagedObjectModel(xcodeContents: data, source: "fuzz") else { return }
        _ = SchemaGenerator.script(for: model)
        _ = model.versionHashes
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXcodeModel(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    XcodeModelFuzzer.run(Data(bytes: bytes, count: count))
    return 0
}
#else
@main struct XcodeModelReplay {
    static func main() { FuzzTarget.replay(Array(CommandLine.arguments.dropFirst()), XcodeModelFuzzer.run) }
}
#endif
