import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-BLOB: listing photos whose payload is inline, in an entity of its own, or (1 MB) in external storage.
    static var blobs: BenchScenario {
        let sizes = [(1_024, "1 kB"), (100 * 1_024, "100 kB"), (1_024 * 1_024, "1 MB")]
        return BenchScenario(
            id: "blobs", title: "Blobs inline versus in a separate entity (1 kB / 100 kB / 1 MB) or external storage (1 MB)",
            claim: "Small blobs (up to about 100 kB) can live inline; large ones slow every fetch of their entity, so they belong in an entity of their own that is only read when needed.",
            source: "seed 001 P-58, P-59 (L1570)",
            ratios: sizes.map { RatioSpec("inline \($0.1)", over: "separate \($0.1)") },
            model: { try PhotoWorkload.model(separate: true) },
            variants: { setup in
                var variants: [BenchVariant] = []
                // The same total payload at each size: rows × 100 bytes (20 MB at the medium scale).
                let total = max(2 * 1_024 * 1_024, setup.scale.rows * 100)
                for (bytes, label) in sizes {
                    let count = max(10, total / bytes)
                    // External storage keeps values over 100 KiB in files of their own: only the 1 MB payload leaves the row.
                    let storages: [PhotoWorkload.Storage] = bytes > 100 * 1_024 ? [.inline, .separate, .external] : [.inline, .separate]
                    for storage in storages {
                        let model = try PhotoWorkload.model(storage: storage)
                        let store = setup.folder.appendingPathComponent("photos-\(bytes)-\(storage.rawValue).sqlite")
                        try PhotoWorkload.generate(count: count, bytes: bytes, storage: storage, into: store)
                        variants.append(.engine("\(storage.rawValue) \(label)", model: model, store: store, operations: count) { context in
                            // A list of names: the payload is not shown.
                            var request = FetchRequest<ManagedObject>(entityName: "Photo")
                            request.returnsObjectsAsFaults = false
                            Bench.sink(Int64(try context.fetch(request).reduce(0) { $0 + $1[PhotoWorkload.name].utf8.count }))
                        })
                    }
                }
                return variants
            },
            judge: { m in
                let ratios = sizes.map { (label: $0.1, value: m.ratio("inline \($0.1)", "separate \($0.1)")) }
                guard ratios.allSatisfy({ $0.value != nil }) else { return Verdict(held: nil, "not measured") }
                let large = ratios.last!.value!
                // What each way of storing 1 MB payloads costs a listing in memory (its memory run).
                let memory = ["inline", "separate", "external"].compactMap { storage in
                    m["\(storage) 1 MB"]?.memory?.bytesAllocated.map { "\(storage) \(BenchFormat.bytes($0))" }
                }
                let external = m.ratio("external 1 MB", "separate 1 MB").map { "; external storage at 1 MB costs \(BenchFormat.ratio($0)) the separate entity's" } ?? ""
                return Verdict(held: large > 2, "listing with inline blobs costs " + ratios.map { "\(BenchFormat.ratio($0.value!)) at \($0.label)" }.joined(separator: ", ")
                               + " the separate entity's" + external + (memory.isEmpty ? "" : "; allocated at 1 MB: " + memory.joined(separator: ", ")))
            })
    }
}
