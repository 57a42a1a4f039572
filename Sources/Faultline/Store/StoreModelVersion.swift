import Foundation

extension ManagedObjectModel {
    /// Every version of an `.xcdatamodeld` bundle as (version name, model), the current version first, then the others
    /// by name. A version that does not load is an error naming it.
    public static func versions(ofBundle url: URL) throws -> [(name: String, model: ManagedObjectModel)] {
        let current = try currentVersion(ofBundle: url).lastPathComponent
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }
        let ordered = [current] + names.filter { $0 != current }.sorted()
        return try ordered.map { name in
            (String(name.dropLast(".xcdatamodel".count)), try ManagedObjectModel(contentsOf: url.appendingPathComponent(name)))
        }
    }
}

extension PersistentStoreCoordinator {
    /// Opens the store at `store` with the version of the `.xcdatamodeld` bundle it was made with: the current
    /// version when it fits, else the first other version that does. Returns the coordinator and the version's name;
    /// when no version fits, the error lists what differs for each.
    public static func open(_ store: URL, withVersionOf bundle: URL, options: PersistentStoreOptions = [],
                            probes: Probes = .shared) throws -> (coordinator: PersistentStoreCoordinator, version: String) {
        var mismatches: [String] = []
        for (name, model) in try ManagedObjectModel.versions(ofBundle: bundle) {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
            do {
                try coordinator.addPersistentStore(at: store, options: options)
                return (coordinator, name)
            } catch StoreError.modelMismatch(_, let differences) {
                mismatches.append("version '\(name)': " + differences.joined(separator: "; "))
            }
        }
        throw StoreError.noMatchingModelVersion(path: store.path, bundle: bundle.path, mismatches: mismatches)
    }
}
