import Faultline
import Foundation

/// The sample job `make bench` runs until the benchmark runner exists: it builds a DogWalk store through the
/// engine, reads it back, and measures the engine's speed targets against raw SQLite.
public struct Demo {
    public let folder: URL
    public let scale: Double

    public init(folder: URL, scale: Double = 1) {
        self.folder = folder
        self.scale = scale
    }

    /// Runs the demo; returns the report it also writes to `folder/summary.txt`.
    public func run(progress: (String) -> Void = { _ in }) throws -> String {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var report = "Faultline demo — SQLite \(PersistentStoreCoordinator.sqliteVersion)\n\n"
        report += try dogWalk(progress: progress)
        let check = SpeedCheck(folder: folder.appendingPathComponent("speed"),
                               fetchCount: Int(200_000 * scale), insertCount: Int(50_000 * scale), repetitions: 5)
        report += "\nSpeed targets (median of 5, same run, release build):\n"
        report += SpeedCheck.table(try check.run(progress: progress))
        try Data(report.utf8).write(to: folder.appendingPathComponent("summary.txt"))
        return report
    }

    private func dogWalk(progress: (String) -> Void) throws -> String {
        progress("DogWalk store")
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Dog", properties: [
                AttributeDescription(name: "name", type: .string, isIndexed: true),
                RelationshipDescription(name: "walks", destination: "Walk", inverse: "dog", isToMany: true, isOrdered: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Walk", properties: [
                AttributeDescription(name: "date", type: .date),
                RelationshipDescription(name: "dog", destination: "Dog", inverse: "walks"),
            ]),
        ])
        let store = folder.appendingPathComponent("dogwalk.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: store)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        var lines: [String] = []
        try context.performAndWait {
            let dogs = 10, walksPerDog = 100
            for d in 0..<dogs {
                let dog = try context.insertNewObject(forEntityName: "Dog")
                try dog.setValue("Dog \(d)", forKey: "name")
                for w in 0..<walksPerDog {
                    let walk = try context.insertNewObject(forEntityName: "Walk")
                    try walk.setValue(Date(timeIntervalSinceReferenceDate: Double(w * 3600)), forKey: "date")
                    try dog.addObject(walk, toRelationship: "walks")
                }
            }
            let before = coordinator.statistics.statementsExecuted
            try context.save()
            lines.append("inserted \(dogs) dogs with \(dogs * walksPerDog) ordered walks in one save: \(coordinator.statistics.statementsExecuted - before) statements")
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let before = coordinator.statistics
            let dogs = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Dog"))
            var walks = 0
            for dog in dogs { walks += dog.count(forRelationship: "walks") }
            let first = dogs[0].objects(forRelationship: "walks").prefix(3).compactMap { $0.value(forKey: "date") as? Date }
            let after = coordinator.statistics
            lines.append("fetched \(dogs.count) dogs and counted \(walks) walks: \(after.statementsExecuted - before.statementsExecuted) statements, \(after.rowCacheHits - before.rowCacheHits) row-cache hits, \(after.rowCacheMisses - before.rowCacheMisses) misses")
            lines.append("first walks of \(dogs[0].value(forKey: "name") as? String ?? "?"), in stored order: \(first.map { ISO8601DateFormatter().string(from: $0) }.joined(separator: ", "))")
        }
        lines.append("store: \(store.path)")
        return lines.map { "  " + $0 }.joined(separator: "\n") + "\n"
    }
}
