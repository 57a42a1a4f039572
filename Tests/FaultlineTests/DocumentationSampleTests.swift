import Foundation
import XCTest

/// The code samples of the DocC catalog (`Sources/Faultline/Faultline.docc`) type-check against the Faultline module
/// this build made: a sample that no longer compiles fails here, not in a reader's editor.
final class DocumentationSampleTests: XCTestCase {
    private var root: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }

    /// The folder of the build's Swift modules (beside the test bundle), if this build has one.
    private var modules: URL? {
        var url = URL(fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0]).resolvingSymlinksInPath()
        for _ in 0..<4 {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("Modules")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Faultline.swiftmodule").path) { return candidate }
        }
        return nil
    }

    /// Every ```swift block of every article, with its file and line.
    private func samples() throws -> [(file: String, line: Int, code: String)] {
        let catalog = root.appendingPathComponent("Sources/Faultline/Faultline.docc")
        var found: [(String, Int, String)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: catalog.path).sorted() where name.hasSuffix(".md") {
            let lines = try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8).components(separatedBy: "\n")
            var start: Int?
            var block: [String] = []
            for (i, line) in lines.enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if start == nil, trimmed == "```swift" {
                    start = i + 1
                    block = []
                } else if let first = start, trimmed == "```" {
                    found.append((name, first, block.joined(separator: "\n")))
                    start = nil
                } else if start != nil {
                    block.append(line)
                }
            }
        }
        return found
    }

    /// Every public declaration of the module has a doc comment (`///`), but a protocol's requirements implemented
    /// (`description`, `==`, `hash(into:)`, `rawValue`, `Codable`'s, a recorder's `record`…), which DocC documents
    /// from the protocol. Enum cases are not declared `public` one by one and are not checked here.
    func testEveryPublicDeclarationIsDocumented() throws {
        let witnesses = try NSRegularExpression(pattern: #"public (var description|var debugDescription|static func ==|static func <|func hash\(into|init\(rawValue|let rawValue|var rawValue|func encode\(to|init\(from decoder|func makeIterator|var errorDescription|func flush\(\)|func record\(_ event|static func decode\(|func encode\(\) ->)"#)
        let declaration = try NSRegularExpression(pattern: #"^(@\w+(\(.*?\))? )*(public|open) (?!=)"#)
        let sources = root.appendingPathComponent("Sources/Faultline")
        var undocumented: [String] = []
        var checked = 0
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files.sorted() {
            let lines = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
            for (i, line) in lines.enumerated() {
                let text = line.trimmingCharacters(in: .whitespaces)
                let range = NSRange(text.startIndex..., in: text)
                guard declaration.firstMatch(in: text, range: range) != nil, witnesses.firstMatch(in: text, range: range) == nil,
                      !text.hasPrefix("public extension") else { continue }
                checked += 1
                var above = i - 1
                while above >= 0 && lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("@") { above -= 1 }
                if above < 0 || !lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                    undocumented.append("Sources/Faultline/\(file):\(i + 1): \(text.prefix(100))")
                }
            }
        }
        XCTAssertGreaterThan(checked, 900, "the scan finds the module's public declarations")
        XCTAssertEqual(undocumented, [], "public declarations without a doc comment")
    }

    /// Every case of a public enum has a doc comment of its own (one case per line, so that DocC can show it).
    func testEveryCaseOfAPublicEnumIsDocumented() throws {
        let publicEnum = try NSRegularExpression(pattern: #"^(public |open )(indirect )?enum \w+"#)
        let sources = root.appendingPathComponent("Sources/Faultline")
        var undocumented: [String] = []
        var cases = 0
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files.sorted() {
            let lines = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8).components(separatedBy: "\n")
            var enums: [Int] = []   // the indentation of each public enum the line is in
            for (i, line) in lines.enumerated() {
                let text = line.trimmingCharacters(in: .whitespaces)
                let indent = line.prefix { $0 == " " }.count
                if publicEnum.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil {
                    if let open = text.firstIndex(of: "{"), text[open...].contains("}") {
                        undocumented.append("Sources/Faultline/\(file):\(i + 1): cases on the enum's line: \(text.prefix(80))")
                    } else {
                        enums.append(indent)
                    }
                    continue
                }
                if let last = enums.last, text == "}", indent == last { enums.removeLast(); continue }
                guard let last = enums.last, indent == last + 4, text.hasPrefix("case ") else { continue }
                cases += 1
                if text.contains(",") && !text.contains("(") { undocumented.append("Sources/Faultline/\(file):\(i + 1): several cases on one line: \(text.prefix(80))") }
                if i == 0 || !lines[i - 1].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                    undocumented.append("Sources/Faultline/\(file):\(i + 1): \(text.prefix(80))")
                }
            }
        }
        XCTAssertGreaterThan(cases, 150, "the scan finds the public enums' cases")
        XCTAssertEqual(undocumented, [], "enum cases without a doc comment of their own")
    }

    func testEveryCodeSampleInTheCatalogTypeChecks() throws {
        let samples = try samples()
        XCTAssertGreaterThanOrEqual(samples.count, 5, "the catalog's articles have their samples")
        guard let modules else { throw XCTSkip("no Modules folder beside the test bundle (\(CommandLine.arguments[0])): nothing to type-check against") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-doc-samples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (file, line, code) in samples {
            let source = scratch.appendingPathComponent("main.swift")
            try Data(code.utf8).write(to: source)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-I", modules.path,
                                 "-I", root.appendingPathComponent("Sources/CSQLite").path,
                                 "-I", root.appendingPathComponent("Sources/CZlib").path,
                                 "-I", root.appendingPathComponent("Sources/CProcessor").path, source.path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, "\(file):\(line): the sample does not compile:\n\(text)")
        }
    }
}
