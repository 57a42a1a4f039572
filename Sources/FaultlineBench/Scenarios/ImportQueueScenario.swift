import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B9 / perf-25: an import in batches, on the UI's own context, on a private queue context beside it, or on a
    /// private child of it — while the UI's context answers a small fetch every half millisecond.
    static var importQueue: BenchScenario {
        let own = "import on the UI's context", sibling = "import on a private queue context", child = "import on a private child context"
        let latencies = Latencies()
        return BenchScenario(
            id: "import-queue", title: "An import in batches on the UI's context, a private queue context, or a private child context, while the UI fetches",
            claim: "A private queue context imports without blocking the main context: the main context's own work waits only for the coordinator, where an import on the main context makes it wait for every batch; a child of the main context pushes each batch through it.",
            theme: .importing,
            sources: [.apple("Concurrency", "Using a Private Queue to Support Concurrency", "perf-25", "B9")],
            ratios: [RatioSpec(sibling, over: own), RatioSpec(child, over: own)],
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = setup.scale.part(4, minimum: 5_000) / 500 * 500, batch = 500
                let entity = model.entity(named: "Row")!
                return [own, sibling, child].enumerated().map { k, name in
                    let url = setup.folder.appendingPathComponent("import-queue-\(k).sqlite")
                    return BenchVariant(name, operations: rows) { probes in
                        let coordinator = try ScenarioStore.open(url, model: model, probes: probes)
                        let ui = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let importer = k == 0 ? ui : k == 1 ? ManagedObjectContext(.privateQueue, coordinator: coordinator)
                                                            : ManagedObjectContext(.privateQueue, parent: ui)
                        let latest = FetchRequest<ManagedObject>(entityName: "Row")
                        latest.fetchLimit = 10
                        return {
                            let done = ManagedAtomicFlag(), failure = FirstError(), group = DispatchGroup()
                            group.enter()
                            Thread.detachNewThread {
                                defer { group.leave(); done.set() }
                                do {
                                    for b in 0..<(rows / batch) {
                                        try importer.performAndWait {
                                            for i in 0..<batch {
                                                let row = ManagedObject(entity: entity, insertInto: importer)
                                                for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(b * batch + i + j) }
                                            }
                                            try importer.save()
                                            importer.reset()
                                        }
                                        // A child's save reaches the store only when its parent, the UI's context, saves.
                                        if k == 2 { try ui.performAndWait { try ui.save(); ui.reset() } }
                                    }
                                } catch { failure.set(error) }
                            }
                            // The UI: a small fetch every half millisecond, timed from asking its context to the answer.
                            var run: [Double] = []
                            while !done.isSet {
                                let start = DispatchTime.now().uptimeNanoseconds
                                do { try ui.performAndWait { Bench.sink(Int64(try ui.fetch(latest).count)) } } catch { failure.set(error); break }
                                run.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                                usleep(500)
                            }
                            group.wait()
                            if let error = failure.error { throw error }
                            latencies.add(name, run)
                        }
                    }
                }
            },
            judge: { m in
                guard let ownP99 = latencies.percentile(own, 0.99), let siblingP99 = latencies.percentile(sibling, 0.99),
                      let childP99 = latencies.percentile(child, 0.99), let ownP50 = latencies.percentile(own, 0.5),
                      let siblingP50 = latencies.percentile(sibling, 0.5), let childP50 = latencies.percentile(child, 0.5) else { return Verdict(held: nil, "not measured") }
                let processors = ProcessInfo.processInfo.activeProcessorCount
                let text = "the UI's small fetch during the import, p50 / p99: on its own context \(BenchFormat.seconds(ownP50)) / \(BenchFormat.seconds(ownP99)), beside a private queue context \(BenchFormat.seconds(siblingP50)) / \(BenchFormat.seconds(siblingP99)), under a private child \(BenchFormat.seconds(childP50)) / \(BenchFormat.seconds(childP99)) (\(processors) processors)"
                guard processors >= 2 else { return Verdict(held: nil, text + " — not judged: one processor runs one thread at a time") }
                return Verdict(held: siblingP99 < ownP99, text)
            })
    }
}
