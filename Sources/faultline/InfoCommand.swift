import ArgumentParser
import Faultline
import Foundation

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show what a store holds: entities with their rows, the model version and how it was found, metadata, journal mode, persistent history, external storage.",
        discussion: """
        The version is found by Core Data's hashes (the store's NSStoreModelVersionHashes are the version's), from \
        the model the store caches (Z_MODELCACHE, without --model), or by the store's tables fitting it (layout: a \
        guess). The store is read, never written.
        """)

    @Argument(help: "The SQLite store file.")
    var store: String

    @Option(help: "The model: an .xcdatamodeld or .momd bundle (its versions are tried), or a model file; without it, the model the store caches.")
    var model: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        try reportingErrors("info") {
            guard FileManager.default.fileExists(atPath: store) else { throw ValidationError("no store at '\(store)'") }
            let url = URL(fileURLWithPath: store)
            var info: StoreInfo
            do {
                if let model, ["xcdatamodeld", "momd"].contains(URL(fileURLWithPath: model).pathExtension) {
                    // The same identification as `migrate`'s: a version by hashes, else the cached model that wrote the
                    // store (no version of the bundle did), else a version by layout.
                    let found = try PersistentStoreCoordinator.identifyStore(url, withVersionOf: URL(fileURLWithPath: model))
                    info = try StoreInfo(store: url, model: found.coordinator.managedObjectModel, version: found.version,
                                         identifiedBy: found.identifiedBy,
                                         modelSource: found.version == nil ? "the model the store caches (Z_MODELCACHE), which wrote it: no version of bundle \(model) did" : "bundle \(model)")
                } else if let model {
                    let coordinator = try openStore(store, model: model, readOnly: true)
                    let loaded = coordinator.managedObjectModel
                    info = try StoreInfo(store: url, model: loaded, version: loaded.versionName,
                                         identifiedBy: PersistentStoreCoordinator.identification(of: url, by: loaded), modelSource: "model \(model)")
                } else if let cached = try ManagedObjectModel.cachedInStore(at: url) {
                    let coordinator = PersistentStoreCoordinator(managedObjectModel: cached)
                    try coordinator.addPersistentStore(at: url, options: .readOnly)
                    let identifiers = (try? PersistentStoreCoordinator.metadataForPersistentStore(at: url))?["NSStoreModelVersionIdentifiers"] as? [String]
                    info = try StoreInfo(store: url, model: cached, version: identifiers?.first { !$0.isEmpty },
                                         identifiedBy: .cache, modelSource: "the model the store caches (Z_MODELCACHE)")
                } else {
                    info = try StoreInfo(store: url, modelProblem: "the store caches no model (Z_MODELCACHE is empty: Core Data before iOS 10 and macOS 10.12, or Faultline, wrote it); give --model")
                }
            } catch let error as StoreError {
                // A model that does not fit the store: what the store holds is still shown, from Z_PRIMARYKEY, with why.
                switch error {
                case .modelMismatch, .noMatchingModelVersion:
                    info = try StoreInfo(store: url, modelProblem: error.description)
                default:
                    throw error
                }
            }
            try Console.out(json ? try Self.json(info) : Self.text(info), terminator: "")
        }
    }

    static func identification(_ info: StoreInfo) -> String {
        switch info.identifiedBy ?? .layout {
        case .hashes: return "by its version hashes: the store's are the model's"
        case .cache: return "from the model the store caches, the one that wrote it"
        case .layout: return "by its tables fitting the model: a guess (the store's version hashes are not the model's)"
        }
    }

    static func text(_ info: StoreInfo) -> String {
        var out = "store: \(info.path)\n"
        out += "file: \(info.fileBytes) bytes, journal mode \(info.journalMode)"
        if let wal = info.walBytes { out += ", -wal \(wal) bytes" }
        out += "\nmodel: \(info.modelSource)"
        if info.identifiedBy == nil {
            out += "\nversion: not identified: no model could be used; the entities are Z_PRIMARYKEY's\n"
        } else {
            out += "\nversion: \(info.version.map { "'\($0)'" } ?? "unnamed"), identified \(identification(info))\n"
            if info.hashesAgree == false, !info.hashCaveats.isEmpty {
                out += "  note: hashed by a rule not verified on a real store: \(info.hashCaveats.joined(separator: "; "))\n"
            }
            if info.identifiedBy == .cache, info.hashesAgree == false {
                out += "  note: Core Data's hashes computed from the cached model are not the store's for \(info.entitiesWithOtherHashes.joined(separator: ", ")) (a model feature Faultline does not hash as Core Data does, or a cache left by another version)\n"
            }
        }
        out += "\nentities:\n"
        let hierarchy = ordered(info)
        let width = hierarchy.map { $0.entity.name.count + 2 * $0.depth }.max() ?? 0
        for (entity, depth) in hierarchy {
            let name = String(repeating: "  ", count: depth) + entity.name
            out += "  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  Z_ENT \(entity.number)  \(rows(entity.rows))"
            if !entity.subentities.isEmpty { out += " (\(entity.rowsWithSubentities) with its sub-entities)" }
            if entity.isAbstract { out += "  abstract" }
            out += "\n"
        }
        for unknown in info.unknownRows {
            out += "  \(unknown.table): \(rows(unknown.rows)) with Z_ENT \(unknown.number), which names no entity of the model\n"
        }
        out += "\npersistent history: " + (info.history.isEmpty ? "none" : info.history.map { "\($0.table) \(rows($0.rows))" }.joined(separator: ", "))
        out += "\nexternal storage: " + (info.externalStorage.map { "\($0.path) (\($0.files) files)" } ?? "none")
        out += "\n\nmetadata:\n"
        for (key, value) in info.metadata {
            let shown = key == "NSStoreModelVersionHashes" ? "\(value.components(separatedBy: ": ").count - 1) entity hashes (--json lists them)" : value
            out += "  \(key): \(shown)\n"
        }
        return out
    }

    static func rows(_ count: Int) -> String { count == 1 ? "1 row" : "\(count) rows" }

    /// Entities in their hierarchy's order — each root, then its sub-entities — with their depth. A damaged
    /// `Z_PRIMARYKEY` may repeat names or make parents a cycle: each entity is listed once, those no root reaches last.
    static func ordered(_ info: StoreInfo) -> [(entity: StoreInfo.Entity, depth: Int)] {
        var children: [String: [StoreInfo.Entity]] = [:]
        for entity in info.entities { if let parent = entity.parent { children[parent, default: []].append(entity) } }
        var result: [(entity: StoreInfo.Entity, depth: Int)] = []
        var listed: Set<Int> = []
        func walk(_ entity: StoreInfo.Entity, _ depth: Int) {
            guard depth <= Limits.inheritanceDepth, listed.insert(entity.number).inserted else { return }
            result.append((entity, depth))
            for child in children[entity.name] ?? [] { walk(child, depth + 1) }
        }
        for root in info.entities.filter({ $0.parent == nil }).sorted(by: { $0.number < $1.number }) { walk(root, 0) }
        for entity in info.entities where !listed.contains(entity.number) { walk(entity, 0) }
        return result
    }

    static func json(_ info: StoreInfo) throws -> String {
        var object: [String: Any] = [
            "path": info.path, "fileBytes": info.fileBytes, "journalMode": info.journalMode,
            "version": info.version as Any? ?? NSNull(), "identifiedBy": info.identifiedBy?.rawValue as Any? ?? NSNull(), "model": info.modelSource,
            "modelProblem": info.modelProblem as Any? ?? NSNull(), "hashesAgree": info.hashesAgree as Any? ?? NSNull(),
            "entitiesWithOtherHashes": info.entitiesWithOtherHashes, "hashCaveats": info.hashCaveats,
            "entities": ordered(info).map(\.entity).map { entity -> [String: Any] in
                ["name": entity.name, "number": entity.number, "parent": entity.parent as Any? ?? NSNull(), "subentities": entity.subentities,
                 "abstract": entity.isAbstract, "rows": entity.rows, "rowsWithSubentities": entity.rowsWithSubentities]
            },
            "unknownRows": info.unknownRows.map { ["table": $0.table, "entityNumber": $0.number, "rows": $0.rows] as [String: Any] },
            "history": info.history.map { ["table": $0.table, "rows": $0.rows] as [String: Any] },
            "metadata": Dictionary(uniqueKeysWithValues: info.metadata.map { ($0.key, $0.value) }),
        ]
        object["walBytes"] = info.walBytes.map { $0 as Any } ?? NSNull()
        object["externalStorage"] = info.externalStorage.map { ["path": $0.path, "files": $0.files] as Any } ?? NSNull()
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
