import CSQLite
import Foundation

/// What a migration does or did: its steps from version to version, each with its mapping and the rows it copies.
public struct MigrationPlan: Sendable, CustomStringConvertible {
    /// One step: from a version to the next.
    public struct Step: Sendable {
        /// The version the step reads.
        public let from: String
        /// The version it writes.
        public let to: String
        /// How the step maps the objects (inferred, or a mapping model's).
        public let mapping: MappingModel
        /// Rows each destination entity gets.
        public var rows: [String: Int]
        /// What the step does to the values: dropped, defaulted, converted.
        public var account = MigrationAccount()
        /// The old store's persistent history, kept in the new store (nil when it kept none).
        public var history: HistoryKept?
    }

    /// The version the store was made with.
    public let from: String
    /// The version it is migrated to.
    public let to: String
    /// The steps, from version to version.
    public var steps: [Step]
    /// True for a dry run: the migration was performed on a scratch copy of the store, which was then removed.
    public var isDryRun = false
    /// Values the migration drops, which it does only when allowed (`allowLoss`).
    public var dropped: Int { steps.reduce(0) { $0 + $1.account.dropped } }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        guard !steps.isEmpty else { return "the store is at version '\(to)' already: nothing to migrate\n" }
        let source = from == PersistentStoreCoordinator.cachedModelName ? from : "version '\(from)'"
        var text = "migration of the store from \(source) to '\(to)' in \(steps.count) step\(steps.count == 1 ? "" : "s"):\n"
        for (i, step) in steps.enumerated() {
            let mapped = step.mapping.entityMappings.contains { $0.name != nil }
            text += "\(i + 1). '\(step.from)' → '\(step.to)' (\(mapped ? "mapping model" : "inferred"))\n"
            for line in step.mapping.changes { text += "   \(line)\n" }
            let rows = step.rows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            text += "   rows: \(rows.isEmpty ? "none" : rows)\n"
            text += "   values: \(step.account)\n"
            if let history = step.history { text += "   history: \(history)\n" }
        }
        if isDryRun {
            text += "dry run: the whole migration ran on a scratch copy of the store, which is gone; the store is as it was"
            text += dropped > 0 ? " (it drops \(dropped) values: the migration runs only with --allow-loss)\n" : "\n"
        }
        return text
    }
}

extension PersistentStoreCoordinator {
    /// Migrates the store at `store` to a version of the model bundle (`.xcdatamodeld` or `.momd`): the bundle's
    /// current version, or `version`. The store's own version is found as opening finds it; then the store goes
    /// through every version in between, each step inferred (`MappingModel.inferred`). Every step writes a new store
    /// beside the old one in one transaction; the old file is replaced (an atomic rename) only when all succeeded, so
    /// an interrupted migration leaves the old store as it was. `policies` add custom code to the steps that need it
    /// (`EntityMigrationPolicy`). Each step's values dropped, defaulted and converted are counted (`MigrationAccount`);
    /// with `allowLoss` false, a step that drops values stops the migration before it writes (Core Data's lightweight
    /// migration drops them, as the default does). With `dryRun`, the whole migration runs on a scratch copy, which is
    /// removed: the plan and its account, or the error the migration would meet, and the store is left as it was.
    @discardableResult
    public static func migrateStore(at store: URL, toVersionOf bundle: URL, version: String? = nil, from sourceVersion: String? = nil,
                                    dryRun: Bool = false, allowLoss: Bool = true,
                                    mappings: [MappingModel] = [], policies: MigrationPolicies = MigrationPolicies(),
                                    debug: Bool = ProbeConfiguration.environment.migrationDebug, probes: Probes = .shared) throws -> MigrationPlan {
        func note(_ text: String) {
            if debug { StandardError.write("Faultline: annotation: migration: \(text)") }
        }
        probes.beginOperation(.migration)
        defer { probes.endOperation() }
        let versions = try ManagedObjectModel.versions(ofBundle: bundle)
        let ordered = versions.sorted { $0.name.compare($1.name, options: [.numeric]) == .orderedAscending }
        let target = version ?? versions[0].name
        guard let targetIndex = ordered.firstIndex(where: { $0.name == target }) else {
            throw MigrationError(problem: "the bundle has no version '\(target)' (it has \(ordered.map { "'\($0.name)'" }.joined(separator: ", ")))")
        }
        let sourceName: String
        var cached: ManagedObjectModel?
        var opened: ManagedObjectModel?
        if sourceVersion == cachedModelName {
            // The dry run's copy, migrated from the model the store caches.
            cached = try cachedModel(of: store, probes: probes)
            sourceName = cachedModelName
        } else if let sourceVersion {
            // The user's word for the store's version: it must still fit the store's tables.
            guard let model = versions.first(where: { $0.name == sourceVersion })?.model else {
                throw MigrationError(problem: "the bundle has no version '\(sourceVersion)' (it has \(ordered.map { "'\($0.name)'" }.joined(separator: ", ")))")
            }
            try PersistentStoreCoordinator(managedObjectModel: model, probes: probes).addPersistentStore(at: store, options: .readOnly)
            sourceName = sourceVersion
        } else {
            // One identification for `info` and `migrate` (`identifyStore`).
            let found = try identifyStore(store, withVersionOf: bundle, options: .readOnly, probes: probes)
            switch found.identifiedBy {
            case .hashes:
                // The steps read with the model that opened the store: it has the store's entity numbers and tables.
                opened = found.coordinator.managedObjectModel
                sourceName = found.version!
            case .cache:
                // No version's hashes are the store's: Core Data migrates from the model the store caches, when that
                // model is the one that wrote it (its hashes are the store's).
                cached = found.coordinator.managedObjectModel
                sourceName = cachedModelName
            case .layout:
                // A version found by its layout alone is a guess (versions may share a layout): nothing is migrated from it.
                throw MigrationError(problem: "the store's version was found by its tables alone ('\(found.version!)' fits them, but the store's NSStoreModelVersionHashes are no version's, and it caches no model whose hashes are): a guess; give the version it was made with (--from VERSION) to migrate from it")
            }
        }
        var steps: [(from: (name: String, model: ManagedObjectModel), to: (name: String, model: ManagedObjectModel))] = []
        if let cached {
            // One inferred step, from the cached model straight to the target, as Core Data takes it.
            if cached.coreDataVersionHashes != ordered[targetIndex].model.coreDataVersionHashes {
                steps = [((cachedModelName, cached), ordered[targetIndex])]
            }
        } else {
            guard let sourceIndex = ordered.firstIndex(where: { $0.name == sourceName }) else { throw MigrationError(problem: "no version '\(sourceName)'") }
            guard sourceIndex <= targetIndex else {
                throw MigrationError(problem: "the store is at version '\(sourceName)', which comes after '\(target)'; migrating back is not supported")
            }
            steps = (sourceIndex..<targetIndex).map { (ordered[$0], ordered[$0 + 1]) }
            if let opened, !steps.isEmpty { steps[0].from = (sourceName, opened) }
        }
        var models = Dictionary(uniqueKeysWithValues: versions.map { ($0.name, $0.model) })
        if let cached { models[cachedModelName] = cached }
        if let opened { models[sourceName] = opened }
        return try migrate(store, steps: steps, from: sourceName, to: target, models: models, dryRun: dryRun, allowLoss: allowLoss,
                           mappings: mappings, policies: policies, debug: debug, probes: probes) { copy in
            try migrateStore(at: copy, toVersionOf: bundle, version: version, from: sourceName, allowLoss: true,
                             mappings: mappings, policies: policies, debug: debug, probes: .disabled)
        }
    }

    /// Migrates the store at `store`, made with `sourceModel`, to `destinationModel` in one step — inferred, or by the
    /// first of `mappings` that fits — as Core Data's `NSMigrationManager(sourceModel:destinationModel:)` does; the
    /// models' `versionName`s (else "source" and "destination") name them in the plan. The store must fit
    /// `sourceModel` (else the error says what differs). As `migrateStore(at:toVersionOf:)` in all else: the old file
    /// is replaced only when the step succeeded, values dropped need `allowLoss`, a dry run works on a scratch copy.
    @discardableResult
    public static func migrateStore(at store: URL, from sourceModel: ManagedObjectModel, to destinationModel: ManagedObjectModel,
                                    dryRun: Bool = false, allowLoss: Bool = true, mappings: [MappingModel] = [],
                                    policies: MigrationPolicies = MigrationPolicies(),
                                    debug: Bool = ProbeConfiguration.environment.migrationDebug, probes: Probes = .shared) throws -> MigrationPlan {
        probes.beginOperation(.migration)
        defer { probes.endOperation() }
        let from = sourceModel.versionName ?? "source", to = destinationModel.versionName ?? "destination"
        guard from != to else { throw MigrationError(problem: "the source and destination models are both named '\(from)'") }
        try PersistentStoreCoordinator(managedObjectModel: sourceModel, probes: probes).addPersistentStore(at: store, options: .readOnly)
        let steps = sourceModel.coreDataVersionHashes == destinationModel.coreDataVersionHashes ? [] : [((from, sourceModel), (to, destinationModel))]
        return try migrate(store, steps: steps, from: from, to: to, models: [from: sourceModel, to: destinationModel], dryRun: dryRun,
                           allowLoss: allowLoss, mappings: mappings, policies: policies, debug: debug, probes: probes) { copy in
            try migrateStore(at: copy, from: sourceModel, to: destinationModel, allowLoss: true, mappings: mappings, policies: policies,
                             debug: debug, probes: .disabled)
        }
    }

    /// The steps from the store's model to the target, planned and then run (or, for a dry run, run by `rerun` on a
    /// scratch copy).
    private static func migrate(_ store: URL, steps: [(from: (name: String, model: ManagedObjectModel), to: (name: String, model: ManagedObjectModel))],
                                from sourceName: String, to target: String, models: [String: ManagedObjectModel], dryRun: Bool, allowLoss: Bool,
                                mappings: [MappingModel], policies: MigrationPolicies, debug: Bool, probes: Probes,
                                rerun: (URL) throws -> MigrationPlan) throws -> MigrationPlan {
        func note(_ text: String) {
            if debug { StandardError.write("Faultline: annotation: migration: \(text)") }
        }
        var plan = MigrationPlan(from: sourceName, to: target, steps: [])
        guard !steps.isEmpty else { return plan }
        var unused = mappings
        for (from, to) in steps {
            let mapping: MappingModel
            let withPolicies = Set(policies.policies(migratingTo: to.name).keys)
            do {
                if let index = unused.firstIndex(where: { $0.fits(from: from.model, to: to.model) }) {
                    // A mapping model serves one step: the first whose versions it fits.
                    mapping = try unused.remove(at: index).resolved(from: from.model, to: to.model)
                    for entityMapping in mapping.entityMappings {
                        guard let className = entityMapping.policyClassName else { continue }
                        guard policies.byClassName[className] != nil || dryRun else {
                            throw MigrationError(entity: entityMapping.destination, problem: "mapping \(entityMapping.name ?? "?") names the policy class \(className); give it in Swift (MigrationPolicies.set(_:forClassName:))")
                        }
                    }
                } else {
                    mapping = try MappingModel.inferred(from: from.model, to: to.model, withPolicies: withPolicies)
                }
            } catch let error as MigrationError {
                throw MigrationError(entity: error.entity, property: error.property, problem: "from '\(from.name)' to '\(to.name)': \(error.problem)")
            }
            plan.steps.append(.init(from: from.name, to: to.name, mapping: mapping, rows: [:]))
        }
        if dryRun {
            // The whole migration, on a scratch copy: the dry run meets every error the migration would.
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-dry-run-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let copy = folder.appendingPathComponent(store.lastPathComponent)
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: store.path + suffix) {
                try FileManager.default.copyItem(atPath: store.path + suffix, toPath: copy.path + suffix)
            }
            let support = ExternalBinaryStorage.folder(ofStoreAt: store.path).deletingLastPathComponent()
            if FileManager.default.fileExists(atPath: support.path) {
                try FileManager.default.copyItem(at: support, to: ExternalBinaryStorage.folder(ofStoreAt: copy.path).deletingLastPathComponent())
            }
            var performed = try rerun(copy)
            performed.isDryRun = true
            return performed
        }
        // A row with a key Core Data never writes would be left behind (an unknown Z_ENT) or copied as it is: the
        // store is refused first, naming it (the dry run meets this on its copy).
        try StoredKeyScan.check(ReadOnlyOpening(path: store.path).connect(reportingAs: store.path), model: models[sourceName]!)
        try checkpoint(store)
        let uuid = try ReadOnlyOpening(path: store.path).connect(reportingAs: store.path).readUUID(path: store.path)
        var input = store
        var scratch: [URL] = []
        defer { for file in scratch { removeStoreFiles(file) } }
        for i in plan.steps.indices {
            let output = store.deletingLastPathComponent().appendingPathComponent(".\(store.lastPathComponent).migrating-\(i + 1)")
            removeStoreFiles(output)
            scratch.append(output)
            var stepPolicies = policies.policies(migratingTo: plan.steps[i].to)
            for entityMapping in plan.steps[i].mapping.entityMappings {
                if let className = entityMapping.policyClassName, let source = entityMapping.source, let policy = policies.byClassName[className] {
                    stepPolicies[source] = policy
                }
            }
            var step = MigrationStep(source: models[plan.steps[i].from]!, destination: models[plan.steps[i].to]!, mapping: plan.steps[i].mapping,
                                     policies: stepPolicies, versions: (plan.steps[i].from, plan.steps[i].to))
            note("step \(i + 1) of \(plan.steps.count): '\(plan.steps[i].from)' → '\(plan.steps[i].to)' (inferred\(stepPolicies.isEmpty ? "" : ", with policies for \(stepPolicies.keys.sorted().joined(separator: ", "))")), writing \(output.lastPathComponent)")
            let started = ProbeClock.now()
            do {
                let reader = try ReadOnlyOpening(path: input.path).connect(reportingAs: input.path)
                plan.steps[i].account = try MigrationAccount.count(plan.steps[i].mapping, source: models[plan.steps[i].from]!, destination: models[plan.steps[i].to]!, in: reader,
                                                                   policies: Set(stepPolicies.keys))
                guard allowLoss || plan.steps[i].account.dropped == 0 else {
                    throw MigrationError(problem: "the migration would drop values (\(plan.steps[i].account)); nothing was written: migrate with --allow-loss to drop them")
                }
                try step.run(reading: reader, uuid: uuid, into: output)
            } catch let error as MigrationError {
                throw MigrationError(entity: error.entity, property: error.property, problem: "from '\(plan.steps[i].from)' to '\(plan.steps[i].to)': \(error.problem)")
            }
            plan.steps[i].rows = step.copied
            plan.steps[i].history = step.history
            for (entity, rows) in step.copied.sorted(by: { $0.key < $1.key }) {
                note("\(entity): \(rows) rows copied")
                if probes.isEnabled, let cost = step.costs[entity] {
                    probes.record(.migration(MigrationEvent(step: i + 1, from: plan.steps[i].from, to: plan.steps[i].to, entity: entity,
                                                            rows: rows, statements: cost.statements, duration: cost.seconds)))
                }
            }
            note(String(format: "step \(i + 1) done in %.4fs", ProbeClock.seconds(started, ProbeClock.now())))
            input = output
        }
        // The old store's WAL is empty after the checkpoint; its -wal and -shm must not outlive it beside the new file.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
        guard rename(input.path, store.path) == 0 else {
            throw StoreError.notAStore(path: store.path, detail: "the migrated store could not replace it: \(String(cString: strerror(errno)))")
        }
        note("\(store.lastPathComponent) replaced by the version-'\(target)' store")
        return plan
    }

    /// The name a migration's plan gives the model a store caches, when it migrates from it.
    public static let cachedModelName = "the model the store caches"

    /// The model `store` caches, when it is the one that wrote the store (its Core Data hashes are the store's
    /// `NSStoreModelVersionHashes`) and it opens the store.
    static func cachedModel(of store: URL, probes: Probes) throws -> ManagedObjectModel {
        guard let model = try ManagedObjectModel.cachedInStore(at: store) else {
            throw MigrationError(problem: "the store caches no model (Z_MODELCACHE)")
        }
        let hashes = try metadataForPersistentStore(at: store)["NSStoreModelVersionHashes"] as? [String: Data]
        guard hashes == model.coreDataVersionHashes else {
            throw MigrationError(problem: "the model the store caches is not the one that wrote it (its hashes are not the store's)")
        }
        try PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled).addPersistentStore(at: store, options: .readOnly)
        model.versionName = cachedModelName
        return model
    }

    /// Writes a WAL store's `-wal` into the file, so that the file alone holds the store.
    private static func checkpoint(_ store: URL) throws {
        guard FileManager.default.fileExists(atPath: store.path + "-wal") else { return }
        let connection: SQLiteConnection
        do { connection = try SQLiteConnection(path: store.path, create: false) } catch let error as SQLiteError {
            throw StoreError.sqlite(path: store.path, error: error)
        }
        do { try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") } catch let error as SQLiteError {
            throw StoreError.sqlite(path: store.path, error: error)
        }
    }

    private static func removeStoreFiles(_ url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }
}

extension SQLiteConnection {
    /// The store's `Z_UUID`.
    func readUUID(path: String) throws -> String {
        guard let (uuid, _) = try StoreMetadata.row(of: self) else { throw StoreError.notAStore(path: path, detail: "its Z_METADATA row is missing") }
        return uuid
    }
}
