import Faultline
import Foundation

extension BenchVariant {
    /// An engine variant on a cold start: each run gets a new coordinator on `store` (empty row cache) and a new
    /// private-queue context; `prime` runs untimed on the context first and its result is handed to `work`, which
    /// is timed. Opening the store and releasing the context afterwards are outside the measurement.
    static func engine<State>(_ name: String, model: ManagedObjectModel, store: URL, operations: Int = 1,
                              prime: @escaping (ManagedObjectContext) throws -> State,
                              _ work: @escaping (ManagedObjectContext, State) throws -> Void) -> BenchVariant {
        let variant = BenchVariant(name, role: .engine, operations: operations) { _ in { } }
        let holder = variant.context
        var engine = variant
        engine.prepare = { probes in
            let context = try BenchStore.coldContext(model, at: store, probes: probes)
            holder.context = context
            let state = try context.performAndWait { try prime(context) }
            return { try context.performAndWait { try work(context, state) } }
        }
        return engine
    }

    /// An engine variant on a cold start with nothing to prime.
    static func engine(_ name: String, model: ManagedObjectModel, store: URL, operations: Int = 1,
                       _ work: @escaping (ManagedObjectContext) throws -> Void) -> BenchVariant {
        engine(name, model: model, store: store, operations: operations, prime: { _ in () }) { context, _ in try work(context) }
    }

    /// A peer variant: `open` (untimed) opens its connection, then `work` is timed on it.
    static func peer<Connection>(_ name: String, role: VariantRole, operations: Int = 1, open: @escaping () throws -> Connection,
                                 _ work: @escaping (Connection) throws -> Void) -> BenchVariant {
        BenchVariant(name, role: role, operations: operations) { _ in
            let connection = try open()
            return { try work(connection) }
        }
    }

    /// The raw SQLite peer on the store at `path`.
    static func raw(_ name: String = "raw SQLite", path: String, operations: Int = 1,
                    _ work: @escaping (RawSQLite.Connection) throws -> Void) -> BenchVariant {
        peer(name, role: .rawSQLite, operations: operations, open: { try RawSQLite.Connection(path: path) }, work)
    }
}

/// Small helpers for scenario code.
enum Bench {
    /// `FetchRequest` for `entity` with a predicate format and arguments.
    static func request(_ entity: String, _ format: String? = nil, _ arguments: Any?..., sort: [FetchSortDescriptor] = [],
                        materialized: Bool = true) throws -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: entity,
                                                  predicate: try format.map { try ObjectPredicate(parsing: $0, argumentArray: arguments) },
                                                  sortDescriptors: sort)
        request.returnsObjectsAsFaults = !materialized
        return request
    }

    /// Makes a checksum observable, so that the optimizer cannot drop the work that computed it.
    @inline(never) static func sink(_ value: Int64) {
        if value == .min { print("checksum", value) }
    }

    /// "1 : 9.8 : 97" of several medians relative to the first.
    static func proportions(_ values: [Double]) -> String {
        guard let first = values.first, first > 0 else { return "n/a" }
        return values.map { String(format: $0 / first >= 10 ? "%.0f" : "%.1f", $0 / first) }.joined(separator: " : ")
    }

    /// "engine: fetch 81.2 ms, use 6.1 ms, release 52.0 ms; GRDB records: …" for the variants that timed phases.
    static func phaseSummary(_ m: ScenarioMeasurements, _ names: [String]) -> String {
        names.compactMap { name in m[name]?.phases.map { "\(name): \(BenchFormat.phases($0))" } }.joined(separator: "; ")
    }

    /// The object IDs of every object of `entity` in a store (read once, untimed).
    static func objectIDs(_ entity: String, model: ManagedObjectModel, store: URL) throws -> [ManagedObjectID] {
        let context = try BenchStore.coldContext(model, at: store, probes: .disabled)
        return try context.performAndWait { try context.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: entity)) }
    }
}
