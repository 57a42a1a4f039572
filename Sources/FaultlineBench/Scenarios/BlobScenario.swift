import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-BLOB: listing photos whose payload is inline, in an entity of its own, or in external storage.
    static var blobs: BenchScenario {
        let sizes = [(1_024, "1 kB"), (100 * 1_024, "100 kB"), (1_024 * 1_024, "1 MB"), (10 * 1_024 * 1_024, "10 MB")]
        return BenchScenario(
            id: "blobs", title: "Blobs inline versus in a separate entity or external storage (1 kB / 100 kB / 1 MB / 10 MB)",
            claim: "Small blobs (up to about 100 kB) can live inline; large ones slow every fetch of their entity, so they belong in an entity of their own that is only read when needed.",
            theme: .schema, sources: [ClaimSource.objcio("Data Types", "Standard Data Types", "P-58", "P-59", "B-BLOB"), ClaimSource.apple("Performance", "Binary Large Data Objects (BLOBs)", "perf-13", "B8")],
            ratios: sizes.map { RatioSpec("inline \($0.1)", over: "separate \($0.1)") },
            model: { try PhotoWorkload.model(separate: true) },
            variants: { setup in
                var variants: [BenchVariant] = []
                // The same total payload at each size: rows × 100 bytes (20 MB at the medium scale).
                let total = max(2 * 1_024 * 1_024, setup.scale.rows * 100)
                for (bytes, label) in sizes {
                    let count = max(bytes >= 10 * 1_024 * 1_024 ? 2 : 10, total / bytes)
                    // External storage keeps values over 100 KiB in files of their own: a 100 kB payload (102,400
                    // bytes, at the threshold) stays in the row, as Core Data keeps it.
                    let storages: [PhotoWorkload.Storage] = bytes >= 100 * 1_024 ? [.inline, .separate, .external] : [.inline, .separate]
                    for storage in storages {
                        let model = try PhotoWorkload.model(storage: storage)
                        let store = setup.folder.appendingPathComponent("photos-\(bytes)-\(storage.rawValue).sqlite")
                        try PhotoWorkload.generate(count: count, bytes: bytes, storage: storage, into: store)
                        variants.append(.engine("\(storage.rawValue) \(label)", model: model, store: store, operations: count) { context in
                            // A list of names: the payload is not shown.
                            let request = FetchRequest<ManagedObject>(entityName: "Photo")
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
                // What each way of storing large payloads costs a listing in memory (its memory run).
                let memory = ["1 MB", "10 MB"].compactMap { size -> String? in
                    let each = ["inline", "separate", "external"].compactMap { storage in
                        m["\(storage) \(size)"]?.memory?.bytesAllocated.map { "\(storage) \(BenchFormat.bytes($0))" }
                    }
                    return each.isEmpty ? nil : "at \(size) " + each.joined(separator: ", ")
                }
                let external = ["100 kB", "1 MB", "10 MB"].compactMap { size in
                    m.ratio("external \(size)", "separate \(size)").map { "\(BenchFormat.ratio($0)) at \(size)" }
                }
                return Verdict(held: large > 2, "listing with inline blobs costs " + ratios.map { "\(BenchFormat.ratio($0.value!)) at \($0.label)" }.joined(separator: ", ")
                               + " the separate entity's" + (external.isEmpty ? "" : "; external storage costs " + external.joined(separator: ", "))
                               + (memory.isEmpty ? "" : "; allocated " + memory.joined(separator: "; ")))
            })
    }
}
