import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-CONTEND: two threads fetching at once through one coordinator (with its reader pool, or one connection) or
    /// through a coordinator each.
    static var coordinators: BenchScenario {
        let pooled = "one coordinator (reader pool)", single = "one coordinator, one connection", two = "two coordinators"
        let threads = 2
        return BenchScenario(
            id: "coordinators", title: "Two threads fetching at once: one coordinator (pooled or not), or one coordinator each",
            claim: "Contexts on one coordinator wait for each other: the coordinator is one lock and, by default, one connection. A coordinator each (or a pool of reader connections) lets them work in parallel.",
            theme: .concurrency,
            sources: [.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-08", "P-09", "B-CONTEND"),
                      .apple("Concurrency", "Using a Private Queue to Support Concurrency", "perf-25")],
            ratios: [RatioSpec(two, over: single), RatioSpec(pooled, over: single)],
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let cities = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.cities(cities, indexedPopulation: true, residents: false)
                let fetchesPerThread = max(10, setup.scale.part(2_000, minimum: 10))
                return [(pooled, 1, PersistentStoreCoordinator.defaultReaderConnections), (single, 1, 0), (two, threads, 0)].map { name, coordinators, readers in
                    BenchVariant(name, operations: threads * fetchesPerThread) { probes in
                        let made = try (0..<coordinators).map { _ -> PersistentStoreCoordinator in
                            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                            try coordinator.addPersistentStore(type: .sqlite, at: store, readerConnections: readers)
                            return coordinator
                        }
                        let contexts = (0..<threads).map { ManagedObjectContext(.privateQueue, coordinator: made[$0 % made.count]) }
                        return {
                            let group = DispatchGroup()
                            let failure = FirstError()
                            for (t, context) in contexts.enumerated() {
                                group.enter()
                                Thread.detachNewThread {
                                    defer { group.leave() }
                                    do {
                                        try context.performAndWait {
                                            for i in 0..<fetchesPerThread {
                                                let low = Int64((t * 7_919 + i * 104_729) % 200_000)
                                                let found = try context.fetch(try Bench.request("City", "population BETWEEN {%@, %@}", low, low + 2_000))
                                                Bench.sink(Int64(found.count))
                                                context.reset()
                                            }
                                        }
                                    } catch { failure.set(error) }
                                }
                            }
                            group.wait()
                            if let error = failure.error { throw error }
                        }
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(pooled), let b = m.counters(single), let c = m.counters(two),
                      let twoRatio = m.ratio(two, single), let poolRatio = m.ratio(pooled, single) else { return Verdict(held: nil, "not measured") }
                let processors = ProcessInfo.processInfo.activeProcessorCount
                let text = "statements: \(a.statements), \(b.statements), \(c.statements); against one coordinator with one connection, two coordinators take \(BenchFormat.ratio(twoRatio)) the time, one with a reader pool \(BenchFormat.ratio(poolRatio)) (\(processors) processors)"
                guard processors >= 2 else { return Verdict(held: nil, text + " — not judged: one processor runs one thread at a time") }
                return Verdict(held: twoRatio <= 0.9, text)
            })
    }

    /// B-MAIN-BUDGET: small saves on the UI's context while a background context imports, against the 16 ms frame.
    static var mainQueueBudget: BenchScenario {
        let idle = "small saves, nothing else running", importing = "small saves during a background import"
        let frame = 0.016
        let latencies = Latencies()
        return BenchScenario(
            id: "main-queue-budget", title: "Small saves (5 objects) on the UI's context, alone and while a background context imports",
            claim: "A small save on the main queue fits in a 60 Hz frame (16 ms) — also while a background context imports, as long as the import saves in batches.",
            theme: .concurrency,
            sources: [.objcio("Performance", "Inserting and Changing Objects", "P-37", "B-MAIN-BUDGET")],
            ratios: [RatioSpec(importing, over: idle)],
            variants: { setup in
                let model = try RowWorkload.model()
                let saves = setup.scale.part(1_000, minimum: 20), importBatch = 1_000
                return [(idle, false), (importing, true)].map { name, withImport in
                    let url = setup.folder.appendingPathComponent("main-budget-\(withImport).sqlite")
                    return BenchVariant(name, operations: saves) { probes in
                        let coordinator = try ScenarioStore.open(url, model: model, probes: probes)
                        let ui = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let background = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let entity = model.entity(named: "Row")!
                        return {
                            let done = ManagedAtomicFlag(), started = DispatchSemaphore(value: 0), failure = FirstError(), group = DispatchGroup()
                            if withImport {
                                group.enter()
                                Thread.detachNewThread {
                                    defer { group.leave() }
                                    do {
                                        try background.performAndWait {
                                            var batch = 0
                                            while !done.isSet {
                                                for i in 0..<importBatch {
                                                    let row = ManagedObject(entity: entity, insertInto: background)
                                                    for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(batch * importBatch + i + j) }
                                                }
                                                try background.save()
                                                background.reset()
                                                if batch == 0 { started.signal() }
                                                batch += 1
                                            }
                                        }
                                    } catch { failure.set(error); started.signal() }
                                }
                                // The small saves start once the import is under way.
                                started.wait()
                            }
                            var run: [Double] = []
                            try ui.performAndWait {
                                for s in 0..<saves {
                                    for i in 0..<5 {
                                        let row = ManagedObject(entity: entity, insertInto: ui)
                                        for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(-(s * 10 + i + j)) }
                                    }
                                    let start = DispatchTime.now().uptimeNanoseconds
                                    try ui.save()
                                    run.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                                    // A save per user action, not a loop of saves: a millisecond between them.
                                    usleep(1_000)
                                }
                            }
                            done.set()
                            group.wait()
                            if let error = failure.error { throw error }
                            latencies.add(name, run)
                        }
                    }
                }
            },
            judge: { _ in
                guard let p50 = latencies.percentile(importing, 0.5), let p99 = latencies.percentile(importing, 0.99),
                      let idle50 = latencies.percentile(idle, 0.5), let idle99 = latencies.percentile(idle, 0.99) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: p99 <= frame, "a small save alone: p50 \(BenchFormat.seconds(idle50)), p99 \(BenchFormat.seconds(idle99)); during an import saving batches of 1,000: p50 \(BenchFormat.seconds(p50)), p99 \(BenchFormat.seconds(p99)) against the 16 ms frame")
            })
    }
}

/// Latencies by variant, gathered over a scenario's runs from the threads that time them.
final class Latencies: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: [Double]] = [:]
    func add(_ name: String, _ run: [Double]) { lock.lock(); values[name, default: []] += run; lock.unlock() }
    func percentile(_ name: String, _ p: Double) -> Double? {
        lock.lock(); let run = values[name] ?? []; lock.unlock()
        return ReaderFigures.percentile(run, p)
    }
}

/// The first error of several threads.
final class FirstError: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Error?
    func set(_ error: Error) { lock.lock(); if stored == nil { stored = error }; lock.unlock() }
    var error: Error? { lock.lock(); defer { lock.unlock() }; return stored }
}
