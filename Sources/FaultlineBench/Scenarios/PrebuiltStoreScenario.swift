import Faultline
import Foundation

extension ScenarioCatalogue {
    /// leiiwang's notes (004, perf-18): data a first launch needs, imported, or shipped as a prebuilt store and copied.
    static var prebuiltStore: BenchScenario {
        let importing = "import the records, then save", copying = "copy a prebuilt store, then open it"
        /// The prebuilt store's size, read when its data is made, for the verdict.
        final class Size { var bytes: Int? }
        let size = Size()
        return BenchScenario(
            id: "prebuilt-store", title: "N records at first launch: imported and saved, or a prebuilt store copied and opened",
            claim: "A store built ahead of time and shipped with the app (Apple's recommendation) is ready at first launch far sooner than importing its records, at the cost of the app's size: the store file.",
            theme: .importing,
            sources: [ClaimSource(.studyNotes, "Advanced", "Preloading", keys: ["perf-18"])],
            ratios: [RatioSpec(copying, over: importing)],
            alternatesOrder: true,
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = min(20_000, setup.scale.part(10, minimum: 200))
                let prebuilt = try setup.data.rows(rows)
                size.bytes = ["", "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: prebuilt.path + $0)[.size] as? NSNumber }.reduce(0) { $0 + $1.intValue }
                let importURL = setup.folder.appendingPathComponent("prebuilt-import.sqlite"), copyURL = setup.folder.appendingPathComponent("prebuilt-copy.sqlite")
                return [
                    BenchVariant(importing, operations: rows) { probes in
                        RowWorkload.removeStore(at: importURL)
                        return {
                            let coordinator = try BenchStore.coordinator(model, at: importURL, probes: probes)
                            try RowWorkload.insert(count: rows, into: ManagedObjectContext(.privateQueue, coordinator: coordinator))
                        }
                    },
                    BenchVariant(copying, operations: rows) { probes in
                        RowWorkload.removeStore(at: copyURL)
                        return {
                            try DataSets.copy(prebuilt, to: copyURL)
                            let coordinator = try BenchStore.coordinator(model, at: copyURL, probes: probes)
                            let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                            // Ready: the records are there.
                            Bench.sink(Int64(try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Row")) }))
                        }
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(importing), let b = m.counters(copying), let ratio = m.ratio(copying, importing), let rows = m[copying]?.operations else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: b.saves == 0 && a.saves == 1 && ratio < 1,
                               "\(rows) records: the import ran \(a.statements) statements, the copy \(b.statements) (a count to see them); the copy takes \(BenchFormat.ratio(ratio)) the import's time"
                               + (size.bytes.map { ", and adds its store's \(BenchFormat.bytes($0)) to the app" } ?? ""))
            })
    }
}
