import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-WAL: a reader's latency while a writer commits changesets of 1, 100 and thousands of rows, the reader on
    /// the writer's coordinator or on a second one, in WAL mode — and the largest changesets under a rollback
    /// journal.
    static var changesets: BenchScenario {
        let figures = ReaderFigures()
        func name(_ size: Int, _ second: Bool, rollback: Bool = false) -> String {
            "changesets of \(size): \(second ? "second coordinator" : "same coordinator")\(rollback ? ", rollback journal" : "")"
        }
        final class Sizes: @unchecked Sendable { var large = 0 }
        let sizes = Sizes()
        return BenchScenario(
            id: "changesets", title: "A reader beside a writer committing changesets of 1, 100 or thousands of rows: one coordinator or two, WAL or a rollback journal",
            claim: "WAL minimizes contention between readers and a writer, even on two coordinators; what contention remains grows with the size of each changeset.",
            theme: .concurrency,
            sources: [.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-15", "B-WAL")],
            variants: { setup in
                let model = try CityWorkload.model()
                let template = try setup.data.cities(setup.scale.part(2, minimum: 1_000), indexedPopulation: true, residents: false)
                let large = setup.scale.part(20, minimum: 1_000)
                sizes.large = large
                let total = 1_000
                var plan: [(size: Int, second: Bool, rollback: Bool)] = []
                for size in [1, 100, large] { for second in [false, true] { plan.append((size, second, false)) } }
                plan.append((large, true, true))
                return plan.enumerated().map { k, run in
                    let label = name(run.size, run.second, rollback: run.rollback)
                    let copy = setup.folder.appendingPathComponent("changesets-\(k).sqlite")
                    // As many rows in all at each size, at least five saves.
                    let saves = max(5, total / run.size)
                    return BenchVariant(label, operations: saves) { probes in
                        try DataSets.copy(template, to: copy)
                        let pragmas = run.rollback ? [try StorePragma("journal_mode", "DELETE")] : []
                        func open() throws -> PersistentStoreCoordinator {
                            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                            try coordinator.addPersistentStore(type: .sqlite, at: copy, pragmas: pragmas)
                            return coordinator
                        }
                        let writer = try open(), reader = run.second ? try open() : nil
                        return {
                            let result = try ReadersWorkload.run(writer, readers: 1, saves: saves, batch: run.size, readerCoordinator: reader)
                            figures.add(label, latencies: result.latencies, saves: result.saves, wall: result.seconds)
                        }
                    }
                }
            },
            judge: { _ in
                func ms(_ value: Double?) -> String { value.map { String(format: "%.2f ms", $0 * 1000) } ?? "n/a" }
                let large = sizes.large
                var lines: [String] = []
                for size in [1, 100, large] {
                    lines.append("\(size): " + [false, true].map { second in
                        let label = name(size, second)
                        return "\(second ? "two" : "one") coordinator\(second ? "s" : "") p50 \(ms(figures.percentile(label, 0.5))), p99 \(ms(figures.percentile(label, 0.99)))"
                    }.joined(separator: ", "))
                }
                let rollback = name(large, true, rollback: true)
                lines.append("\(large) under a rollback journal, two coordinators: p50 \(ms(figures.percentile(rollback, 0.5))), p99 \(ms(figures.percentile(rollback, 0.99)))")
                let text = "the reader's fetch latency beside changesets of " + lines.joined(separator: "; ")
                guard let small = figures.percentile(name(1, true), 0.99), let big = figures.percentile(name(large, true), 0.99),
                      let journal = figures.percentile(rollback, 0.99) else { return Verdict(held: nil, "not measured") }
                let processors = ProcessInfo.processInfo.activeProcessorCount
                guard processors >= 2 else { return Verdict(held: nil, text + " — not judged: one processor runs one thread at a time") }
                // Held: on two coordinators the tail grows with the changeset, and WAL's tail is below the rollback journal's.
                return Verdict(held: big > small && journal > big, text)
            })
    }
}
