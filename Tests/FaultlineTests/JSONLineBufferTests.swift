@testable import Faultline
import Foundation
import XCTest

final class JSONLineBufferTests: XCTestCase {
    private func line(_ fill: (inout JSONLineBuffer) -> Void) -> String {
        var buffer = JSONLineBuffer()
        buffer.begin()
        fill(&buffer)
        buffer.endLine()
        return buffer.string
    }

    func testStringsAreEscapedAndParseBack() throws {
        let tricky = "say \"hi\"\\ tab\there\nnew line \u{01} café ✓"
        let text = line { $0.string("s", tricky); $0.strings("a", ["x", "\"y\""]); $0.optionalString("n", nil) }
        XCTAssertTrue(text.hasSuffix("}\n"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(object["s"] as? String, tricky)
        XCTAssertEqual(object["a"] as? [String], ["x", "\"y\""])
        XCTAssertTrue(object["n"] is NSNull)
        XCTAssertEqual(JSONLineBuffer.quote("a\"b"), "\"a\\\"b\"")
    }

    func testNumbersAreExact() {
        let text = line {
            $0.int("zero", 0); $0.int("seven", 7); $0.int("ten", 10); $0.int("big", 1_234_567); $0.int("negative", -3)
            $0.seconds("s0", 0); $0.seconds("s1", 1.5); $0.seconds("s2", 0.000012345); $0.seconds("s3", 12)
            $0.seconds("s4", 0.1); $0.seconds("inf", .infinity)
        }
        XCTAssertEqual(text, #"{"zero":0,"seven":7,"ten":10,"big":1234567,"negative":-3,"s0":0,"s1":1.5,"s2":0.000012345,"s3":12,"s4":0.1,"inf":null}"# + "\n")
    }

    /// Integers are written two digits at a time and seconds as nanoseconds with the trailing zeros dropped: every
    /// digit count, sign and rounding must match a plain formatting of the same number.
    func testNumbersMatchAPlainFormattingAtEveryLength() {
        var generator = SystemRandomNumberGenerator()
        var integers = [0, 9, 10, 99, 100, -1, -10, Int.max, Int.min, Int.max - 1, Int.min + 1]
        var power = 1
        for exponent in 1...18 {
            power *= 10
            let next = exponent < 18 ? power * 10 : Int.max
            integers += [power - 1, power, power + 1, -power, Int.random(in: power..<next, using: &generator)]
        }
        for value in integers {
            var buffer = JSONLineBuffer(capacity: 16)
            buffer.integer(value)
            XCTAssertEqual(buffer.string, String(value), "\(value)")
        }
        func plainSeconds(_ nanoseconds: Int) -> String {
            let fraction = String(nanoseconds % 1_000_000_000)
            let digits = String(repeating: "0", count: 9 - fraction.count) + fraction
            let trimmed = digits.reversed().drop { $0 == "0" }.reversed()
            return String(nanoseconds / 1_000_000_000) + (trimmed.isEmpty ? "" : "." + String(trimmed))
        }
        var nanoseconds = [0, 1, 9, 10, 100_000_000, 999_999_999, 1_000_000_000, 1_000_000_001, 12_345, 99_999_999_999_999]
        for _ in 0..<2_000 { nanoseconds.append(Int.random(in: 0..<100_000_000_000, using: &generator)) }
        for value in nanoseconds {
            var buffer = JSONLineBuffer(capacity: 16)
            buffer.secondsValue(Double(value) / 1e9)
            XCTAssertEqual(buffer.string, plainSeconds(value), "\(value) ns")
        }
    }

    /// Statement lines reuse the escaped form of SQL texts they saw lately: more distinct texts than the cache holds,
    /// in turn, must each come out as themselves.
    func testCachedSQLTextsComeOutAsThemselves() throws {
        let texts = (0..<40).map { "SELECT \"t\($0)\" FROM ZROW WHERE ZNAME = 'a\\b' -- \($0)" }
        var buffer = JSONLineBuffer()
        for round in 0..<3 {
            for text in texts.prefix(round == 1 ? 5 : 40) {
                buffer.removeAll()
                buffer.quotedSQL(text)
                XCTAssertEqual(buffer.string, JSONLineBuffer.quote(text))
            }
        }
    }

    func testNestedArraysOfObjectsAndCounts() throws {
        let text = line {
            $0.beginArray("nodes")
            for i in 0..<2 { $0.element(); $0.int("id", i); $0.string("detail", "d\(i)"); $0.end() }
            $0.endArray()
            $0.counts("inserted", ["B": 2, "A": 1])
            $0.placeholders("bindings", count: 2)
        }
        XCTAssertEqual(text, #"{"nodes":[{"id":0,"detail":"d0"},{"id":1,"detail":"d1"}],"inserted":{"A":1,"B":2},"bindings":["?","?"]}"# + "\n")
    }

    /// Long strings are scanned eight bytes at a time: every escapable character must be found wherever it falls.
    func testEscapesAreFoundAtEveryPositionOfLongStrings() throws {
        let plain = Array("SELECT t0.Z_PK FROM ZROW t0 WHERE t0.ZNAME = ".utf8)
        for special in ["\"", "\\", "\n", "\u{1F}", "\u{7F}", "é", "✓"] {
            for position in 0...plain.count {
                var bytes = plain
                bytes.insert(contentsOf: Array(special.utf8), at: position)
                let value = String(decoding: bytes, as: UTF8.self)
                let text = line { $0.string("s", value) }
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                XCTAssertEqual(object["s"] as? String, value, "\(special.debugDescription) at \(position)")
            }
        }
        XCTAssertEqual(JSONLineBuffer.quote("0123456789abcdef\u{01}"), #""0123456789abcdef\u0001""#)
        XCTAssertEqual(JSONLineBuffer.quote(""), #""""#)
    }
}
