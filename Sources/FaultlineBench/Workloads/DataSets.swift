import Faultline
import Foundation

/// Data sets shared by the scenarios of one run, generated on first use (untimed) and copied for scenarios that
/// change them.
public final class DataSets {
    let folder: URL
    let scale: BenchScale
    private var built: [String: URL] = [:]

    init(folder: URL, scale: BenchScale) {
        self.folder = folder
        self.scale = scale
    }

    /// The store of `name`, built by `make` at its path the first time it is asked for.
    func store(_ name: String, make: (URL) throws -> Void) throws -> URL {
        if let url = built[name] { return url }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name + ".sqlite")
        RowWorkload.removeStore(at: url)
        try make(url)
        built[name] = url
        return url
    }

    /// `count` rows of ten integers (`RowWorkload`).
    public func rows(_ count: Int) throws -> URL {
        try store("rows-\(count)") { url in
            let model = try RowWorkload.model()
            _ = try RowWorkload.insert(count: count, into: url, model: model)
        }
    }

    /// `count` rows of ten short strings (`PointLookupWorkload`).
    public func pointLookups(_ count: Int) throws -> URL {
        try store("lookups-\(count)") { url in try PointLookupWorkload.generate(rows: count, into: url) }
    }

    /// The City/Person graph (`CityWorkload`) with `cities` cities (and their residents when `residents`).
    public func cities(_ cities: Int, indexedPopulation: Bool = true, residents: Bool = true) throws -> URL {
        try store("cities-\(cities)-\(indexedPopulation ? "indexed" : "plain")\(residents ? "" : "-alone")") { url in
            try CityWorkload.generate(cities: cities, into: url, indexedPopulation: indexedPopulation, residents: residents)
        }
    }

    /// The Employee/Department graph (`EmployeeWorkload`), `salary` indexed when `indexedSalary`.
    public func employees(_ employees: Int, indexedSalary: Bool = false) throws -> URL {
        try store("employees-\(employees)\(indexedSalary ? "-indexed-salary" : "")") { url in
            try EmployeeWorkload.generate(employees: employees, into: url, indexedSalary: indexedSalary)
        }
    }

    /// A copy of a store, for a scenario that changes it.
    public static func copy(_ source: URL, to destination: URL) throws {
        RowWorkload.removeStore(at: destination)
        let fileManager = FileManager.default
        for suffix in ["", "-wal"] where fileManager.fileExists(atPath: source.path + suffix) {
            try fileManager.copyItem(atPath: source.path + suffix, toPath: destination.path + suffix)
        }
    }
}

/// Opening stores for benchmark variants.
public enum BenchStore {
    /// A coordinator on the store at `url`, with `probes`.
    public static func coordinator(_ model: ManagedObjectModel, at url: URL, probes: Probes) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
        try coordinator.addPersistentStore(at: url)
        return coordinator
    }

    /// A cold context on a fresh copy of `template` at `copy`, for a run that changes the store.
    public static func copiedContext(_ model: ManagedObjectModel, of template: URL, at copy: URL, probes: Probes) throws -> ManagedObjectContext {
        try DataSets.copy(template, to: copy)
        return try coldContext(model, at: copy, probes: probes)
    }

    /// A new private-queue context on a new coordinator (a cold start: empty row cache, no registered objects).
    public static func coldContext(_ model: ManagedObjectModel, at url: URL, probes: Probes) throws -> ManagedObjectContext {
        ManagedObjectContext(.privateQueue, coordinator: try coordinator(model, at: url, probes: probes))
    }
}
