import Faultline
import Foundation

extension ScenarioCatalogue {
    /// The list model: N items in 26 sections (a string group, the first sort key), with a rank and a title.
    private static func listStore(_ setup: ScenarioSetup, rows: Int) throws -> (ManagedObjectModel, URL) {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "group", type: .string, isOptional: false, defaultValue: ""),
                AttributeDescription(name: "rank", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                AttributeDescription(name: "title", type: .string),
            ], compoundIndexes: [["group", "rank"]]),
        ])
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ").map(String.init)
        let store = try ScenarioStore.make(setup.folder, "list-\(rows)", model: model) { context in
            let entity = model.entity(named: "Item")!
            for i in 0..<rows {
                let item = ManagedObject(entity: entity, insertInto: context)
                try item.setValue(letters[i % 26], forKey: "group")
                try item.setValue(Int64(i), forKey: "rank")
                try item.setValue("item \(i)", forKey: "title")
            }
        }
        return (model, store)
    }

    private static func listRequest(batch: Int) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [FetchSortDescriptor(key: "group", ascending: true),
                                                                                       FetchSortDescriptor(key: "rank", ascending: true)])
        request.fetchBatchSize = batch
        return request
    }

    /// The first screen of a list: 20 rows' titles.
    private static func firstScreen(_ controller: FetchedResultsController<ManagedObject>) -> Int64 {
        var length = 0
        for row in 0..<min(20, controller.sections?.first?.numberOfObjects ?? 0) {
            length += (controller.object(at: IndexPath(row: row, section: 0)).value(forKey: "title") as? String)?.count ?? 0
        }
        return Int64(length)
    }

    /// Apple's guide and objc.io (perf-16, P-31): a controller's persistent section cache makes a relaunch with
    /// unchanged data nearly instantaneous. Each run is a launch: a new coordinator on the store, a controller over N
    /// rows in 26 sections, the first screen read — without a batch size (the sections need every object's value) and
    /// with one of 20 (the store counts the sections in one GROUP BY).
    static var resultsControllerCache: BenchScenario {
        let names = ["no batch size, no cache", "no batch size, cache (second launch)", "batch size 20, no cache", "batch size 20, cache (second launch)"]
        return BenchScenario(
            id: "frc-cache", title: "A fetched results controller's launch: sections computed, or read from its cache",
            claim: "A fetched results controller's persistent cache makes a relaunch with unchanged data nearly instantaneous.",
            theme: .startup,
            sources: [.apple("Performance", "Fetched Results Controller Cache", "perf-16"), .objcio("Performance", "Optimizing Fetch Requests", "P-31", "B-FRC")],
            ratios: [RatioSpec(names[1], over: names[0]), RatioSpec(names[3], over: names[2])],
            alternatesOrder: true,
            variants: { setup in
                let rows = setup.scale.part(4, minimum: 1_000)
                let (model, store) = try listStore(setup, rows: rows)
                let caches = setup.folder.appendingPathComponent("section-caches")
                func variant(_ name: String, batch: Int, cacheName: String?) -> BenchVariant {
                    let url = setup.folder.appendingPathComponent("frc-cache-\(batch)-\(cacheName ?? "none").sqlite")
                    return BenchVariant(name, operations: 1) { probes in
                        FetchedResultsController<ManagedObject>.cacheDirectory = caches
                        _ = try ScenarioStore.open(url, from: store, model: model, probes: .disabled)
                        if let cacheName {
                            // The first launch, outside the clock, writes the cache.
                            FetchedResultsController<ManagedObject>.deleteCache(withName: cacheName)
                            let first = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
                            try first.addPersistentStore(at: url)
                            let context = ManagedObjectContext(.privateQueue, coordinator: first)
                            try context.performAndWait {
                                try FetchedResultsController(fetchRequest: listRequest(batch: batch), managedObjectContext: context,
                                                             sectionNameKeyPath: "group", cacheName: cacheName).performFetch()
                            }
                        }
                        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                        try coordinator.addPersistentStore(at: url)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return {
                            try context.performAndWait {
                                let controller = FetchedResultsController(fetchRequest: listRequest(batch: batch), managedObjectContext: context,
                                                                          sectionNameKeyPath: "group", cacheName: cacheName)
                                try controller.performFetch()
                                Bench.sink(firstScreen(controller) + Int64(controller.sections?.count ?? 0))
                            }
                        }
                    }
                }
                return [variant(names[0], batch: 0, cacheName: nil), variant(names[1], batch: 0, cacheName: "frc-cache-0"),
                        variant(names[2], batch: 20, cacheName: nil), variant(names[3], batch: 20, cacheName: "frc-cache-20")]
            },
            judge: { m in
                guard let plain = m.ratio(names[1], names[0]), let batched = m.ratio(names[3], names[2]),
                      let a = m.counters(names[0]), let b = m.counters(names[1]), let c = m.counters(names[2]), let d = m.counters(names[3]) else {
                    return Verdict(held: nil, "not measured")
                }
                // The claim is the cache's: judged where the sections cost something to compute.
                return Verdict(held: plain <= 0.5,
                               "without a batch size the cached launch takes \(BenchFormat.ratio(plain)) the uncached one's time (\(a.statements) statements, then \(b.statements): every object's section value is not read); with a batch size of 20 \(BenchFormat.ratio(batched)) (\(c.statements) and \(d.statements) statements: the store counts the sections in one GROUP BY, as cheap as checking the cache's fingerprint)")
            })
    }

    /// objc.io (P-29, P-30): a controller with a batch size shows its first screen without reading every row into
    /// memory — the keys, then the batch shown — where one without reads every object.
    static var resultsControllerBatchSize: BenchScenario {
        let all = "no batch size", batched = "batch size 20"
        return BenchScenario(
            id: "frc-batch-size", title: "A fetched results controller's first screen: every object, or a batch of 20",
            claim: "A batch size lets a fetched results controller show its first screen without reading every row into memory: the first screen comes sooner and the controller keeps less.",
            theme: .fetchShape,
            sources: [.objcio("Performance", "Optimizing Fetch Requests", "P-29", "P-30")],
            ratios: [RatioSpec(batched, over: all)],
            alternatesOrder: true,
            variants: { setup in
                let rows = setup.scale.part(4, minimum: 1_000)
                let (model, store) = try listStore(setup, rows: rows)
                func variant(_ name: String, batch: Int) -> BenchVariant {
                    let url = setup.folder.appendingPathComponent("frc-batch-\(batch).sqlite")
                    return BenchVariant(name, operations: 1) { probes in
                        let coordinator = try ScenarioStore.open(url, from: store, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return {
                            try context.performAndWait {
                                let controller = FetchedResultsController(fetchRequest: listRequest(batch: batch), managedObjectContext: context,
                                                                          sectionNameKeyPath: "group", cacheName: nil)
                                try controller.performFetch()
                                Bench.sink(firstScreen(controller))
                            }
                        }
                    }
                }
                return [variant(all, batch: 0), variant(batched, batch: 20)]
            },
            judge: { m in
                guard let ratio = m.ratio(batched, all), let a = m.counters(all), let b = m.counters(batched) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: ratio < 1 && b.fetchedObjects < a.fetchedObjects,
                               "the first screen with a batch size takes \(BenchFormat.ratio(ratio)) the time without; fetch results: \(a.fetchedObjects) without (every object, then every object's values for its section), \(b.fetchedObjects) with (the rows' keys, the sections' counts, one batch), in \(a.statements) and \(b.statements) statements")
            })
    }
}
