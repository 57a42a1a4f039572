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

    /// A controller over the list, sectioned by group.
    private static func listController(_ context: ManagedObjectContext, batch: Int, cacheName: String? = nil) -> FetchedResultsController<ManagedObject> {
        FetchedResultsController(fetchRequest: listRequest(batch: batch), managedObjectContext: context, sectionNameKeyPath: "group", cacheName: cacheName)
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
                                try listController(context, batch: batch, cacheName: cacheName).performFetch()
                            }
                        }
                        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                        try coordinator.addPersistentStore(at: url)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return {
                            try context.performAndWait {
                                let controller = listController(context, batch: batch, cacheName: cacheName)
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
                                let controller = listController(context, batch: batch)
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

    /// objc.io (FRC-02): a controller evaluates every object change of a merge against its predicate and sort and
    /// reports it: a large background import merged in one save is a storm of changes; in ten saves, ten smaller
    /// rounds; reloading once after the merge (no controller tracking it) skips the per-change work.
    static var resultsControllerChangeStorm: BenchScenario {
        let names = ["one save, tracked", "ten saves, tracked", "one save, reload after"]
        return BenchScenario(
            id: "frc-change-storm", title: "A background import merged under a fetched results controller: per-change work, or one reload",
            claim: "A fetched results controller processes a merged import change by change, at a cost that grows with the import; reloading the list once after a large merge costs less.",
            theme: .concurrency,
            sources: [.objcio("Hello Core Data", "Fetched Results Controller", "FRC-02")],
            ratios: [RatioSpec(names[2], over: names[0]), RatioSpec(names[1], over: names[0])],
            alternatesOrder: true,
            variants: { setup in
                let rows = setup.scale.part(8, minimum: 1_000)
                let imported = min(5_000, setup.scale.part(40, minimum: 200))
                let (model, store) = try listStore(setup, rows: rows)
                func variant(_ name: String, saves: Int, tracked: Bool) -> BenchVariant {
                    let url = setup.folder.appendingPathComponent("frc-storm-\(saves)-\(tracked).sqlite")
                    return BenchVariant(name, operations: imported) { probes in
                        let coordinator = try ScenarioStore.open(url, from: store, model: model, probes: probes)
                        let view = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        var controller: FetchedResultsController<ManagedObject>? = nil
                        if tracked {
                            controller = listController(view, batch: 20)
                            try view.performAndWait { try controller?.performFetch() }
                        }
                        // The import, outside the clock: its saves' notifications are merged on the clock.
                        let background = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        var notes: [SaveNotification] = []
                        _ = background.addDidSaveObserver { notes.append($0) }
                        try background.performAndWait {
                            let entity = model.entity(named: "Item")!
                            for i in 0..<imported {
                                let item = ManagedObject(entity: entity, insertInto: background)
                                try item.setValue("M", forKey: "group")
                                try item.setValue(Int64(rows + i), forKey: "rank")
                                try item.setValue("imported \(i)", forKey: "title")
                                if (i + 1) % (imported / saves) == 0 || i == imported - 1 { try background.save() }
                            }
                        }
                        return {
                            try view.performAndWait {
                                for note in notes { view.mergeChanges(fromContextDidSave: note) }
                                if !tracked {
                                    let reloaded = listController(view, batch: 20)
                                    try reloaded.performFetch()
                                    controller = reloaded
                                }
                                Bench.sink(Int64(controller?.sections?.count ?? 0))
                            }
                        }
                    }
                }
                return [variant(names[0], saves: 1, tracked: true), variant(names[1], saves: 10, tracked: true), variant(names[2], saves: 1, tracked: false)]
            },
            judge: { m in
                guard let reload = m.ratio(names[2], names[0]), let split = m.ratio(names[1], names[0]), let imported = m[names[0]]?.operations else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: reload < 1,
                               "\(imported) imported objects merged under a tracking controller: reloading once instead takes \(BenchFormat.ratio(reload)) the time; ten smaller saves \(BenchFormat.ratio(split))")
            })
    }

    /// Apple's guide (FP-05): a fetched property is evaluated lazily and then cached — reading it again costs nothing
    /// until the object is refreshed, when the fetch runs again.
    static var fetchedPropertyCache: BenchScenario {
        let names = ["relationship", "fetched property, read twice", "fetched property, refreshed between reads"]
        return BenchScenario(
            id: "fetched-property", title: "N departments' members: a to-many relationship, or a fetched property read twice",
            claim: "A fetched property is evaluated lazily by a fetch and then cached: reading it again costs nothing until its object is refreshed.",
            theme: .schema,
            sources: [.apple("Creating Managed Object Relationships", "Fetched Properties", "FP-04", "FP-05")],
            ratios: [RatioSpec(names[1], over: names[0]), RatioSpec(names[2], over: names[1])],
            alternatesOrder: true,
            variants: { setup in
                let departments = min(500, setup.scale.part(400, minimum: 20))
                let members = 10
                let model = try ManagedObjectModel(entities: [
                    EntityDescription(name: "Department", properties: [
                        AttributeDescription(name: "name", type: .string),
                        RelationshipDescription(name: "employees", destination: "Employee", inverse: "department", isToMany: true),
                    ], fetchedProperties: [FetchedPropertyDescription(name: "staff", destinationEntityName: "Employee",
                                                                      predicate: try ObjectPredicate(parsing: "department == $FETCH_SOURCE"))]),
                    EntityDescription(name: "Employee", properties: [
                        AttributeDescription(name: "name", type: .string),
                        RelationshipDescription(name: "department", destination: "Department", inverse: "employees"),
                    ]),
                ])
                let store = try ScenarioStore.make(setup.folder, "fetched-property", model: model) { context in
                    for d in 0..<departments {
                        let department = try context.insertNewObject(forEntityName: "Department")
                        try department.setValue("D\(d)", forKey: "name")
                        for e in 0..<members {
                            let employee = try context.insertNewObject(forEntityName: "Employee")
                            try employee.setValue("E\(d)-\(e)", forKey: "name")
                            try employee.setValue(department, forKey: "department")
                        }
                    }
                }
                func variant(_ name: String, key: String, refresh: Bool) -> BenchVariant {
                    let url = setup.folder.appendingPathComponent("fetched-property-\(key)-\(refresh).sqlite")
                    return BenchVariant(name, operations: departments) { probes in
                        let coordinator = try ScenarioStore.open(url, from: store, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return {
                            try context.performAndWait {
                                var count = 0
                                for department in try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")) {
                                    count += (department.value(forKey: key) as? [ManagedObject])?.count ?? 0
                                    if refresh { context.refresh(department, mergeChanges: false) }
                                    count += (department.value(forKey: key) as? [ManagedObject])?.count ?? 0
                                }
                                Bench.sink(Int64(count))
                            }
                        }
                    }
                }
                return [variant(names[0], key: "employees", refresh: false), variant(names[1], key: "staff", refresh: false),
                        variant(names[2], key: "staff", refresh: true)]
            },
            judge: { m in
                guard let twice = m.counters(names[1]), let refreshed = m.counters(names[2]), let relationship = m.counters(names[0]),
                      let departments = m[names[1]]?.operations, let ratio = m.ratio(names[1], names[0]) else {
                    return Verdict(held: nil, "not measured")
                }
                // One fetch for the departments, then one per department read (cached for the second read), two per
                // department when it is refreshed between reads.
                return Verdict(held: twice.fetches == 1 + departments && refreshed.fetches == 1 + 2 * departments,
                               "\(departments) departments read twice: the fetched property ran \(twice.fetches - 1) fetches (\(refreshed.fetches - 1) with a refresh between the reads); the relationship \(relationship.statements) statements; the fetched property took \(BenchFormat.ratio(ratio)) the relationship's time")
            })
    }
}

