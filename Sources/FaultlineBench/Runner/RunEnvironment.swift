import Faultline
import Foundation

/// Facts about the machine and build, for the results file.
enum RunEnvironment {
    static var build: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    static var machine: MachineInfo {
        let info = ProcessInfo.processInfo
        return MachineInfo(host: info.hostName, os: info.operatingSystemVersionString,
                           processors: info.activeProcessorCount, memoryBytes: info.physicalMemory)
    }

    /// `git describe --always --dirty` of the current directory, or nil outside a checkout.
    static var revision: String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "describe", "--always", "--dirty"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    static func timestamp() -> String { ISO8601DateFormatter().string(from: Date()) }
}
