import Faultline
import Foundation

/// Read throughput and latency of contexts fetching while another context saves, with the coordinator's pool of
/// reader connections and with one connection for all.
final class ReaderFigures: @unchecked Sendable {
    private let lock = NSLock()
    /// Per variant: every read's latency (seconds), reads done, and the runs' wall-clock seconds.
    private var latencies: [String: [Double]] = [:]
    private var reads: [String: Int] = [:]
    private var seconds: [String: Double] = [:]
    private var saves: [String: [Double]] = [:]

    func add(_ variant: String, latencies run: [Double], saves runSaves: [Double], wall: Double) {
        lock.lock()
        defer { lock.unlock() }
        latencies[variant, default: []] += run
        reads[variant, default: 0] += run.count
        seconds[variant, default: 0] += wall
        saves[variant, default: []] += runSaves
    }

    /// Reads per second over the variant's runs.
    func throughput(_ variant: String) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        guard let n = reads[variant], let s = seconds[variant], s > 0 else { return nil }
        return Double(n) / s
    }

    /// The `p`-th percentile (0…1) of a variant's read latencies, or of its saves' durations.
    func percentile(_ variant: String, _ p: Double, saves ofSaves: Bool = false) -> Double? {
        lock.lock()
        let values = (ofSaves ? saves[variant] : latencies[variant]) ?? []
        lock.unlock()
        return Self.percentile(values, p)
    }

    /// The `p`-th percentile (0…1) of `values` (the nearest rank), or nil when there are none.
    static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
}

extension ScenarioCatalogue {
    static let readerCounts = [1, 2, 4]
    /// The pool's read throughput over one connection's that the claim needs (beyond this machine's noise).
    static let minimumGain = 1.05

    static func readersVariant(_ pooled: Bool, _ readers: Int) -> String {
        "\(pooled ? "pool" : "one connection"), \(readers) reader\(readers == 1 ? "" : "s")"
    }

    /// Contexts fetching while another saves: reader connections beside the writer against one connection.
    static var walReaders: BenchScenario {
        let figures = ReaderFigures()
        return BenchScenario(
            id: "wal-readers", title: "Readers beside a saving writer: a pool of reader connections, one connection for all",
            claim: "In WAL mode readers never wait for the writer: with a pool of reader connections (Core Data's connection pool), contexts fetch while another context saves, at a higher read throughput and a lower tail latency than one connection shared by all.",
            theme: .concurrency, sources: [ClaimSource.apple("Concurrency", "Using a Private Queue to Support Concurrency", "perf-25"), ClaimSource.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-09", "P-15", "B-CONTEND")],
            ratios: readerCounts.map { RatioSpec(readersVariant(false, $0), over: readersVariant(true, $0)) },
            variants: { setup in
                let model = try CityWorkload.model()
                let template = try setup.data.cities(setup.scale.part(2, minimum: 1_000), indexedPopulation: true, residents: false)
                let saves = max(4, setup.scale.part(10_000, minimum: 4)), batch = 200
                var variants: [BenchVariant] = []
                for pooled in [true, false] {
                    for readers in readerCounts {
                        let name = readersVariant(pooled, readers)
                        let copy = setup.folder.appendingPathComponent("readers-\(pooled ? "pool" : "one")-\(readers).sqlite")
                        variants.append(BenchVariant(name, operations: 1) { probes in
                            try DataSets.copy(template, to: copy)
                            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                            try coordinator.addPersistentStore(type: .sqlite, at: copy, readerConnections: pooled ? PersistentStoreCoordinator.defaultReaderConnections : 0)
                            return {
                                let run = try ReadersWorkload.run(coordinator, readers: readers, saves: saves, batch: batch)
                                figures.add(name, latencies: run.latencies, saves: run.saves, wall: run.seconds)
                            }
                        })
                    }
                }
                return variants
            },
            judge: { _ in
                func ms(_ value: Double?) -> String { value.map { String(format: "%.2f ms", $0 * 1000) } ?? "n/a" }
                let processors = ProcessInfo.processInfo.activeProcessorCount
                var lines: [String] = []
                var judged: [Bool] = []
                for readers in readerCounts {
                    let pool = readersVariant(true, readers), one = readersVariant(false, readers)
                    guard let a = figures.throughput(pool), let b = figures.throughput(one) else { return Verdict(held: nil, "not measured") }
                    lines.append("\(readers) reader\(readers == 1 ? "" : "s"): pool \(Int(a)) reads/s (p50 \(ms(figures.percentile(pool, 0.5))), p99 \(ms(figures.percentile(pool, 0.99))); saves p50 \(ms(figures.percentile(pool, 0.5, saves: true)))), one connection \(Int(b)) reads/s (p50 \(ms(figures.percentile(one, 0.5))), p99 \(ms(figures.percentile(one, 0.99))); saves p50 \(ms(figures.percentile(one, 0.5, saves: true))))")
                    // Parallel reads can only show where the writer and the readers each have a processor.
                    if readers > 1 && readers + 1 <= processors { judged.append(a >= b * minimumGain) }
                }
                let figuresText = lines.joined(separator: "; ")
                guard !judged.isEmpty else {
                    return Verdict(held: nil, figuresText + " — not judged: \(processors) processors cannot run the writer and 2 readers at once")
                }
                return Verdict(held: judged.allSatisfy { $0 }, figuresText
                               + " (held: the pool reads at least \(Int((minimumGain - 1) * 100 + 0.5))% more wherever the writer and the readers each have a processor; \(processors) processors)")
            })
    }
}

/// One writer saving batches of cities while readers run indexed range queries until it is done.
enum ReadersWorkload {
    struct Run {
        var latencies: [Double]
        var saves: [Double]
        var seconds: Double
    }

    /// `readerCoordinator`: the readers' own coordinator on the same file (nil: the writer's).
    static func run(_ coordinator: PersistentStoreCoordinator, readers: Int, saves: Int, batch: Int,
                    readerCoordinator: PersistentStoreCoordinator? = nil) throws -> Run {
        let done = ManagedAtomicFlag()
        let group = DispatchGroup()
        let collected = Collected()
        let start = DispatchTime.now().uptimeNanoseconds
        for reader in 0..<readers {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let context = ManagedObjectContext(.privateQueue, coordinator: readerCoordinator ?? coordinator)
                var random = SeededGenerator(seed: UInt64(17 + reader))
                var mine: [Double] = []
                do {
                    repeat {
                        let low = Int64.random(in: 10_000...200_000, using: &random)
                        let began = DispatchTime.now().uptimeNanoseconds
                        let rows = try context.performAndWait {
                            try context.fetch(try Bench.request("City", "population BETWEEN {%@, %@}", low, low + low / 50)).count
                        }
                        Bench.sink(Int64(rows))
                        mine.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9)
                    } while !done.isSet
                } catch {
                    collected.fail(error)
                }
                collected.add(mine)
            }
        }
        var saveTimes: [Double] = []
        let writer = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        do {
            try writer.performAndWait {
                let entity = coordinator.managedObjectModel.entity(named: "City")!
                for s in 0..<saves {
                    for i in 0..<batch {
                        let city = ManagedObject(entity: entity, insertInto: writer)
                        city[CityWorkload.name] = "New \(s)-\(i)"
                        city[CityWorkload.normalizedName] = "new \(s)-\(i)"
                        city[CityWorkload.population] = Int64(10_000 + (s * batch + i) * 37 % 190_000)
                    }
                    let began = DispatchTime.now().uptimeNanoseconds
                    try writer.save()
                    saveTimes.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9)
                    writer.reset()
                }
            }
        } catch {
            done.set()
            group.wait()
            throw error
        }
        done.set()
        group.wait()
        if let failure = collected.failure { throw failure }
        return Run(latencies: collected.latencies, saves: saveTimes, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
}

/// The readers' latencies and first error, gathered from their threads.
private final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Double] = []
    private var error: Error?

    func add(_ latencies: [Double]) {
        lock.lock()
        stored += latencies
        lock.unlock()
    }

    func fail(_ error: Error) {
        lock.lock()
        if self.error == nil { self.error = error }
        lock.unlock()
    }

    var latencies: [Double] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    var failure: Error? {
        lock.lock()
        defer { lock.unlock() }
        return error
    }
}

/// A flag set once, read by other threads.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}
