import Faultline
import FaultlineData
import Foundation
import FuzzSupport

/// The data importer on arbitrary bytes, into a store of the company model: a file loads whole or is an error
/// that writes nothing; what loads exports back.
enum DataFuzzer {
    static let context: ManagedObjectContext = {
        let model = try! ManagedObjectModel(jsonData: Data(FuzzTarget.companyModelJSON.utf8))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try! coordinator.addPersistentStore(at: FuzzTarget.scratchFolder("data").appendingPathComponent("store.sqlite"))
        return ManagedObjectContext(.privateQueue, coordinator: coordinator)
    }()

    static func run(_ data: Data) {
        guard (try? DataImporter(context: context).load(data, file: "fuzz.json")) != nil else {
            let dirty = context.performAndWait { context.hasChanges }
            if dirty { fatalError("a refused data file left changes in the context") }
            return
        }
        _ = try? DataExporter(context: context).export(entityName: "Employee", format: .json, limit: 50)
        _ = try? DataExporter(context: context).export(entityName: "Project", format: .table, limit: 50)
        context.performAndWait { context.reset() }
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzData(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    DataFuzzer.run(Data(bytes: bytes, count: count))
    return 0
}
#else
@main struct DataReplay {
    static func main() { FuzzTarget.replay(Array(CommandLine.arguments.dropFirst()), DataFuzzer.run) }
}
#endif
