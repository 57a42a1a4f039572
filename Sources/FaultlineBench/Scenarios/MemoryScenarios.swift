import Faultline
import Foundation

/// The seeds' memory advice, judged on what each variant's memory run allocated and kept (docs/results-format.md),
/// not on its time.
extension ScenarioCatalogue {
    /// The verdict where allocations are not counted (under a sanitizer).
    private static var notCounted: Verdict { Verdict(held: nil, "not measured (allocations are not counted in this build)") }

    /// Bytes a variant's memory run kept, or nil when allocations were not counted.
    private static func kept(_ m: ScenarioMeasurements, _ name: String) -> Int? { m[name]?.memory?.liveBytes }
    private static func allocated(_ m: ScenarioMeasurements, _ name: String) -> Int? { m[name]?.memory?.bytesAllocated }

    /// "name kept 12.3 MB (45,000 allocations, 67.8 MB)" for each variant.
    private static func describe(_ m: ScenarioMeasurements, _ names: [String]) -> String {
        names.compactMap { name in m[name]?.memory.map { "\(name) kept \(BenchFormat.bytes($0.liveBytes ?? 0)) of \(BenchFormat.bytes($0.bytesAllocated ?? 0)) allocated" } }
            .joined(separator: "; ")
    }

    /// Imports rows into a new store, saving every 1,000; `configure` sets the context up, `afterSave` runs after each
    /// save.
    private static func importVariant(_ name: String, model: ManagedObjectModel, store: URL, count: Int,
                                      configure: @escaping (ManagedObjectContext) -> Void = { _ in },
                                      afterSave: @escaping (ManagedObjectContext) -> Void = { _ in }) -> BenchVariant {
        BenchVariant(name, operations: count) { probes in
            RowWorkload.removeStore(at: store)
            let context = ManagedObjectContext(.privateQueue, coordinator: try BenchStore.coordinator(model, at: store, probes: probes))
            return {
                try context.performAndWait {
                    configure(context)
                    let entity = model.entity(named: "Row")!
                    for i in 0..<count {
                        let row = ManagedObject(entity: entity, insertInto: context)
                        for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(i * 10 + j) }
                        if (i + 1) % 1_000 == 0 {
                            try context.save()
                            afterSave(context)
                        }
                    }
                    if context.hasChanges { try context.save() }
                }
            }
        }
    }

    /// M-IMPORT-RESET: an import that saves in batches, with and without `reset()` after each.
    static var importReset: BenchScenario {
        BenchScenario(
            id: "import-reset", title: "Import in batches of 1,000 with and without reset() after each save",
            claim: "Resetting the context after each saved batch keeps an import's memory flat; without it the context keeps every object it imported.",
            source: "seed 000 L3843–3931, L4241–4273 (bulk import, memory trimming); seed 004 L147, L413–420",
            variants: { setup in
                let model = try RowWorkload.model()
                let count = setup.scale.part(10, minimum: 2_000)
                return [
                    importVariant("no reset", model: model, store: setup.folder.appendingPathComponent("import-keep.sqlite"), count: count),
                    importVariant("reset per batch", model: model, store: setup.folder.appendingPathComponent("import-reset.sqlite"), count: count,
                                  afterSave: { $0.reset() }),
                ]
            },
            judge: { m in
                guard let keep = kept(m, "no reset"), let reset = kept(m, "reset per batch") else { return notCounted }
                return Verdict(held: reset * 10 < keep, describe(m, ["no reset", "reset per batch"]))
            })
    }

    /// M-IMPORT-UNDO: the same import with an undo manager and without one (the default).
    static var importUndo: BenchScenario {
        BenchScenario(
            id: "import-undo", title: "Import with and without an undo manager",
            claim: "An undo manager records every change of an import and keeps it; without one (the default, as on iOS) an import allocates and keeps less. Set it to nil for large imports.",
            source: "seed 000 L1976–1981, L4269 (U-02, U-03)",
            variants: { setup in
                let model = try RowWorkload.model()
                let count = setup.scale.part(20, minimum: 1_000)
                return [
                    importVariant("no undo manager", model: model, store: setup.folder.appendingPathComponent("import-plain.sqlite"), count: count),
                    importVariant("undo manager", model: model, store: setup.folder.appendingPathComponent("import-undo.sqlite"), count: count,
                                  configure: { $0.undoManager = ContextUndoManager() }),
                ]
            },
            judge: { m in
                guard let plain = kept(m, "no undo manager"), let undo = kept(m, "undo manager"),
                      let plainBytes = allocated(m, "no undo manager"), let undoBytes = allocated(m, "undo manager") else {
                    return notCounted
                }
                return Verdict(held: undo > plain && undoBytes > plainBytes, describe(m, ["no undo manager", "undo manager"]))
            })
    }

    /// M-FETCH-MEMORY: N rows fetched as full objects, as faults without values, as IDs, and with a batch size.
    static var fetchMemory: BenchScenario {
        let names = ["objects", "faults without values", "object IDs", "batch size 20"]
        return BenchScenario(
            id: "fetch-memory", title: "Memory of a fetch: objects, faults without values, IDs, a batch size",
            claim: "A fetch that does not need the values costs far less memory: faults without property values and object IDs keep a fraction of what full objects keep, and a batch size reads only the rows shown.",
            source: "seed 000 L4241–4273 (memory trimming); seed 004 L413–420 (includesPropertyValues)",
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                var objects = FetchRequest<ManagedObject>(entityName: "Row")
                objects.returnsObjectsAsFaults = false
                var faults = FetchRequest<ManagedObject>(entityName: "Row")
                faults.includesPropertyValues = false
                var batched = FetchRequest<ManagedObject>(entityName: "Row")
                batched.fetchBatchSize = 20
                return [
                    .engine(names[0], model: model, store: store) { Bench.sink(Int64(try $0.fetch(objects).count)) },
                    .engine(names[1], model: model, store: store) { Bench.sink(Int64(try $0.fetch(faults).count)) },
                    .engine(names[2], model: model, store: store) { Bench.sink(Int64(try $0.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "Row")).count)) },
                    // A list showing its first 20 rows.
                    .engine(names[3], model: model, store: store) { context in
                        Bench.sink(try context.fetch(batched).prefix(20).reduce(0) { $0 &+ $1[RowWorkload.keys[0]] })
                    },
                ]
            },
            judge: { m in
                let values = names.compactMap { kept(m, $0) }
                guard values.count == names.count else { return notCounted }
                let (full, faults, ids, batch) = (values[0], values[1], values[2], values[3])
                return Verdict(held: faults * 2 < full && ids * 2 < full && batch * 2 < full, describe(m, names))
            })
    }

    /// M-REFRESH: objects read and then turned back into faults with refresh(_:mergeChanges: false).
    static var refreshToFault: BenchScenario {
        BenchScenario(
            id: "refresh-to-fault", title: "Read N objects, then refresh them to faults (mergeChanges: false)",
            claim: "refresh(_:mergeChanges: false) turns objects the program has finished with back into faults: their values and their hold on the row cache go, and the context keeps far less.",
            source: "seed 000 L1942–1957, L4271 (C-04, C-05); seed 004 L274",
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.part(4, minimum: 1_000))
                var request = FetchRequest<ManagedObject>(entityName: "Row")
                request.returnsObjectsAsFaults = false
                return [
                    .engine("keep objects", model: model, store: store) { context in
                        Bench.sink(try context.fetch(request).reduce(0) { $0 &+ $1[RowWorkload.keys[0]] })
                    },
                    .engine("refresh each after use", model: model, store: store) { context in
                        var sum: Int64 = 0
                        for row in try context.fetch(request) {
                            sum &+= row[RowWorkload.keys[0]]
                            context.refresh(row, mergeChanges: false)
                        }
                        Bench.sink(sum)
                    },
                ]
            },
            judge: { m in
                guard let keep = kept(m, "keep objects"), let refreshed = kept(m, "refresh each after use") else {
                    return notCounted
                }
                return Verdict(held: refreshed * 2 < keep, describe(m, ["keep objects", "refresh each after use"]))
            })
    }

    /// M-ROW-CACHE: the same rows held by one context, by two, and by two that then reset.
    static var rowCacheSharing: BenchScenario {
        let names = ["one context", "two contexts", "two contexts, both reset"]
        return BenchScenario(
            id: "row-cache-sharing", title: "The row cache: one snapshot per row for every context, gone when none holds it",
            claim: "Contexts on one coordinator share the row cache's snapshot of a row: a second context holding the same rows keeps far less than the first, and once both let go (reset) the snapshots go too.",
            source: "seed 000 L3245–3253, L4241–4273 (row cache, memory trimming); seed 004 L274",
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.part(4, minimum: 1_000))
                var request = FetchRequest<ManagedObject>(entityName: "Row")
                request.returnsObjectsAsFaults = false
                return names.enumerated().map { index, name in
                    BenchVariant(name) { probes in
                        let coordinator = try BenchStore.coordinator(model, at: store, probes: probes)
                        let contexts = (0..<(index == 0 ? 1 : 2)).map { _ in ManagedObjectContext(.privateQueue, coordinator: coordinator) }
                        return {
                            for context in contexts {
                                try context.performAndWait { Bench.sink(Int64(try context.fetch(request).count)) }
                            }
                            if index == 2 {
                                for context in contexts { context.performAndWait { context.reset() } }
                            }
                            withExtendedLifetime(contexts) {}
                        }
                    }
                }
            },
            judge: { m in
                let values = names.compactMap { kept(m, $0) }
                guard values.count == names.count else { return notCounted }
                let (one, two, released) = (values[0], values[1], values[2])
                return Verdict(held: Double(two) < 1.6 * Double(one) && released * 10 < one, describe(m, names))
            })
    }
}
