import Foundation

/// Finding a model by name, as Core Data's `NSPersistentContainer(name:)` and `mergedModel(from:)` find theirs in the
/// app's bundles. On Linux a program has no app bundle: the search also looks where SwiftPM puts resources, where
/// the program is, the working directory, and `FAULTLINE_MODEL_PATH`.
extension ManagedObjectModel {
    /// The file names tried for a model named `name`, in order: compiled, Xcode's source, a single compiled version,
    /// Faultline's JSON.
    static func candidateNames(_ name: String) -> [String] {
        ["\(name).momd", "\(name).xcdatamodeld", "\(name).mom", "\(name).json"]
    }

    /// The folders searched, in order: `FAULTLINE_MODEL_PATH` (folders separated by `:`), each bundle's resources
    /// (the main bundle first), SwiftPM's resource bundles beside the executable (`*.resources`), the executable's
    /// folder, and the working directory.
    public static var modelSearchFolders: [URL] {
        var folders: [URL] = []
        if let path = ProcessInfo.processInfo.environment["FAULTLINE_MODEL_PATH"] {
            folders += path.split(separator: ":").map { URL(fileURLWithPath: String($0), isDirectory: true) }
        }
        for bundle in [Bundle.main] + Bundle.allBundles {
            if let resources = bundle.resourceURL { folders.append(resources) }
            folders.append(bundle.bundleURL)
        }
        let executableFolder = Bundle.main.executableURL?.deletingLastPathComponent()
        if let executableFolder {
            let entries = (try? FileManager.default.contentsOfDirectory(at: executableFolder, includingPropertiesForKeys: nil)) ?? []
            folders += entries.filter { $0.pathExtension == "resources" || $0.pathExtension == "bundle" }.sorted { $0.path < $1.path }
            folders.append(executableFolder)
        }
        folders.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
        var seen: Set<String> = []
        return folders.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }

    /// The first model file named `name` in `folders` (by default `modelSearchFolders`), or nil.
    public static func url(forModelNamed name: String, in folders: [URL] = modelSearchFolders) -> URL? {
        guard !name.isEmpty, !name.contains("/") else { return nil }
        for folder in folders {
            for candidate in candidateNames(name) {
                let url = folder.appendingPathComponent(candidate)
                if FileManager.default.fileExists(atPath: url.path) { return url }
            }
        }
        return nil
    }

    /// Core Data's `mergedModel(from:)`: one model made of every model in `bundles`' resources (nil: the search
    /// folders), or nil when there is none or they cannot be merged (two entities of one name).
    public static func mergedModel(from bundles: [Bundle]?) -> ManagedObjectModel? {
        let folders = bundles.map { $0.compactMap(\.resourceURL) + $0.map(\.bundleURL) } ?? modelSearchFolders
        var found: [URL] = []
        var seen: Set<String> = []
        for folder in folders {
            let entries = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
            for entry in entries.sorted(by: { $0.path < $1.path }) where ["momd", "xcdatamodeld", "mom"].contains(entry.pathExtension) {
                // One model per name: a compiled `.momd` and its `.xcdatamodeld` source are the same model.
                if seen.insert(entry.deletingPathExtension().lastPathComponent).inserted { found.append(entry) }
            }
        }
        let models = found.compactMap { ManagedObjectModel(contentsOf: $0) }
        guard let first = models.first else { return nil }
        guard models.count > 1 else { return first }
        return try? ManagedObjectModel(entities: models.flatMap(\.sourceEntities), source: "merged: " + found.map(\.lastPathComponent).joined(separator: ", "))
    }
}

/// Why `PersistentContainer(name:)` has no model.
struct ModelNotFound: Error, CustomStringConvertible {
    let name: String
    let folders: [URL]
    let failure: Error?

    var description: String {
        if let failure { return "the model named '\(name)' cannot be loaded: \(failure)" }
        let names = ManagedObjectModel.candidateNames(name).joined(separator: ", ")
        return "no model named '\(name)' (\(names)) in: " + folders.map(\.path).joined(separator: ", ") + " — set FAULTLINE_MODEL_PATH, or pass the model"
    }
}
