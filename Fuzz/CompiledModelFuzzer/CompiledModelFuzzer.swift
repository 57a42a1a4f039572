import Faultline
import Foundation
import FuzzSupport

/// Core Data's binary formats on arbitrary bytes: a binary property list, a keyed archive (as a transformable value
/// holds one), a compiled model (a `.mom`, or a store's inflated `Z_MODELCACHE`) and an Xcode 3 model's `elements`
/// archive each read or are an error; never a trap, a stack overflow or a hang.
enum CompiledModelFuzzer {
    static func run(_ data: Data) {
        _ = try? BinaryPropertyList.read(data)
        if let archive = try? KeyedArchive(data) { _ = try? archive.foundationValue(archive: data) }
        _ = try? KeyedArchiveValueTransformer().decode(data)
        if let model = try? ManagedObjectModel(xcodeThreeElements: data, source: "fuzz") { _ = SchemaGenerator.script(for: model) }
        guard let model = try? ManagedObjectModel(compiledModel: data, source: "fuzz") else { return }
        _ = SchemaGenerator.script(for: model)
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCompiledModel(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    CompiledModelFuzzer.run(Data(bytes: bytes, count: count))
    return 0
}
#else
@main struct CompiledModelReplay {
    static func main() { FuzzTarget.replay(Array(CommandLine.arguments.dropFirst()), CompiledModelFuzzer.run) }
}
#endif
