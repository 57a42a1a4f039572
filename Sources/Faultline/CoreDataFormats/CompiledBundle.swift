import Foundation

/// An Xcode-compiled model bundle (`.momd`): one `.mom` per version, and `VersionInfo.plist` naming the current
/// version and giving each version's entity hashes as Core Data computes them.
struct CompiledBundle {
    let url: URL
    /// The `.mom` files, by version name.
    let versions: [String: URL]
    /// The current version's `.mom`.
    let current: URL
    /// Core Data's version hashes: version name → entity name → 32 bytes (empty when the plist has none).
    let versionHashes: [String: [String: Data]]

    init(_ url: URL) throws {
        self.url = url
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0.hasSuffix(".mom") }
        versions = Dictionary(uniqueKeysWithValues: names.map { (String($0.dropLast(4)), url.appendingPathComponent($0)) })
        var info: [String: Any] = [:]
        let infoURL = url.appendingPathComponent("VersionInfo.plist")
        if FileManager.default.fileExists(atPath: infoURL.path) {
            guard let data = try? InputFile.read(infoURL.path),
                  let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
                throw ModelError(source: url.path, problem: "VersionInfo.plist is not a property list")
            }
            info = plist
        }
        var hashes: [String: [String: Data]] = [:]
        for (version, entities) in info["NSManagedObjectModel_VersionHashes"] as? [String: Any] ?? [:] {
            hashes[version] = (entities as? [String: Any] ?? [:]).compactMapValues { $0 as? Data }
        }
        versionHashes = hashes
        if let name = info["NSManagedObjectModel_CurrentVersionName"] as? String {
            guard let file = versions[name] else {
                throw ModelError(source: url.path, problem: "VersionInfo.plist names version '\(name)', which has no \(name).mom in the bundle")
            }
            current = file
        } else if let last = names.sorted().last {
            current = url.appendingPathComponent(last)
        } else {
            throw ModelError(source: url.path, problem: "the bundle holds no .mom")
        }
    }
}
