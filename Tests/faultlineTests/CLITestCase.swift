import Foundation
import XCTest

/// Runs the real `faultline` binary, as a user would: each test in a folder of its own.
class CLITestCase: XCTestCase {
    /// `../shared/fixtures/coredata-stores` (absent on a machine without the fixtures: tests skip).
    var fixturesFolder: URL {
        var fixtures = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { fixtures.deleteLastPathComponent() }
        return fixtures.appendingPathComponent("shared/fixtures/coredata-stores")
    }

    /// A copy of a fixture store (with its -wal and -shm) in the test's folder, and its files' bytes; skips the test
    /// where the fixtures are absent.
    func copyFixtureStore(_ name: String) throws -> (path: String, files: [String: Data]) {
        let source = fixturesFolder.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: source.path) else { throw XCTSkip("../shared/fixtures is absent: \(name) is not checked") }
        let store = dir.appendingPathComponent(source.lastPathComponent).path
        var files: [String: Data] = [:]
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: store + suffix)
            files[suffix] = try Data(contentsOf: URL(fileURLWithPath: store + suffix))
        }
        return (store, files)
    }

    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    /// The built binary, beside the test bundle.
    var binary: URL {
        var url = Bundle(for: CLITestCase.self).bundleURL
        while url.pathComponents.count > 1 && !FileManager.default.fileExists(atPath: url.appendingPathComponent("faultline").path) {
            url.deleteLastPathComponent()
        }
        return url.appendingPathComponent("faultline")
    }

    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
        /// False when the process ended by a signal (a trap), not by exiting.
        var exited = true
    }

    /// Runs the binary in the test's folder. The child gets this process's environment less every inherited
    /// `FAULTLINE_*` variable (a developer's shell must not change what a test sees), plus `environment`.
    /// `standardOutput` or `standardError`, when given, replace the pipe the test reads (`/dev/full`, say).
    func run(_ arguments: [String], environment: [String: String] = [:], standardOutput: FileHandle? = nil,
             standardError: FileHandle? = nil) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = dir
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FAULTLINE_") }.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = standardOutput ?? out
        process.standardError = standardError ?? err
        try process.run()
        try? out.fileHandleForWriting.close()
        try? err.fileHandleForWriting.close()
        // Both pipes are drained at once: a child that fills one while the test waits on the other would hang.
        final class Box: @unchecked Sendable { var data = Data() }
        let errors = Box()
        let drained = DispatchSemaphore(value: 0)
        let reader = err.fileHandleForReading
        if standardError == nil {
            DispatchQueue.global().async {
                errors.data = reader.readDataToEndOfFile()
                drained.signal()
            }
        } else {
            drained.signal()
        }
        let stdout = standardOutput == nil ? out.fileHandleForReading.readDataToEndOfFile() : Data()
        drained.wait()
        let stderr = errors.data
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
                   exited: process.terminationReason == .exit)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The DogWalk model of seed 002 as an Xcode model bundle: Dog with ordered walks, Walk with its dog.
    func dogWalkBundle() throws -> String {
        let bundle = dir.appendingPathComponent("DogWalk.xcdatamodeld")
        let version = bundle.appendingPathComponent("DogWalk.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data("""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="11759" systemVersion="16D32" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Dog" representedClassName="Dog" syncable="YES" codeGenerationType="class">
                <attribute name="name" optional="YES" attributeType="String" syncable="YES"/>
                <relationship name="walks" optional="YES" toMany="YES" deletionRule="Nullify" ordered="YES" destinationEntity="Walk" inverseName="dog" inverseEntity="Walk" syncable="YES"/>
            </entity>
            <entity name="Walk" representedClassName="Walk" syncable="YES" codeGenerationType="class">
                <attribute name="date" optional="YES" attributeType="Date" usesScalarValueType="NO" syncable="YES"/>
                <relationship name="dog" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Dog" inverseName="walks" inverseEntity="Dog" syncable="YES"/>
            </entity>
        </model>
        """.utf8).write(to: version.appendingPathComponent("contents"))
        return bundle.path
    }
}
