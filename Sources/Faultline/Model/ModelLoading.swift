import Foundation

extension ManagedObjectModel {
    /// Core Data's `init?(contentsOf:)`: the model at `url`, or nil when it cannot be read (as Core Data, which
    /// says nothing of why; `init(loadingContentsOf:)` throws an error naming the file and the problem).
    public convenience init?(contentsOf url: URL) {
        do { try self.init(loadingContentsOf: url) } catch { return nil }
    }

    /// Loads a model from a file, or throws a `ModelError` naming the file and the problem: a JSON model (`.json`),
    /// an Xcode `.xcdatamodeld` bundle (its current version), an `.xcdatamodel` folder, a compiled `.momd` or
    /// `.mom`, or a bare `contents` XML file.
    public convenience init(loadingContentsOf url: URL) throws {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ModelError(source: path, problem: "no such file or folder")
        }
        if isDirectory.boolValue {
            switch url.pathExtension {
            case "xcdatamodeld":
                let version = try Self.currentVersion(ofBundle: url)
                try self.init(xcodeModelFolder: version, source: path)
                bundle = url
                versionName = version.deletingPathExtension().lastPathComponent
            case "xcdatamodel":
                try self.init(xcodeModelFolder: url, source: path)
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
        if Self.isXcodeThreeElements(data) {
            try self.init(xcodeThreeElements: data, source: path)
            return
        }
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

    /// An `.xcdatamodel` folder: its `contents` XML, or the `elements` archive of a model Xcode 3 saved.
    private convenience init(xcodeModelFolder folder: URL, source: String) throws {
        let contents = folder.appendingPathComponent("contents"), elements = folder.appendingPathComponent("elements")
        if !FileManager.default.fileExists(atPath: contents.path), FileManager.default.fileExists(atPath: elements.path) {
            try self.init(xcodeThreeElements: try Self.read(elements, source: source), source: source)
            return
        }
        guard let data = try? Data(contentsOf: contents) else {
            throw ModelError(source: source, problem: "missing 'contents' file at \(contents.path) (and no 'elements' archive of an Xcode 3 model)")
        }
        try self.init(xcodeContents: data, source: source)
    }

    /// A keyed archive whose root is an `XDPMModel`: the `elements` file of a model Xcode 3 saved.
    static func isXcodeThreeElements(_ data: Data) -> Bool {
        guard KeyedArchive.isKeyedArchive(data), let archive = try? KeyedArchive(data), let root = try? archive.resolve(archive.root) else { return false }
        return (try? archive.className(of: root)) == "XDPMModel"
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
