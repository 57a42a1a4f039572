import Faultline
import Foundation

/// The seeds' memory advice, judged on what each variant's memory run allocated and kept (docs/results-format.md),
/// not on its time.
extension ScenarioCatalogue {
    /// The verdict where allocations are not counted (under a sanitizer).
    private static var notCounted: Verdict { Verdict(held: nil, "not measured (allocations are not counted in this build)") }

    /// Bytes a variant's memory run kept, or nil when allocations were not counted.
    private static func kept(_ m: ScenarioMeasurements, _ name: String) -> Int? { m[name]?.memory?.liveBytes }
    /// Bytes each of `names` kept, in order, or nil when any was not counted.
    private static func kept(_ m: ScenarioMeasurements, _ names: [String]) -> [Int]? {
        let values = names.compactMap { kept(m, $0) }
        return values.count == names.count ? values : nil
    }
    private static func allocated(_ m: ScenarioMeasurements, _ name: String) -> Int? { m[name]?.memory?.bytesAllocated }

    /// "name kept 12.3 MB (45,000 allocations, 67.8 MB)" for each variant.
    private static func describe(_ m: ScenarioMeasurements, _ names: [String]) -> String {
        names.compactMap { name in m[name]?.memory.map { "\(name) kept \(BenchFormat.bytes($0.liveBytes ?? 0))\(BenchFormat.spares($0)) of \(BenchFormat.bytes($0.bytesAllocated ?? 0)) allocated" } }
            .joined(separator: "; ")
    }

    /// What a run leaves to the program (a list on screen, a cache), kept until the next run of its variant is
    /// prepared: a memory run then counts what holding it costs.
    private final class Held { var value: Any? }

    /// An engine variant whose work returns what the program keeps (see `Held`).
    private static func holding(_ name: String, model: ManagedObjectModel, store: URL,
                                _ work: @escaping (ManagedObjectContext) throws -> Any?) -> BenchVariant {
        let held = Held()
        return BenchVariant(name) { probes in
            held.value = nil
            let context = try BenchStore.coldContext(model, at: store, probes: probes)
            return { held.value = try context.performAndWait { try work(context) } }
        }
    }

    /// The row model, a store of a quarter of the scale's rows, and a fetch of them all as objects with values.
    private static func materializedRows(_ setup: ScenarioSetup) throws -> (ManagedObjectModel, URL, FetchRequest<ManagedObject>) {
        let request = FetchRequest<ManagedObject>(entityName: "Row")
        request.returnsObjectsAsFaults = false
        return (try RowWorkload.model(), try setup.data.rows(setup.scale.part(4, minimum: 1_000)), request)
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
        let names = ["no reset", "reset per batch", "no reset, context retains objects"]
        return BenchScenario(
            id: "import-reset", title: "Import in batches of 1,000 with and without reset() after each save",
            claim: "Resetting the context after each saved batch keeps an import's memory flat; without it the context keeps every object it imported.",
            theme: .importing, sources: [ClaimSource.apple("Performance", "Reducing Memory Overhead", "perf-12"), ClaimSource(.studyNotes, "Understanding", "Import", keys: ["W-004-11"]), ClaimSource.apple("Managed Objects and References", "Weak References Between Managed Objects and the Context", "C-01", "C-03")],
            variants: { setup in
                let model = try RowWorkload.model()
                let count = setup.scale.part(10, minimum: 2_000)
                return [
                    importVariant(names[0], model: model, store: setup.folder.appendingPathComponent("import-keep.sqlite"), count: count),
                    importVariant(names[1], model: model, store: setup.folder.appendingPathComponent("import-reset.sqlite"), count: count,
                                  afterSave: { $0.reset() }),
                    importVariant(names[2], model: model, store: setup.folder.appendingPathComponent("import-retain.sqlite"), count: count,
                                  configure: { $0.retainsRegisteredObjects = true }),
                ]
            },
            judge: { m in
                guard let values = kept(m, names) else { return notCounted }
                // As the seed says it: the default context without reset keeps its objects. Core Data's context holds
                // saved objects weakly, so only a retaining one (third variant) shows the growth reset prevents.
                let (plain, reset, retaining) = (values[0], values[1], values[2])
                let why = plain * 10 < retaining ? " (the default context holds saved objects weakly: only a retaining context keeps the import)" : ""
                return Verdict(held: max(reset, 0) * 10 < plain, describe(m, names) + why)
            })
    }

    /// M-IMPORT-UNDO: the same import with an undo manager and without one (the default).
    static var importUndo: BenchScenario {
        BenchScenario(
            id: "import-undo", title: "Import with and without an undo manager",
            claim: "An undo manager records every change of an import and keeps it; without one (the default, as on iOS) an import allocates and keeps less. Set it to nil for large imports.",
            theme: .importing, sources: [ClaimSource.apple("Managed Objects and References", "Strong References in Change and Undo Management", "U-02", "U-03"), ClaimSource.apple("Performance", "Reducing Memory Overhead", "perf-18")],
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
            theme: .memory, sources: [ClaimSource.apple("Performance", "Reducing Memory Overhead", "perf-12", "B11"), ClaimSource(.studyNotes, "Understanding", "Memory", keys: ["W-004-5"])],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                let objects = FetchRequest<ManagedObject>(entityName: "Row")
                objects.returnsObjectsAsFaults = false
                let faults = FetchRequest<ManagedObject>(entityName: "Row")
                faults.includesPropertyValues = false
                let batched = FetchRequest<ManagedObject>(entityName: "Row")
                batched.fetchBatchSize = 20
                // Each run's result is held, as a list on screen holds it.
                return [
                    holding(names[0], model: model, store: store) { try $0.fetch(objects) },
                    holding(names[1], model: model, store: store) { try $0.fetch(faults) },
                    holding(names[2], model: model, store: store) { try $0.fetchObjectIDs(FetchRequest<ManagedObject>(entityName: "Row")) },
                    // A list showing its first 20 rows.
                    holding(names[3], model: model, store: store) { context in
                        // Core Data's batch array: the rows' IDs, and the objects of the batches read.
                        let rows: FetchedResults<ManagedObject> = try context.fetch(batched)
                        Bench.sink(rows.prefix(20).reduce(0) { $0 &+ $1[RowWorkload.keys[0]] })
                        return rows
                    },
                ]
            },
            judge: { m in
                guard let values = kept(m, names) else { return notCounted }
                let (full, faults, ids, batch) = (values[0], values[1], values[2], values[3])
                var detail = describe(m, names)
                let batchOverIDs = Double(batch) / Double(max(ids, 1))
                detail += "; the batched fetch keeps \(BenchFormat.ratio(batchOverIDs)) what the ID fetch keeps (target ≤ 1.25×)"
                return Verdict(held: faults * 2 < full && ids * 2 < full && batchOverIDs <= 1.25, detail)
            })
    }

    /// M-REFRESH: objects read and then turned back into faults with refresh(_:mergeChanges: false).
    static var refreshToFault: BenchScenario {
        BenchScenario(
            id: "refresh-to-fault", title: "Read N objects, then refresh them to faults (mergeChanges: false)",
            claim: "refresh(_:mergeChanges: false) turns objects the program has finished with back into faults: their values and their hold on the row cache go, and the context keeps far less.",
            theme: .memory, sources: [ClaimSource.apple("Managed Objects and References", "Breaking Strong References Between Objects", "C-04", "C-05"), ClaimSource.apple("Performance", "Reducing Memory Overhead", "perf-12")],
            variants: { setup in
                let (model, store, request) = try materializedRows(setup)
                // The program keeps the list in both; the second turns each object back into a fault once read.
                return [
                    holding("keep objects", model: model, store: store) { context in
                        let rows = try context.fetch(request)
                        Bench.sink(rows.reduce(0) { $0 &+ $1[RowWorkload.keys[0]] })
                        return rows
                    },
                    holding("refresh each after use", model: model, store: store) { context in
                        var sum: Int64 = 0
                        let rows = try context.fetch(request)
                        for row in rows {
                            sum &+= row[RowWorkload.keys[0]]
                            context.refresh(row, mergeChanges: false)
                        }
                        Bench.sink(sum)
                        return rows
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
            theme: .memory, sources: [ClaimSource.apple("Change Management", "Automatic Snapshot Management", "perf-20"), ClaimSource.apple("Performance", "Reducing Memory Overhead", "perf-12")],
            variants: { setup in
                let (model, store, request) = try materializedRows(setup)
                return names.enumerated().map { index, name in
                    let keep = Held()
                    return BenchVariant(name) { probes in
                        keep.value = nil
                        let coordinator = try BenchStore.coordinator(model, at: store, probes: probes)
                        let contexts = (0..<(index == 0 ? 1 : 2)).map { _ in ManagedObjectContext(.privateQueue, coordinator: coordinator) }
                        return {
                            // Each context's objects are held while it has them (a context holds them weakly).
                            var held: [[ManagedObject]] = []
                            for context in contexts {
                                held.append(try context.performAndWait { try context.fetch(request) })
                            }
                            if index == 2 {
                                for context in contexts { context.performAndWait { context.reset() } }
                                held = [] // reset objects are unusable: the program lets go of them too
                            }
                            keep.value = (contexts, held)
                        }
                    }
                }
            },
            judge: { m in
                guard let values = kept(m, names) else { return notCounted }
                let (one, two, released) = (values[0], values[1], values[2])
                return Verdict(held: Double(two) < 1.6 * Double(one) && released * 10 < one, describe(m, names))
            })
    }

    /// M-RETAINS: objects read and dropped by the program, with `retainsRegisteredObjects` off (the default) and on.
    static var retainsRegistered: BenchScenario {
        let names = ["retainsRegisteredObjects off", "retainsRegisteredObjects on", "on, then refreshAllObjects()"]
        return BenchScenario(
            id: "retains-registered", title: "retainsRegisteredObjects off and on, objects read and dropped",
            claim: "By default a context holds unchanged objects weakly, so objects the program is done with go away; retainsRegisteredObjects keeps every registered object, so memory grows with all that was read (refreshing them to faults gives their values back).",
            theme: .memory, sources: [ClaimSource.apple("Managed Objects and References", "Weak References Between Managed Objects and the Context", "C-01", "C-03", "perf-19"), ClaimSource.objcio("Accessing Data", "Memory Considerations", "P-81", "B-MEM")],
            variants: { setup in
                let (model, store, request) = try materializedRows(setup)
                return names.enumerated().map { index, name in
                    .engine(name, model: model, store: store) { context in
                        context.retainsRegisteredObjects = index > 0
                        Bench.sink(try context.fetch(request).reduce(0) { $0 &+ $1[RowWorkload.keys[0]] })
                        if index == 2 { context.refreshAllObjects() }
                    }
                }
            },
            judge: { m in
                guard let values = kept(m, names) else { return notCounted }
                let (off, on, refreshed) = (values[0], values[1], values[2])
                return Verdict(held: max(off, 1_024) * 10 < on && refreshed * 2 < on, describe(m, names))
            })
    }
}
