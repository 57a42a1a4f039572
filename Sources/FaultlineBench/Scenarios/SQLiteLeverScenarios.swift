import Faultline
import Foundation

extension ScenarioCatalogue {
    /// The variants of `save-durability`: journal mode and `synchronous`, as store pragmas, and the in-memory store.
    static let durabilityVariants: [(name: String, pragmas: [(String, String)], inMemory: Bool)] = [
        ("WAL, synchronous NORMAL (Core Data's)", [], false),
        ("WAL, synchronous FULL", [("synchronous", "FULL")], false),
        ("WAL, synchronous OFF", [("synchronous", "OFF")], false),
        ("DELETE journal, synchronous FULL (SQLite's)", [("journal_mode", "DELETE"), ("synchronous", "FULL")], false),
        ("DELETE journal, synchronous NORMAL", [("journal_mode", "DELETE"), ("synchronous", "NORMAL")], false),
        ("in-memory store", [], true),
    ]

    /// Small saves under each journal mode and `synchronous` level: what durability costs a save.
    static var saveDurability: BenchScenario {
        let objectsPerSave = 5
        let variants = durabilityVariants
        let core = variants[0].name, full = variants[1].name, off = variants[2].name, rollback = variants[3].name, memory = variants[5].name
        final class Sizes: @unchecked Sendable { var bytes: [String: Int] = [:] }
        let sizes = Sizes()
        return BenchScenario(
            id: "save-durability", title: "Small saves (\(objectsPerSave) objects each) under each journal mode and synchronous level",
            claim: "A save's cost is its durability: synchronous FULL waits for the disk more than NORMAL, OFF not at all; a write-ahead log (WAL, Core Data's default since iOS 7) needs fewer syncs than a rollback journal (DELETE); an in-memory store has none.",
            theme: .sqlite,
            sources: [.apple("Persistent Store Types and Behaviors", "Configuring Save Behavior for a SQLite Store", "perf-22", "B13"),
                      .objcio("Performance", "The Secret Sauce's Tunables", "P-45", "B-PRAGMA")],
            ratios: [RatioSpec(full, over: core), RatioSpec(off, over: core), RatioSpec(rollback, over: core), RatioSpec(memory, over: core)],
            variants: { setup in
                let model = try RowWorkload.model()
                let saves = setup.scale.part(400, minimum: 50)
                return variants.map { variant in
                    let url = setup.folder.appendingPathComponent("durability-\(variant.name.filter(\.isLetter)).sqlite")
                    return BenchVariant(variant.name, operations: saves) { probes in
                        // What the previous run left, measured outside the clock.
                        if !variant.inMemory { sizes.bytes[variant.name] = StoreFiles.bytes(of: url) }
                        RowWorkload.removeStore(at: url)
                        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                        try coordinator.addPersistentStore(type: variant.inMemory ? .inMemory : .sqlite, at: url,
                                                           pragmas: try variant.pragmas.map { try StorePragma($0.0, $0.1) })
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let entity = model.entity(named: "Row")!
                        return {
                            try context.performAndWait {
                                for save in 0..<saves {
                                    for i in 0..<objectsPerSave {
                                        let row = ManagedObject(entity: entity, insertInto: context)
                                        for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(save * 100 + i * 10 + j) }
                                    }
                                    try context.save()
                                }
                            }
                        }
                    }
                }
            },
            judge: { m in
                guard let fullRatio = m.ratio(full, core), let offRatio = m.ratio(off, core), let rollbackRatio = m.ratio(rollback, core),
                      let memoryRatio = m.ratio(memory, core), let perSave = m.median(core) else { return Verdict(held: nil, "not measured") }
                let fileSystem = StoreFiles.fileSystem(of: FileManager.default.temporaryDirectory)
                let figures = "a save of \(objectsPerSave) objects: \(BenchFormat.seconds(perSave)) with WAL and synchronous NORMAL; "
                    + "FULL \(BenchFormat.ratio(fullRatio)), OFF \(BenchFormat.ratio(offRatio)), a rollback journal with FULL \(BenchFormat.ratio(rollbackRatio)), "
                    + "in memory \(BenchFormat.ratio(memoryRatio)) of it"
                    + (sizes.bytes[core].map { "; file and WAL after the run: \(BenchFormat.bytes($0))" } ?? "")
                    + ". On Linux fsync asks the device to flush its cache (macOS's fsync does not: Core Data's FULL asks F_FULLFSYNC there, which is why a small save there can take tenths of a second); the temporary folder is on \(fileSystem.name)"
                guard fileSystem.syncs else {
                    return Verdict(held: nil, figures + ", where fsync writes nothing to a device — not judged")
                }
                // Held: durability costs — FULL and a rollback journal no faster than Core Data's setting (5% for
                // noise), OFF and memory faster than FULL. (In WAL, NORMAL syncs only at checkpoints: OFF gains little.)
                let held = fullRatio >= 0.95 && rollbackRatio >= 0.95 && offRatio < fullRatio && memoryRatio < fullRatio
                return Verdict(held: held, figures)
            })
    }

    /// Deleting half the rows, then nothing, an incremental vacuum or a full one: the file's size and the time.
    static var fileSize: BenchScenario {
        let none = "no vacuum", incremental = "incremental vacuum", full = "full vacuum (VACUUM)"
        let scatteredIncremental = "scattered deletes, incremental vacuum", scatteredFull = "scattered deletes, full vacuum"
        final class Sizes: @unchecked Sendable {
            var empty = 0, inserted = 0, deleted = 0
            var after: [String: Int] = [:]
        }
        let sizes = Sizes()
        return BenchScenario(
            id: "file-size", title: "The store file after deleting the older half of its rows: left as it is, incremental vacuum, full vacuum",
            claim: "Deleting rows does not shrink the store file: SQLite keeps the free pages for reuse. A vacuum gives them back — incrementally in place, or by rebuilding the file.",
            theme: .sqlite,
            sources: [.apple("Persistent Store Types and Behaviors", "SQLite File Size and Record Deletion", "perf-23", "B14")],
            ratios: [RatioSpec(incremental, over: full)],
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = setup.scale.part(2, minimum: 1_000)
                // Two stores of `rows` rows: the older half deleted (whole pages freed), or every other row (pages
                // left half full).
                func template(_ name: String, deleting doomed: (Int) -> Bool) throws -> URL {
                    let url = setup.folder.appendingPathComponent("file-size-\(name).sqlite")
                    let coordinator = try ScenarioStore.open(url, model: model, probes: .disabled)
                    let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                    try coordinator.vacuum(.incremental(pages: 0))  // a checkpoint: the file holds the schema
                    sizes.empty = StoreFiles.bytes(of: url)
                    try RowWorkload.insert(count: rows, into: context)
                    try coordinator.vacuum(.incremental(pages: 0))  // the file holds every row
                    sizes.inserted = StoreFiles.bytes(of: url)
                    try context.performAndWait {
                        let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Row", sortDescriptors: [FetchSortDescriptor(keyPath: "a0")]))
                        for (i, row) in all.enumerated() where doomed(i) { context.delete(row) }
                        try context.save()
                    }
                    try coordinator.vacuum(.incremental(pages: 0))
                    return url
                }
                let older = try template("older", deleting: { $0 < rows / 2 })
                sizes.deleted = StoreFiles.bytes(of: older)
                let scattered = try template("scattered", deleting: { $0 % 2 == 0 })
                let plans: [(String, URL, StoreVacuum?)] = [(none, older, nil), (incremental, older, .incremental()), (full, older, .full),
                                                            (scatteredIncremental, scattered, .incremental()), (scatteredFull, scattered, .full)]
                return plans.map { name, template, vacuum in
                    let url = setup.folder.appendingPathComponent("file-size-run-\(name.filter(\.isLetter)).sqlite")
                    return BenchVariant(name, operations: 1) { probes in
                        if FileManager.default.fileExists(atPath: url.path) { sizes.after[name] = StoreFiles.bytes(of: url) }
                        let coordinator = try ScenarioStore.open(url, from: template, model: model, probes: probes)
                        return {
                            if let vacuum { try coordinator.vacuum(vacuum) }
                        }
                    }
                }
            },
            judge: { m in
                guard sizes.inserted > 0, let left = sizes.after[none], let shrunk = sizes.after[incremental], let rebuilt = sizes.after[full],
                      let scatteredShrunk = sizes.after[scatteredIncremental], let scatteredRebuilt = sizes.after[scatteredFull],
                      let incrementalTime = m.median(incremental), let fullTime = m.median(full) else { return Verdict(held: nil, "not measured") }
                // Held: the rows' pages stay after the deletes, and each vacuum returns most of the deleted half's
                // (the schema's pages, `empty`, stay in every case).
                let rowsBytes = sizes.inserted - sizes.empty
                let held = sizes.deleted >= sizes.inserted * 95 / 100 && left >= sizes.inserted * 95 / 100
                    && shrunk - sizes.empty <= rowsBytes * 60 / 100 && rebuilt - sizes.empty <= rowsBytes * 60 / 100
                return Verdict(held: held, "\(BenchFormat.bytes(sizes.empty)) empty, \(BenchFormat.bytes(sizes.inserted)) with every row, \(BenchFormat.bytes(sizes.deleted)) after deleting the older half; "
                               + "left as it is \(BenchFormat.bytes(left)), incremental vacuum \(BenchFormat.bytes(shrunk)) in \(BenchFormat.seconds(incrementalTime)), "
                               + "full vacuum \(BenchFormat.bytes(rebuilt)) in \(BenchFormat.seconds(fullTime)). Every other row deleted instead: "
                               + "incremental \(BenchFormat.bytes(scatteredShrunk)), full \(BenchFormat.bytes(scatteredRebuilt)) — half-full pages are not free pages, "
                               + "and only a full vacuum packs them")
            })
    }
}

/// Sizes of store files and what their folder's file system does with fsync.
enum StoreFiles {
    /// The bytes of a store file and its write-ahead log.
    static func bytes(of url: URL) -> Int {
        ["", "-wal"].reduce(0) { sum, suffix in
            sum + ((try? FileManager.default.attributesOfItem(atPath: url.path + suffix)[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    /// The file system `folder` is on (from /proc/self/mounts: the longest mount point above it), and whether an
    /// fsync there reaches a device.
    static func fileSystem(of folder: URL) -> (name: String, syncs: Bool) {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return ("an unknown file system", true) }
        let path = folder.resolvingSymlinksInPath().path
        var best: (point: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1]), type = String(fields[2])
            let covers = point == "/" || path == point || path.hasPrefix(point + "/")
            if covers && point.count >= (best?.point.count ?? -1) { best = (point, type) }
        }
        guard let type = best?.type else { return ("an unknown file system", true) }
        switch type {
        case "tmpfs", "ramfs": return ("\(type) (memory)", false)
        case "overlay": return ("overlayfs (a container's layer over a disk)", true)
        default: return (type, true)
        }
    }
}

extension ScenarioCatalogue {
    /// B-WAL / B-PRAGMA: the write-ahead log's size after many saves, with no long reader, with a context pinned to
    /// a query generation (a read transaction held open), and with a smaller autocheckpoint.
    static var walGrowth: BenchScenario {
        let free = "no long reader", pinned = "a context pinned to a query generation", large = "no long reader, autocheckpoint 1,000 pages (SQLite's default)"
        final class Sizes: @unchecked Sendable { var wal: [String: Int] = [:] }
        let sizes = Sizes()
        return BenchScenario(
            id: "wal-growth", title: "The write-ahead log after many saves: no long reader, a pinned reader, the default autocheckpoint",
            claim: "The write-ahead log is checkpointed back into the store as it grows; a long read transaction (a context pinned to a query generation) keeps the checkpoint from resetting it, so it grows with every save until the reader lets go. wal_autocheckpoint sets how large it grows otherwise.",
            theme: .sqlite,
            sources: [.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-15", "B-WAL"),
                      .objcio("Performance", "The Secret Sauce's Tunables", "P-45", "B-PRAGMA"),
                      .objcio("Problems with Multiple Contexts", "Query Generations")],
            ratios: [RatioSpec(pinned, over: free), RatioSpec(large, over: free)],
            variants: { setup in
                let model = try RowWorkload.model()
                // An autocheckpoint of 100 pages, passed many times by the rows written (about 60 rows a page).
                let saves = setup.scale.part(2_000, minimum: 20), batch = 1_000
                let hundred = [try StorePragma("wal_autocheckpoint", "100")]
                let plans: [(String, Bool, [StorePragma])] = [(free, false, hundred), (pinned, true, hundred), (large, false, [])]
                return plans.map { name, pin, pragmas in
                    let url = setup.folder.appendingPathComponent("wal-growth-\(name.filter(\.isLetter).prefix(12)).sqlite")
                    return BenchVariant(name, operations: saves) { probes in
                        if FileManager.default.fileExists(atPath: url.path + "-wal") {
                            sizes.wal[name] = (try? FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
                        }
                        let coordinator = try ScenarioStore.open(url, model: model, probes: probes, pragmas: pragmas)
                        let writer = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        if pin { try reader.performAndWait { try reader.setQueryGenerationFrom(.current) } }
                        let entity = model.entity(named: "Row")!
                        return {
                            try withExtendedLifetime(reader) {
                                try writer.performAndWait {
                                    for save in 0..<saves {
                                        for i in 0..<batch {
                                            let row = ManagedObject(entity: entity, insertInto: writer)
                                            for (j, key) in RowWorkload.keys.enumerated() { row[key] = Int64(save * batch + i * 10 + j) }
                                        }
                                        try writer.save()
                                        writer.reset()
                                    }
                                }
                                // The log as the saves left it, before the reader lets go.
                                sizes.wal[name] = (try? FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? NSNumber)?.intValue ?? 0
                            }
                        }
                    }
                }
            },
            judge: { m in
                guard let a = sizes.wal[free], let b = sizes.wal[pinned], let c = sizes.wal[large], let pinnedRatio = m.ratio(pinned, free), let largeRatio = m.ratio(large, free) else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: b > 2 * a && c >= a,
                               "the log after the saves, checkpointed every 100 pages: \(BenchFormat.bytes(a)) with no long reader, \(BenchFormat.bytes(b)) with a context pinned to a query generation; every 1,000 pages: \(BenchFormat.bytes(c)); the saves took \(BenchFormat.ratio(pinnedRatio)) and \(BenchFormat.ratio(largeRatio)) the time")
            })
    }
}
