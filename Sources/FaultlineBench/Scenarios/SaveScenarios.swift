import Faultline
import Foundation

extension ScenarioCatalogue {
    /// Insert N objects with one save, against raw SQLite and GRDB.
    static var insert: BenchScenario {
        BenchScenario(
            id: "insert", title: "Insert N × 10 integers with one save, with peers",
            claim: "Inserting into a context is cheap and one save writes everything in one transaction: at most 2× a raw prepared-INSERT loop and faster than GRDB records.",
            theme: .saving, sources: [ClaimSource.objcio("Performance", "Inserting and Changing Objects", "P-35", "B-INSERT"), ClaimSource(.grdb, "insert 50,000 × 10 INT")],
            ratios: [RatioSpec("engine", over: "raw SQLite", limit: 2),
                     RatioSpec("engine", over: "GRDB records", limit: 1.0, target: "< 1× (faster than GRDB)")],
            variants: { setup in
                let model = try RowWorkload.model()
                let count = setup.scale.part(4, minimum: 100)
                let engineStore = setup.folder.appendingPathComponent("insert.sqlite")
                let rawStore = setup.folder.appendingPathComponent("insert-raw.sqlite")
                let grdbStore = setup.folder.appendingPathComponent("insert-grdb.sqlite")
                return [
                    BenchVariant("engine", operations: count) { probes in
                        RowWorkload.removeStore(at: engineStore)
                        // Opening (creating the schema) is set-up; the inserts and the save are timed.
                        let coordinator = try BenchStore.coordinator(model, at: engineStore, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return { try RowWorkload.insert(count: count, into: context) }
                    },
                    // Creating the file and its table is set-up, as for the engine.
                    .peer("raw SQLite", role: .rawSQLite, operations: count, open: { try RawSQLite.emptyRowStore(path: rawStore.path) }) {
                        try RawSQLite.insertRows($0, count: count)
                    },
                    .peer("GRDB records", role: .grdb, operations: count, open: { try GRDBPeer.emptyRowStore(path: grdbStore.path) }) {
                        try GRDBPeer.insertRows($0, count: count)
                    },
                ]
            },
            judge: { m in
                guard let raw = m.ratio("engine", "raw SQLite"), let grdb = m.ratio("engine", "GRDB records"), let counters = m.counters("engine") else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: raw <= 2 && grdb < 1 && counters.saves == 1,
                               "\(BenchFormat.ratio(raw)) raw SQLite, \(BenchFormat.ratio(grdb)) GRDB records; \(counters.saves) save, \(counters.statements) statements")
            })
    }

    /// B-SAVE-GRAN: the same inserts saved every 1, 10, 100, 1,000 objects or once.
    static var saveGranularity: BenchScenario {
        let every = [1, 10, 100, 1_000, 0]
        func name(_ n: Int) -> String { n == 0 ? "one save" : "save every \(n)" }
        return BenchScenario(
            id: "save-granularity", title: "Save granularity: every 1, 10, 100, 1,000 changes or once",
            claim: "Fewer, larger saves cost less in total than many small ones.",
            theme: .saving, sources: [ClaimSource.objcio("Performance", "Inserting and Changing Objects", "P-36", "B-SAVE-GRAN"), ClaimSource.objcio("Syncing with a Network Service", nil, "P-91")],
            ratios: [RatioSpec(name(1), over: name(0))],
            variants: { setup in
                let model = try RowWorkload.model()
                let count = setup.scale.part(40, minimum: 100)
                return every.map { n in
                    let store = setup.folder.appendingPathComponent("save-\(n).sqlite")
                    return BenchVariant(name(n), operations: count) { probes in
                        RowWorkload.removeStore(at: store)
                        let context = ManagedObjectContext(.privateQueue, coordinator: try BenchStore.coordinator(model, at: store, probes: probes))
                        return {
                            try context.performAndWait {
                                let entity = model.entity(named: "Row")!
                                for i in 0..<count {
                                    let row = ManagedObject(entity: entity, insertInto: context)
                                    for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(i * 10 + j) }
                                    if n > 0 && (i + 1) % n == 0 { try context.save() }
                                }
                                if context.hasChanges { try context.save() }
                            }
                        }
                    }
                }
            },
            judge: { m in
                let times = every.compactMap { m.median(name($0)) }
                guard times.count == every.count else { return Verdict(held: nil, "not measured") }
                // Held when each coarser granularity is no slower than the finer one before it (10% noise allowed).
                let held = zip(times, times.dropFirst()).allSatisfy { $1 <= $0 * 1.1 }
                return Verdict(held: held, every.map { "\(name($0)): \(BenchFormat.seconds(m.median(name($0))!))" }.joined(separator: ", "))
            })
    }

    /// Update 10,000 objects and save once, against raw SQLite and GRDB.
    static var update: BenchScenario {
        BenchScenario(
            id: "update", title: "Update N/20 objects, one save, with peers",
            claim: "Changing fetched objects and saving once issues one UPDATE per object in one transaction; the engine's bookkeeping (change tracking, optimistic locking) should cost a small factor over raw SQL.",
            theme: .saving, sources: [ClaimSource.objcio("Performance", "Inserting and Changing Objects", "P-35", "P-36"), ClaimSource(.grdb, "update 10,000 objects, one save")],
            ratios: [RatioSpec("engine", over: "raw SQLite"), RatioSpec("engine", over: "GRDB records")],
            variants: { setup in
                let model = try RowWorkload.model()
                let template = try setup.data.rows(setup.scale.rows)
                let count = setup.scale.part(20, minimum: 100)
                let copy = setup.folder.appendingPathComponent("update.sqlite")
                let key = RowWorkload.keys[1]
                let request = FetchRequest<ManagedObject>(entityName: "Row")
                request.fetchLimit = count
                request.returnsObjectsAsFaults = false
                let sql = "UPDATE ZROW SET ZA1 = ZA1 + 1, Z_OPT = Z_OPT + 1 WHERE Z_PK = ?"
                return [
                    BenchVariant("engine", operations: count) { probes in
                        let context = try BenchStore.copiedContext(model, of: template, at: copy, probes: probes)
                        let rows = try context.performAndWait { try context.fetch(request) }
                        return {
                            try context.performAndWait {
                                for row in rows { row[key] = row[key] + 1 }
                                try context.save()
                            }
                        }
                    },
                    .peer("raw SQLite", role: .rawSQLite, operations: count, open: { () throws -> RawSQLite.Connection in
                        try DataSets.copy(template, to: copy)
                        return try RawSQLite.Connection(path: copy.path)
                    }) { try RawSQLite.updateRows($0, sql: sql, keys: 1...Int64(count)) },
                    BenchVariant("GRDB records", role: .grdb, operations: count) { _ in
                        try DataSets.copy(template, to: copy)
                        return try GRDBPeer.updater(path: copy.path, count: count)
                    },
                ]
            },
            judge: { m in
                guard let counters = m.counters("engine"), let raw = m.ratio("engine", "raw SQLite") else { return Verdict(held: nil, "not measured") }
                let count = m["engine"]?.operations ?? 0
                return Verdict(held: counters.saves == 1 && counters.statements <= count + 5,
                               "\(counters.statements) statements for \(count) updates in \(counters.saves) save; \(BenchFormat.ratio(raw)) raw SQLite, \(BenchFormat.ratio(m.ratio("engine", "GRDB records") ?? .nan)) GRDB")
            })
    }

    /// B-BATCHUPD: a "read" flag on N rows, in SQL versus through objects.
    static var batchUpdate: BenchScenario {
        BenchScenario(
            id: "batch-update", title: "Batch update versus fetch-modify-save (a flag on N/20 rows)",
            claim: "A batch update of thousands of rows is much faster than fetching, changing and saving them; merging its IDs brings registered objects up to date.",
            theme: .saving, sources: [ClaimSource.objcio("Changing and Saving Data", "Batch Updates", "P-88", "BU-01", "BU-06", "B-BATCHUPD")],
            ratios: [RatioSpec("batch update", over: "fetch-modify-save"), RatioSpec("batch update + merge", over: "fetch-modify-save")],
            variants: { setup in
                let model = try RowWorkload.model()
                let template = try setup.data.rows(setup.scale.rows)
                let count = setup.scale.part(20, minimum: 100)
                let copy = setup.folder.appendingPathComponent("batch-update.sqlite")
                let predicate = try ObjectPredicate(parsing: "a0 < %@", Int64(count * 10))
                let fetch = FetchRequest<ManagedObject>(entityName: "Row", predicate: predicate)
                fetch.returnsObjectsAsFaults = false
                func fresh(_ probes: Probes) throws -> ManagedObjectContext { try BenchStore.copiedContext(model, of: template, at: copy, probes: probes) }
                return [
                    BenchVariant("fetch-modify-save", operations: count) { probes in
                        let context = try fresh(probes)
                        return {
                            try context.performAndWait {
                                for row in try context.fetch(fetch) { row[RowWorkload.keys[1]] = 1 }
                                try context.save()
                            }
                        }
                    },
                    BenchVariant("batch update", operations: count) { probes in
                        let context = try fresh(probes)
                        return {
                            Bench.sink(Int64(try context.performAndWait { try context.execute(BatchUpdateRequest(entityName: "Row", predicate: predicate, propertiesToUpdate: ["a1": Int64(1)])) }.count))
                        }
                    },
                    BenchVariant("batch update + merge", operations: count) { probes in
                        // The same rows registered (materialized) in the context the IDs are merged into.
                        let context = try fresh(probes)
                        _ = try context.performAndWait { try context.fetch(fetch) }
                        let request = BatchUpdateRequest(entityName: "Row", predicate: predicate, propertiesToUpdate: ["a1": Int64(1)])
                        request.resultType = .objectIDs
                        return {
                            let result = try context.performAndWait { try context.execute(request) }
                            ManagedObjectContext.mergeChanges(fromRemoteSave: RemoteChanges(updated: result.objectIDs), into: [context])
                        }
                    },
                ]
            },
            judge: { m in
                guard let batch = m.ratio("fetch-modify-save", "batch update"), let merged = m.ratio("fetch-modify-save", "batch update + merge"),
                      let counters = m.counters("batch update") else { return Verdict(held: nil, "not measured") }
                return Verdict(held: batch >= 3 && counters.fetchedObjects == 0,
                               "batch update \(BenchFormat.ratio(batch)) faster (\(counters.statements) statements, no object loaded); with the merge into a context holding the rows \(BenchFormat.ratio(merged)) faster")
            })
    }

    /// Batch delete versus fetch-delete-save.
    static var batchDelete: BenchScenario {
        BenchScenario(
            id: "batch-delete", title: "Batch delete versus fetch-delete-save (N/20 rows)",
            claim: "A batch delete skips loading objects and is much faster than fetching, deleting and saving them.",
            theme: .saving, sources: [ClaimSource.objcio("Changing and Saving Data", "Batch Updates", "P-88"), ClaimSource.objcio("Problems with Multiple Contexts", "Deleting Objects", "D7")],
            ratios: [RatioSpec("batch delete", over: "fetch-delete-save")],
            variants: { setup in
                let model = try RowWorkload.model()
                let template = try setup.data.rows(setup.scale.rows)
                let count = setup.scale.part(20, minimum: 100)
                let copy = setup.folder.appendingPathComponent("batch-delete.sqlite")
                let predicate = try ObjectPredicate(parsing: "a0 < %@", Int64(count * 10))
                func fresh(_ probes: Probes) throws -> ManagedObjectContext { try BenchStore.copiedContext(model, of: template, at: copy, probes: probes) }
                return [
                    BenchVariant("fetch-delete-save", operations: count) { probes in
                        let context = try fresh(probes)
                        return {
                            try context.performAndWait {
                                for row in try context.fetch(FetchRequest<ManagedObject>(entityName: "Row", predicate: predicate)) { context.delete(row) }
                                try context.save()
                            }
                        }
                    },
                    BenchVariant("batch delete", operations: count) { probes in
                        let context = try fresh(probes)
                        return { Bench.sink(Int64(try context.performAndWait { try context.execute(BatchDeleteRequest(entityName: "Row", predicate: predicate)) }.count)) }
                    },
                ]
            },
            judge: { m in
                guard let speedup = m.ratio("fetch-delete-save", "batch delete") else { return Verdict(held: nil, "not measured") }
                return Verdict(held: speedup >= 3, "batch delete \(BenchFormat.ratio(speedup)) faster")
            })
    }

    /// Merge cost: IDs of N changed rows merged into a context that holds them (seed 001 L2856: 16 ms budget).
    static var mergeCost: BenchScenario {
        let sizes = [10, 100, 1_000, 10_000, 50_000, 100_000, 200_000]
        func name(_ n: Int) -> String { "merge \(n) updates" }
        // P-90: a did-save notification from another context of the same coordinator, merged (its rows are in the
        // row cache already).
        let didSaveSizes = [100, 10_000]
        func didSaveName(_ n: Int) -> String { "did-save merge of \(n) updates (same coordinator)" }
        return BenchScenario(
            id: "merge-cost", title: "Merging N changed objects into a main context (the 16 ms budget)",
            claim: "A main-context merge must fit in a frame (16 ms at 60 Hz; 20–30 ms is tolerable when the user is not interacting); large background changes need care.",
            theme: .concurrency, sources: [ClaimSource.objcio("Performance", "Inserting and Changing Objects", "P-37", "B-MAIN-BUDGET"),
                                            .objcio("Syncing with a Network Service", nil, "P-90"),
                                            ClaimSource(.studyNotes, "Advanced", "Background import", keys: ["W-004-14"])],
            variants: { setup in
                let model = try RowWorkload.model()
                let store = try setup.data.rows(setup.scale.rows)
                func registered(_ context: ManagedObjectContext, _ n: Int) throws -> [ManagedObject] {
                    let request = FetchRequest<ManagedObject>(entityName: "Row")
                    request.fetchLimit = n
                    request.returnsObjectsAsFaults = false
                    return try context.performAndWait { try context.fetch(request) }
                }
                let remote = sizes.filter { $0 <= setup.scale.rows }.map { n in
                    BenchVariant(name(n), operations: n) { probes in
                        let context = try BenchStore.coldContext(model, at: store, probes: probes)
                        let ids = try registered(context, n).map(\.objectID)
                        return { ManagedObjectContext.mergeChanges(fromRemoteSave: RemoteChanges(updated: ids), into: [context]) }
                    }
                }
                let copy = setup.folder.appendingPathComponent("merge-did-save.sqlite")
                let didSave = didSaveSizes.filter { $0 <= setup.scale.rows }.map { n in
                    BenchVariant(didSaveName(n), operations: n) { probes in
                        // A background context of the same coordinator updates the rows the main context holds, and
                        // saves (on a copy of the store) outside the clock; the merge of its notification is timed.
                        let coordinator = try ScenarioStore.open(copy, from: store, model: model, probes: probes)
                        let main = ManagedObjectContext(.privateQueue, coordinator: coordinator), background = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let held = try registered(main, n)
                        var notification: SaveNotification?
                        try background.performAndWait {
                            let observation = background.addDidSaveObserver { notification = $0 }
                            for row in try registered(background, n) { row[RowWorkload.keys[0]] = row[RowWorkload.keys[0]] &+ 1 }
                            try background.save()
                            background.removeObserver(observation)
                        }
                        guard let saved = notification else { throw BenchError("the background save sent no did-save notification") }
                        return {
                            main.performAndWait { main.mergeChanges(fromContextDidSave: saved) }
                            Bench.sink(Int64(held.count))
                        }
                    }
                }
                return remote + didSave
            },
            judge: { m in
                let within = sizes.filter { (m[name($0)]?.median ?? .infinity) <= 0.016 }
                let over = sizes.first { (m[name($0)]?.median ?? 0) > 0.016 }
                // The count at which a merge takes 16 ms, from the per-object cost of the largest size measured.
                let largest = sizes.last { m[name($0)] != nil }
                let budget = largest.flatMap { n in m[name(n)].map { Int(0.016 / ($0.median / Double(n))) } }
                let didSave = didSaveSizes.compactMap { n in m[didSaveName(n)].map { "\(n) \(BenchFormat.seconds($0.median))" } }
                return Verdict(held: nil, "within 16 ms up to \(within.last.map(String.init) ?? "none") changed objects"
                    + (over.map { "; \($0) take \(BenchFormat.seconds(m[name($0)]!.median))" } ?? "; every size measured fits")
                    + (budget.map { "; 16 ms is reached at about \($0) objects" } ?? "")
                    + (didSave.isEmpty ? "" : "; a did-save merge from a context of the same coordinator: " + didSave.joined(separator: ", ")))
            })
    }
}
