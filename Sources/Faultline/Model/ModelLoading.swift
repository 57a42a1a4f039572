import Foundation

extension ManagedObjectModel {
    /// Loads a model from a file: a JSON model (`.json`), an Xcode `.xcdatamodeld` bundle (its current version),
    /// an `.xcdatamodel` folder, or a bare `contents` XML file.
    public convenience init(contentsOf url: URL) throws {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ModelError(source: path, problem: "no such file or folder")
        }
        if isDirectory.boolValue {
            switch url.pathExtension {
            case "xcdatamodeld":
                let version = try Self.currentVersion(ofBundle: url)
                try self.init(xcodeContentsOf: version.appendingPathComponent("contents"), source: path)
                bundle = url
                versionName = version.deletingPathExtension().lastPathComponent
            case "xcdatamodel":
                try self.init(xcodeContentsOf: url.appendingPathComponent("contents"), source: path)
            case "momd":
                let version = try Self.currentVersion(ofBundle: url)
                try self.init(compiledModel: try Self.read(version, source: path), source: version.path)
                bundle = url
                versionName = version.deletingPathExtension().lastPathComponent
            default:
                throw ModelError(source: path, problem: "a folder must be an .xcdatamodeld or .momd bundle, or an .xcdatamodel")
            }
            return
        }
        let data = try Self.read(url, source: path)
        if url.pathExtension == "mom" || BinaryPropertyList.isBinaryPropertyList(data) {
            try self.init(compiledModel: data, source: path)
            return
        }
        let firstByte = data.first { !($0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 || $0 == 0xef || $0 == 0xbb || $0 == 0xbf) }
        if url.pathExtension == "json" || firstByte == UInt8(ascii: "{") {
            try self.init(jsonData: data, source: path)
        } else {
            try self.init(xcodeContents: data, source: path)
        }
    }

    private static func read(_ url: URL, source: String) throws -> Data {
        do { return try InputFile.read(url.path) } catch {
            throw ModelError(source: source, problem: "\(error)")
        }
    }

    private convenience init(xcodeContentsOf url: URL, source: String) throws {
        guard let data = try? Data(contentsOf: url) else {
            throw ModelError(source: source, problem: "missing '\(url.lastPathComponent)' file at \(url.path)")
        }
        try self.init(xcodeContents: data, source: source)
    }

    /// The current `.xcdatamodel` of an `.xcdatamodeld` bundle: the one `.xccurrentversion` names, else the only
    /// (or, by name, last) version in the bundle. For a compiled `.momd`, the `.mom` its `VersionInfo.plist` names.
    public static func currentVersion(ofBundle url: URL) throws -> URL {
        if url.pathExtension == "momd" { return try CompiledBundle(url).current }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
            .filter { $0.hasSuffix(".xcdatamodel") }.sorted()
        let marker = url.appendingPathComponent(".xccurrentversion")
        if let data = try? Data(contentsOf: marker) {
            guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
                  let name = plist["_XCCurrentVersionName"] as? String else {
                throw ModelError(source: url.path, problem: ".xccurrentversion is not a property list with _XCCurrentVersionName")
            }
            guard versions.contains(name) else {
                throw ModelError(source: url.path, problem: ".xccurrentversion names '\(name)', which is not in the bundle")
            }
            return url.appendingPathComponent(name)
        }
        guard let last = versions.last else {
            throw ModelError(source: url.path, problem: "the bundle holds no .xcdatamodel")
        }
        return url.appendingPathComponent(last)
    }
}
