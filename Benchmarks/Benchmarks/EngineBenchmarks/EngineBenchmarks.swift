import Benchmark
import Faultline
import FaultlineBench
import FaultlineReport
import Foundation

// The engine's hot paths. Against raw SQLite on the same rows (GRDB's performance-suite shapes): fetch 200,000
// objects of ten integers, insert 50,000 of them with one save — compare each engine benchmark with its `raw SQLite`
// twin in the same run. On their own: attribute reads, faults from the row cache and from SQLite, predicate parsing
// and compilation, and the probes' cost (trace on versus off).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident, .throughput],
                                           timeUnits: .milliseconds, maxDuration: .seconds(10), maxIterations: 20)
    let folder = scratchFolder()
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: scratchFolder()) }
    let fetchStore = folder.appendingPathComponent("fetch.sqlite")
    let model = try! RowWorkload.model()
    RowWorkload.removeStore(at: fetchStore)
    try! RowWorkload.insert(count: 200_000, into: fetchStore, model: model)
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
    try! coordinator.addPersistentStore(at: fetchStore)

    /// Fetches every row into a new context per iteration; the context's creation and teardown, and the release of
    /// the objects, are not measured.
    func fetchInNewContexts(_ coordinator: PersistentStoreCoordinator, _ benchmark: Benchmark) throws {
        for _ in benchmark.scaledIterations {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            benchmark.startMeasurement()
            let fetched = try RowWorkload.fetchMaterializedObjects(context)
            benchmark.stopMeasurement()
            blackHole(fetched)
        }
    }

    Benchmark("Fetch 200k × 10 ints, materialized, new context") { benchmark in
        try fetchInNewContexts(coordinator, benchmark)
    }

    Benchmark("Fetch 200k × 10 ints, registered objects") { benchmark in
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let registered = try RowWorkload.fetchMaterializedObjects(context) // held: the context holds unchanged objects weakly
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try RowWorkload.fetchMaterializedObjects(context)) }
        benchmark.stopMeasurement()
        blackHole(registered)
    }

    Benchmark("Fetch 200k × 10 ints, raw SQLite") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try RawSQLite.selectRows(path: fetchStore.path)) }
    }

    // Fetch, use, release: the three phases `faultline bench fetch-objects` times, by the same functions
    // (`RowWorkload`, `RawSQLite` and `GRDBPeer.fetchUseRelease`), each phase a metric of its own (µs) beside the
    // whole iteration's wall clock. A new context per iteration and every object released in it: a cold fetch,
    // as the bench's "engine, cold".
    let phaseMetrics = BenchPhase.allCases.map { BenchmarkMetric.custom("\($0.rawValue) (µs)", polarity: .prefersSmaller, useScalingFactor: false) }
    let phasedConfiguration = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal] + phaseMetrics, timeUnits: .milliseconds,
                                                      maxDuration: .seconds(10), maxIterations: 20)
    func phased(_ benchmark: Benchmark, _ run: (PhaseClock) throws -> Int64) rethrows {
        let clock = PhaseClock()
        for _ in benchmark.scaledIterations {
            clock.start()
            blackHole(try run(clock))
            for (phase, metric) in zip(BenchPhase.allCases, phaseMetrics) {
                benchmark.measurement(metric, Int((clock.seconds(phase) * 1e6).rounded()))
            }
        }
    }

    Benchmark("Fetch, use, release 200k × 10 ints: engine", configuration: phasedConfiguration) { benchmark in
        try phased(benchmark) { clock in
            try RowWorkload.fetchUseRelease(ManagedObjectContext(.privateQueue, coordinator: coordinator), clock: clock)
        }
    }

    Benchmark("Fetch, use, release 200k × 10 ints: raw SQLite", configuration: phasedConfiguration) { benchmark in
        let connection = try RawSQLite.Connection(path: fetchStore.path)
        try phased(benchmark) { try RawSQLite.fetchUseRelease(connection, clock: $0) }
    }

    Benchmark("Fetch, use, release 200k × 10 ints: GRDB records", configuration: phasedConfiguration) { benchmark in
        let queue = try GRDBPeer.open(fetchStore.path)
        try phased(benchmark) { try GRDBPeer.fetchUseRelease(queue, clock: $0) }
    }

    Benchmark("Insert 50k × 10 ints, one save") { benchmark in
        let store = folder.appendingPathComponent("insert.sqlite")
        for _ in benchmark.scaledIterations {
            RowWorkload.removeStore(at: store)
            benchmark.startMeasurement()
            let context = try RowWorkload.insert(count: 50_000, into: store, model: model)
            benchmark.stopMeasurement()
            blackHole(context) // torn down outside the measurement, as the fetch benchmarks' contexts
        }
    }

    Benchmark("Insert 50k × 10 ints, raw SQLite") { benchmark in
        let store = folder.appendingPathComponent("insert-raw.sqlite")
        for _ in benchmark.scaledIterations {
            RowWorkload.removeStore(at: store)
            benchmark.startMeasurement()
            try RawSQLite.insertRows(path: store.path, count: 50_000)
            benchmark.stopMeasurement()
        }
    }

    // The probes' cost: the same work with a JSON Lines trace on.
    let traced = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(
        tracePath: folder.appendingPathComponent("probe-cost.jsonl").path)))
    try! traced.addPersistentStore(at: fetchStore)

    Benchmark("Fetch 200k × 10 ints, materialized, trace on") { benchmark in
        try fetchInNewContexts(traced, benchmark)
    }

    Benchmark("5k one-row fetches, probes off") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try RowWorkload.smallFetches(ManagedObjectContext(.privateQueue, coordinator: coordinator), count: 5_000))
        }
    }

    Benchmark("5k one-row fetches, trace on") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try RowWorkload.smallFetches(ManagedObjectContext(.privateQueue, coordinator: traced), count: 5_000))
        }
    }

    // The two above run one after the other, so the machine's drift falls on one side of their ratio. The paired
    // benchmarks time both in each iteration, in alternating order, and record their ratio (per mille): its
    // percentiles are the probes' cost. Before each timing, untimed, the trace writes what was left queued.
    let ratio = BenchmarkMetric.custom("trace on / probes off (‰)", polarity: .prefersSmaller, useScalingFactor: false)
    func paired(_ benchmark: Benchmark, off: PersistentStoreCoordinator, on: PersistentStoreCoordinator,
                _ work: (ManagedObjectContext) throws -> Int) throws {
        func time(_ coordinator: PersistentStoreCoordinator) throws -> Duration {
            on.probes.flush()
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            let start = ContinuousClock.now
            blackHole(try work(context))
            return ContinuousClock.now - start
        }
        for iteration in benchmark.scaledIterations {
            let (offTime, onTime): (Duration, Duration)
            if iteration % 2 == 0 {
                offTime = try time(off)
                onTime = try time(on)
            } else {
                onTime = try time(on)
                offTime = try time(off)
            }
            benchmark.measurement(ratio, Int((1_000 * (onTime / offTime)).rounded()))
        }
    }

    Benchmark("5k one-row fetches, trace on / probes off, paired",
              configuration: .init(metrics: [ratio], maxDuration: .seconds(20), maxIterations: 20)) { benchmark in
        try paired(benchmark, off: coordinator, on: traced) { try RowWorkload.smallFetches($0, count: 5_000) }
    }

    // The anchors' point-lookup benchmark (the probes' target, ≤ 5%): 20k single-object fetches by primary key from
    // 200,000 rows of ten strings, as `faultline bench probe-cost` times them. (Runs of 5k, 35 ms, read 0.97–1.08
    // depending on what ran just before each run, with the trace on or off: too short for a difference of 3%.) Its
    // store is built here, untimed, so that the other benchmarks do not wait for it.
    Benchmark("20k point lookups, trace on / probes off, paired",
              configuration: .init(metrics: [ratio], maxDuration: .seconds(30), maxIterations: 20)) { benchmark in
        let store = folder.appendingPathComponent("lookups.sqlite")
        RowWorkload.removeStore(at: store)
        try PointLookupWorkload.generate(rows: PointLookupWorkload.rows, into: store)
        let lookupModel = try PointLookupWorkload.model()
        let off = PersistentStoreCoordinator(managedObjectModel: lookupModel, probes: .disabled)
        try off.addPersistentStore(at: store)
        let on = PersistentStoreCoordinator(managedObjectModel: lookupModel, probes: traced.probes)
        try on.addPersistentStore(at: store)
        try paired(benchmark, off: off, on: on) { try PointLookupWorkload.lookups($0, count: 20_000, rows: PointLookupWorkload.rows) }
    }

    Benchmark("Fire 200k faults from the row cache",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .milliseconds)) { benchmark in
        for _ in benchmark.scaledIterations {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                let rows = try context.fetch(FetchRequest<ManagedObject>(entityName: "Row"))
                benchmark.startMeasurement()
                for row in rows { blackHole(row[RowWorkload.keys[3]]) }
                benchmark.stopMeasurement()
                withExtendedLifetime(rows) {} // released after the measurement (the context holds them weakly)
            }
        }
    }

    Benchmark("Release 200k fetched objects and their context",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .milliseconds)) { benchmark in
        for _ in benchmark.scaledIterations {
            var context: ManagedObjectContext? = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            var rows: [ManagedObject]? = try RowWorkload.fetchMaterializedObjects(context!).objects
            benchmark.startMeasurement()
            release(&rows, &context)
            benchmark.stopMeasurement()
        }
    }

    Benchmark("Read an attribute of 200k materialized objects",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds)) { benchmark in
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Row")
            request.returnsObjectsAsFaults = false
            let rows = try context.fetch(request)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                for row in rows { blackHole(row[RowWorkload.keys[3]]) }
            }
            benchmark.stopMeasurement()
            withExtendedLifetime(rows) {}
        }
    }

    Benchmark("Fire 5k faults from SQLite",
              configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .milliseconds)) { benchmark in
        for _ in benchmark.scaledIterations {
            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
            try context.performAndWait {
                var request = FetchRequest<ManagedObject>(entityName: "Row")
                request.includesPropertyValues = false
                request.fetchLimit = 5_000
                let rows = try context.fetch(request)
                benchmark.startMeasurement()
                for row in rows { blackHole(row[RowWorkload.keys[3]]) }
                benchmark.stopMeasurement()
                withExtendedLifetime(rows) {}
            }
        }
    }

    /// Drops both references where the caller measures it (an inout argument keeps them alive until the call).
    @inline(never) func release(_ rows: inout [ManagedObject]?, _ context: inout ManagedObjectContext?) {
        rows = nil
        context = nil
    }

    let predicateFormat = "(a0 > %d AND a1 BETWEEN {%d, %d}) OR a2 IN %@ OR NOT (a3 == %d)"
    let predicateArguments: [Any?] = [10, 5, 500, [1, 2, 3], 7]

    Benchmark("Parse a predicate", configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try ObjectPredicate(parsing: predicateFormat, argumentArray: predicateArguments)) }
    }

    Benchmark("Compile a predicate and sort to SQL", configuration: .init(metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds)) { benchmark in
        let request = FetchRequest<ManagedObject>(entityName: "Row", predicate: try ObjectPredicate(parsing: predicateFormat, argumentArray: predicateArguments),
                                                  sortDescriptors: [FetchSortDescriptor(keyPath: "a4", ascending: false)])
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            for _ in benchmark.scaledIterations { blackHole(try context.selectStatement(for: request)) }
        }
    }

    // `faultline report`'s reading and analysis of generated traces (SyntheticTrace), streaming: time and peak memory.
    // The target on 2 cores: 1M events in at most 5 s and 300 MB; the Chrome export in at most twice that.
    for events in [100_000, 1_000_000] {
        let trace = folder.appendingPathComponent("report-\(events).jsonl")
        try! SyntheticTrace.write(events: events, to: trace)
        let configuration = Benchmark.Configuration(metrics: [.wallClock, .peakMemoryResident], timeUnits: .milliseconds, maxIterations: 5)
        Benchmark("Report a \(events / 1_000)k-event trace", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                var analysis = TraceAnalysis(analyzers: Analyzers())
                let info = try TraceFile.read(path: trace.path) { analysis.add($0) }
                blackHole(ReportPage(inputs: [ReportPage.Input(path: trace.path, info: info, analysis: analysis)]).html)
            }
        }
        Benchmark("Report a \(events / 1_000)k-event trace with the Chrome export", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                var analysis = TraceAnalysis(analyzers: Analyzers())
                var bytes = 0
                let writer = ChromeTraceWriter { bytes += $0.count }
                let info = try TraceFile.read(path: trace.path) { event in
                    analysis.add(event)
                    try writer.add(event)
                }
                try writer.finish()
                blackHole(bytes)
                blackHole(ReportPage(inputs: [ReportPage.Input(path: trace.path, info: info, analysis: analysis)]).html)
            }
        }
    }
}

/// This process's folder for stores and traces, removed when it exits.
private func scratchFolder() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("faultline-benchmarks-\(getpid())")
}
