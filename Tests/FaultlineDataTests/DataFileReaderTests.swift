import Foundation
import XCTest
import Faultline
@testable import FaultlineData

/// The data file read record by record: the same records whatever the pieces the file comes in, its outline checked
/// with the line and column of a mistake, records kept within their limits.
final class DataFileReaderTests: XCTestCase {
    private func events(_ text: String, piece: Int) throws -> [String] {
        var reader = DataFileReader(file: "data.json")
        var seen: [String] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + piece)
            try bytes[start..<end].withUnsafeBytes { buffer in
                try reader.consume(buffer) { event in
                    switch event {
                    case .entity(let name): seen.append("entity \(name)")
                    case .record(let text, let position): seen.append("#\(position) \(String(decoding: text, as: UTF8.self))")
                    }
                }
            }
            start = end
        }
        try reader.finish()
        return seen
    }

    func testRecordsAreTheSameWhateverThePiecesTheFileComesIn() throws {
        let text = "\u{FEFF}" + #"""
        { "Dog" : [ {"@id": "a \"quoted\" }{ name", "tags": [{"x": [1, {"y": "]"}]}]} ,
                    {"name": "B\\"} ],
          "Walk": [],
          "Cat\u00e9": [{}] }
        """#
        let whole = try events(text, piece: 1 << 20)
        XCTAssertEqual(whole, [
            "entity Dog",
            #"#1 {"@id": "a \"quoted\" }{ name", "tags": [{"x": [1, {"y": "]"}]}]}"#,
            #"#2 {"name": "B\\"}"#,
            "entity Walk",
            "entity Caté",
            "#1 {}",
        ])
        for piece in [1, 2, 3, 7] { XCTAssertEqual(try events(text, piece: piece), whole, "pieces of \(piece) bytes") }
    }

    func testTheOutlineIsCheckedWithWhereTheMistakeIs() throws {
        let cases: [(String, String)] = [
            ("", "data 'data.json': not valid JSON at line 1, column 0: the file is empty"),
            ("[1]", "data 'data.json': the top level must be an object of entity names to arrays of records"),
            (#"{"Dog": {}}"#, "data 'data.json', entity 'Dog': must be an array of records"),
            (#"{"Dog": [{}, 3]}"#, "data 'data.json', entity 'Dog', record #2: must be an object"),
            ("{\"Dog\": [\n  {\"name\": \"x\"}\n  {}]}", "data 'data.json': not valid JSON at line 3, column 3: unexpected '{'"),
            (#"{"Dog": [{"name": "x"}"#, "data 'data.json': not valid JSON at line 1, column 22: the file ends inside its top-level object"),
            (#"{"Dog": [{"name": "x"]}"#, "data 'data.json': not valid JSON at line 1, column 23: unexpected '}'"),
            (#"{"Dog": [{"name": "x"#, "data 'data.json': not valid JSON at line 1, column 20: the file ends inside its record #1"),
            (#"{"Dog": []} {}"#, "data 'data.json': not valid JSON at line 1, column 13: text after the top-level object"),
            (#"{"Dog": [], }"#, "data 'data.json': not valid JSON at line 1, column 13: unexpected '}'"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try events(text, piece: 4), text) { XCTAssertEqual("\($0)", expected, text) }
        }
    }

    func testInvalidUTF8AndOversizedRecordsAreNamedErrors() throws {
        func failure(_ bytes: [UInt8]) -> String {
            var reader = DataFileReader(file: "data.json")
            do {
                try bytes.withUnsafeBytes { try reader.consume($0) { _ in } }
                try reader.finish()
                return "no error"
            } catch { return "\(error)" }
        }
        XCTAssertEqual(failure(Array(#"{""#.utf8) + [0xFF, 0xFE] + Array(#"": []}"#.utf8)),
                       "data 'data.json': not valid JSON at line 1, column 5: an entity name is not a valid JSON string")
        XCTAssertEqual(failure(Array("{\"Dog\" ".utf8) + [0xC3]), "data 'data.json': not valid JSON at line 1, column 8: unexpected byte 0xC3")
        let long = Array(#"{"Dog": [{"name": ""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: Limits.dataRecordBytes) + Array(#""}]}"#.utf8)
        XCTAssertEqual(failure(long), "data 'data.json', entity 'Dog', record #1: the record is longer than \(Limits.dataRecordBytes) bytes (Limits.dataRecordBytes)")
    }

    func testARecordNestedTooDeeplyIsRefusedNamingTheLimit() throws {
        let deep = #"{"Dog": [{"a": "# + String(repeating: "[", count: Limits.dataNestingDepth) + String(repeating: "]", count: Limits.dataNestingDepth) + "}]}"
        XCTAssertThrowsError(try events(deep, piece: 1 << 16)) { error in
            XCTAssertEqual("\(error)", "data 'data.json', entity 'Dog', record #1: nested deeper than \(Limits.dataNestingDepth) levels (Limits.dataNestingDepth)")
        }
        let fine = #"{"Dog": [{"a": "# + String(repeating: "[", count: Limits.dataNestingDepth - 1) + String(repeating: "]", count: Limits.dataNestingDepth - 1) + "}]}"
        XCTAssertEqual(try events(fine, piece: 1 << 16).count, 2)
    }
}
