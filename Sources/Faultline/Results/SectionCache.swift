import Foundation
import Synchronization

/// A fetched results controller's persistent section cache (Core Data's `cacheName`): the sections' names, index
/// titles and counts, with what they were computed from — the request (entity, predicate, sort, section key path),
/// the store, and the rows' fingerprint (count, total of versions, total of keys). A cache is used only when all of
/// it matches, so a request changed without `deleteCache(withName:)`, or rows another program changed, rebuild it
/// rather than show wrong sections (Core Data documents the first; the second it leaves to the program). One JSON
/// file per name in `FetchedResultsController.cacheDirectory`.
struct SectionCache: Codable, Equatable {
    static let format = 1

    struct Section: Codable, Equatable {
        let name: String
        let indexTitle: String?
        let count: Int
    }

    var format = SectionCache.format
    let request: String
    let store: String
    let fingerprint: [Double]
    let sections: [Section]

    /// Where caches are written: `$XDG_CACHE_HOME/faultline/SectionInfoCaches` (else `~/.cache/…`).
    static let directory = Mutex<URL>(defaultDirectory())

    private static func defaultDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("faultline/SectionInfoCaches", isDirectory: true)
    }

    /// The file of the cache named `name`: the name percent-encoded, so that any name is one file in the directory.
    static func file(named name: String) -> URL {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
        var encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "cache"
        if encoded.hasPrefix(".") { encoded = "%2E" + encoded.dropFirst() }
        return directory.withLock { $0 }.appendingPathComponent(encoded + ".json")
    }

    /// The cache named `name`, or nil when there is none or it cannot be read (it is then rebuilt).
    static func load(named name: String) -> SectionCache? {
        guard let data = try? Data(contentsOf: file(named: name), options: .mappedIfSafe), data.count <= maximumBytes,
              let cache = try? JSONDecoder().decode(SectionCache.self, from: data), cache.format == format else { return nil }
        return cache
    }

    /// Writes the cache (atomically). A cache that cannot be written is only a cost: the sections are recomputed next
    /// time; the error is returned for the probes to say.
    func write(named name: String) -> Error? {
        do {
            let url = SectionCache.file(named: name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try JSONEncoder().encode(self).write(to: url, options: .atomic)
            return nil
        } catch {
            return error
        }
    }

    /// A cache larger than this is not read (it would be a damaged or foreign file): 64 MB.
    static let maximumBytes = 64 << 20
}

extension FetchedResultsController {
    /// The folder section caches are written to (`$XDG_CACHE_HOME/faultline/SectionInfoCaches` by default); Core
    /// Data's is private to the app. Set it before the controllers that use caches fetch.
    public static var cacheDirectory: URL {
        get { SectionCache.directory.withLock { $0 } }
        set { SectionCache.directory.withLock { $0 = newValue } }
    }

    /// Deletes the section cache named `name`, or every cache when `name` is nil (Core Data's
    /// `deleteCache(withName:)`). Call it before changing a cached controller's request, as Core Data asks (a
    /// changed request is also detected and rebuilds the cache).
    public static func deleteCache(withName name: String?) {
        let manager = FileManager.default
        if let name {
            try? manager.removeItem(at: SectionCache.file(named: name))
            return
        }
        let directory = cacheDirectory
        for file in (try? manager.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? [] where file.pathExtension == "json" {
            try? manager.removeItem(at: file)
        }
    }
}
