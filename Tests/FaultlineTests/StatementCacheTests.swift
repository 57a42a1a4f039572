@testable import Faultline
import Foundation
import XCTest

final class StatementCacheTests: XCTestCase {
    /// A connection finds a prepared statement by its text: the same statement for the same text, whatever string
    /// holds it, and another for another text, across more texts than it keeps near at hand; each comes back
    /// reset, to run from its start.
    func testStatementsAreFoundByTheirText() throws {
        let dir = TemporaryDirectory()
        let connection = try SQLiteConnection(path: dir.file("s.sqlite").path, create: true)
        let texts = (0..<7).map { "SELECT \($0) + ? AS the_sum_of_two_numbers" }
        let first = try texts.map { try connection.cachedStatement($0) }
        XCTAssertEqual(Set(first.map(ObjectIdentifier.init)).count, texts.count)
        for round in 0..<3 {
            for (i, text) in texts.enumerated().reversed() {
                // Round 1 asks with the same texts in strings of their own.
                let sql = round == 1 ? String(decoding: Array(text.utf8), as: UTF8.self) : text
                let statement = try connection.cachedStatement(sql)
                XCTAssertTrue(statement === first[i], "\(text), round \(round)")
                statement.bind(Int64(round), at: 1)
                XCTAssertTrue(try statement.step())
                XCTAssertEqual(statement.int64(at: 0), Int64(i + round))
            }
        }
        // Left after its first row, a statement comes back from its start.
        let values = try connection.cachedStatement("SELECT value FROM json_each('[1,2,3]')")
        XCTAssertTrue(try values.step())
        XCTAssertTrue(try values.step())
        XCTAssertEqual(values.int64(at: 0), 2)
        let again = try connection.cachedStatement("SELECT value FROM json_each('[1,2,3]')")
        XCTAssertTrue(again === values)
        XCTAssertTrue(try again.step())
        XCTAssertEqual(again.int64(at: 0), 1)
        XCTAssertEqual(connection.statementCount, texts.count * 4 + 2)
    }
}
