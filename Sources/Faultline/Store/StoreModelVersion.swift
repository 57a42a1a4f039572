import Foundation

extension ManagedObjectModel {
    /// Every version of an `.xcdatamodeld` (or compiled `.momd`) bundle as (version name, model), the current version
    /// first, then the others by name. A version that does not load is an error naming it.
    public static func versions(ofBundle url: URL) throws -> [(name: String, model: ManagedObjectModel)] {
        if url.pathExtension == "momd" {
            let bundle = try CompiledBundle(url)
            let current = bundle.current.deletingPathExtension().lastPathComponent
            let ordered = [current] + bundle.versions.keys.filter { $0 != current }.sorted()
            return try ordered.map { name in
                let model = try ManagedObjectModel(loadingContentsOf: bundle.versions[name]!)
                model.bundle = url
                model.versionName = name
                return (name, model)
            }
        }
        let current = try currentVersion(ofBundle: url).lastPathComponent
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }
        let ordered = [current] + names.filter { $0 != current }.sorted()
        return try ordered.map { name in
            let model = try ManagedObjectModel(loadingContentsOf: url.appendingPathComponent(name))
            model.bundle = url
            model.versionName = String(name.dropLast(".xcdatamodel".count))
            return (model.versionName!, model)
        }
    }
}

extension PersistentStoreCoordinator {
    /// Opens the store at `store` with the version of the `.xcdatamodeld` or `.momd` bundle it was made with: the
    /// version whose Core Data hashes (a `.momd`'s `VersionInfo.plist`, or computed from the source) are the store's;
    /// else the current version when it fits, else the first other version that does. Returns the coordinator and the version's name;
    /// when no version fits, the error lists what differs for each.
    public static func open(_ store: URL, withVersionOf bundle: URL, options: PersistentStoreOptions = [],
                            probes: Probes = .shared) throws -> (coordinator: PersistentStoreCoordinator, version: String) {
        let opened = try openIdentifyingVersion(store, withVersionOf: bundle, options: options, probes: probes)
        return (opened.coordinator, opened.version)
    }

    /// `open(_:withVersionOf:)`, saying how the version was found: by Core Data's hashes (the store's
    /// `NSStoreModelVersionHashes` are the version's), or by the store's layout fitting it (a guess where versions
    /// share one).
    public static func openIdentifyingVersion(_ store: URL, withVersionOf bundle: URL, options: PersistentStoreOptions = [],
                                              probes: Probes = .shared) throws
        -> (coordinator: PersistentStoreCoordinator, version: String, identifiedBy: VersionIdentification) {
        var mismatches: [String] = []
        var byHashes: String?
        var versions = try ManagedObjectModel.versions(ofBundle: bundle)
        let faultlineHashes = recordsFaultlineHashes(store)
        // A compiled bundle knows each version's hashes as Core Data computes them: the version whose hashes are
        // the store's is tried first.
        // A source bundle's versions are hashed here, as Core Data hashes them (`coreDataVersionHashes`).
        if let stored = try? metadataForPersistentStore(at: store), let storeHashes = stored["NSStoreModelVersionHashes"] as? [String: Data] {
            let match = bundle.pathExtension == "momd"
                ? try CompiledBundle(bundle).versionHashes.first(where: { $0.value == storeHashes })?.key
                : versions.first(where: { $0.model.coreDataVersionHashes == storeHashes })?.name
            if let match, let index = versions.firstIndex(where: { $0.name == match }) {
                versions.insert(versions.remove(at: index), at: 0)
                byHashes = match
            }
        }
        for (name, model) in versions {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
            do {
                try coordinator.addPersistentStore(at: store, options: options)
                return (coordinator, name, name == byHashes || faultlineHashes ? .hashes : .layout)
            } catch StoreError.modelMismatch(_, let differences) {
                mismatches.append("version '\(name)': " + differences.joined(separator: "; "))
            }
        }
        throw StoreError.noMatchingModelVersion(path: store.path, bundle: bundle.path, mismatches: mismatches)
    }

    /// How a store and a bundle go together, as `info` and `migrate` both need it: one answer for both.
    public struct StoreIdentification {
        /// A coordinator with the store added read only (or with the options given).
        public let coordinator: PersistentStoreCoordinator
        /// The bundle's version the store was made with; nil when it is read through the model it caches, which is
        /// no version of the bundle.
        public let version: String?
        /// `.hashes`: a version's hashes are the store's. `.cache`: no version's are, but the model the store caches
        /// (`Z_MODELCACHE`) has the store's hashes — the model that wrote it. `.layout`: neither; a version's tables
        /// fit the store's, a guess.
        public let identifiedBy: VersionIdentification
    }

    /// Identifies the store at `store` against the versions of `bundle`, in Core Data's order: a version whose hashes
    /// are the store's; else the model the store caches, when its hashes are the store's (Core Data migrates from it);
    /// else a version whose tables fit (a guess, said as `.layout`). When none of these, the error lists what differs
    /// for each version.
    public static func identifyStore(_ store: URL, withVersionOf bundle: URL, options: PersistentStoreOptions = .readOnly,
                                     probes: Probes = .shared) throws -> StoreIdentification {
        var found: (coordinator: PersistentStoreCoordinator, version: String, identifiedBy: VersionIdentification)?
        var noVersion: Error?
        do { found = try openIdentifyingVersion(store, withVersionOf: bundle, options: options, probes: probes) } catch let error as StoreError {
            guard case .noMatchingModelVersion = error else { throw error }
            noVersion = error
        }
        if let found, found.identifiedBy == .hashes {
            return StoreIdentification(coordinator: found.coordinator, version: found.version, identifiedBy: .hashes)
        }
        if let cached = try? ManagedObjectModel.cachedInStore(at: store),
           let hashes = (try? metadataForPersistentStore(at: store))?["NSStoreModelVersionHashes"] as? [String: Data], hashes == cached.coreDataVersionHashes {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: cached, probes: probes)
            if (try? coordinator.addPersistentStore(at: store, options: options)) != nil {
                cached.versionName = cachedModelName
                return StoreIdentification(coordinator: coordinator, version: nil, identifiedBy: .cache)
            }
        }
        if let found { return StoreIdentification(coordinator: found.coordinator, version: found.version, identifiedBy: .layout) }
        throw noVersion!
    }

    /// True when Faultline wrote the store (`FaultlineStoreFormat`): opening compares its hashes with the model's,
    /// so a version it opens with is identified exactly.
    static func recordsFaultlineHashes(_ store: URL) -> Bool {
        (try? metadataForPersistentStore(at: store))?["FaultlineStoreFormat"] != nil
    }

    /// How `model`, which opened the store, is known to be the store's version: by hashes (Core Data's in the
    /// store's metadata, or Faultline's compared on opening), else only by the layout that let it open.
    public static func identification(of store: URL, by model: ManagedObjectModel) -> VersionIdentification {
        if recordsFaultlineHashes(store) { return .hashes }
        let stored = (try? metadataForPersistentStore(at: store))?["NSStoreModelVersionHashes"] as? [String: Data]
        return stored == model.coreDataVersionHashes ? .hashes : .layout
    }
}
