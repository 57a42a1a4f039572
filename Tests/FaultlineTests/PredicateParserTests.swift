import Foundation
import XCTest
@testable import Faultline

final class PredicateParserTests: XCTestCase {
    struct FixturePredicate: Decodable {
        let format: String
        let args: [String]
        let invalid: String?
    }

    func fixturePredicates() throws -> [FixturePredicate] {
        guard let fixtures = fixturesDirectory() else { throw XCTSkip("../shared/fixtures is absent; fixture predicates not checked") }
        let text = try String(contentsOf: fixtures.appendingPathComponent("predicates.jsonl"), encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(FixturePredicate.self, from: Data($0.utf8)) }
    }

    func testEveryFixturePredicateParsesAndInvalidOnesFailCleanly() throws {
        let fixtures = try fixturePredicates()
        XCTAssertGreaterThanOrEqual(fixtures.count, 60)
        for fixture in fixtures {
            do {
                let predicate = try ObjectPredicate(unboundFormat: fixture.format)
                // The canonical form parses back to an equal predicate.
                XCTAssertEqual(try ObjectPredicate(unboundFormat: predicate.predicateFormat), predicate, "\(fixture.format) → \(predicate.predicateFormat)")
                assertTraceFormMatches(predicate)
                if fixture.invalid == "parse" { XCTFail("should not parse: \(fixture.format)") }
            } catch let error as ObjectPredicateError {
                XCTAssertEqual(error.kind, .syntax)
                XCTAssertNotNil(error.position)
                XCTAssertNotNil(fixture.invalid, "\(fixture.format): \(error)")
            }
        }
    }

    func testFixturePredicatesBindTypedArguments() throws {
        var bound = 0
        for fixture in try fixturePredicates() where fixture.invalid == nil {
            var values: [Any?] = []
            var bindable = true
            for kind in fixture.args {
                switch kind {
                case let k where k.hasPrefix("KeyPath"): values.append("name")
                case "String": values.append("text")
                case "Int", "Int64", "UInt", "NSNumber": values.append(3)
                case "Float": values.append(Float(2.5))
                case "Double": values.append(2.5)
                case "Bool": values.append(true)
                case "Date": values.append(Date(timeIntervalSinceReferenceDate: 0))
                case "UUID": values.append(UUID())
                case "Data": values.append(Data([1, 2]))
                case "nil", "NSNull": values.append(nil)
                case let k where k.hasPrefix("Array of") || k.hasPrefix("Set of"): values.append(["a", "b"])
                default: bindable = false
                }
            }
            guard bindable else { continue }
            do {
                _ = try ObjectPredicate(parsing: fixture.format, argumentArray: values)
                bound += 1
            } catch let error as ObjectPredicateError {
                // A literal '%@' in quotes consumes no argument: the extra argument is reported, not ignored.
                XCTAssertEqual(error.kind, .argument, "\(fixture.format): \(error)")
            }
        }
        XCTAssertGreaterThan(bound, 30)
    }

    func testOperatorsAndAlternateSpellings() throws {
        func same(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) throws {
            XCTAssertEqual(try ObjectPredicate(unboundFormat: a), try ObjectPredicate(unboundFormat: b), file: file, line: line)
        }
        try same("age = 3", "age == 3")
        try same("age => 3", "age >= 3")
        try same("age =< 3", "age <= 3")
        try same("age <> 3", "age != 3")
        try same("a > 1 && b < 2 || !(c == 3)", "(a > 1 AND b < 2) OR NOT c == 3")
        try same("x == nil", "x == NULL")
        try same("flag == yes", "flag == TRUE")
        try same("name contains [cd] 'x'", "name CONTAINS[cd] \"x\"")
        let p = try ObjectPredicate(parsing: "%K.%K > %lu AND name BEGINSWITH[cd] %@ AND age BETWEEN {%d, %d}", "mayor", "age", UInt(30), "Sa", 23, 28)
        XCTAssertEqual(p.predicateFormat, #"mayor.age > 30 AND name BEGINSWITH[cd] "Sa" AND age BETWEEN {23, 28}"#)
        XCTAssertEqual(try ObjectPredicate(parsing: "(SUBQUERY(%K, $x, $x.%K >= %lu).@count == 0)", "residents", "age", UInt(36)).predicateFormat,
                       "SUBQUERY(residents, $x, $x.age >= 36).@count == 0")
        XCTAssertEqual(try ObjectPredicate(parsing: "%K <= %a", "weight", Float(25.5)).predicateFormat, "weight <= 25.5")
        XCTAssertEqual(try ObjectPredicate(parsing: "%K <= %la", "weight", 25.6789012345679).predicateFormat, "weight <= 25.6789012345679")
        XCTAssertEqual(try ObjectPredicate(parsing: "hidden").predicateFormat, "hidden == YES")
        XCTAssertEqual(try ObjectPredicate(unboundFormat: "ANY visitors.age <= %lu AND self IN %@").predicateFormat, "ANY visitors.age <= %lu AND SELF IN %@")
        // Building in code gives the same predicate as parsing.
        let built = ObjectExpression.key("age") > 30 && ObjectExpression.key("name").beginsWith("Sa", [.caseInsensitive, .diacriticInsensitive])
        XCTAssertEqual(built, try ObjectPredicate(parsing: "age > 30 AND name BEGINSWITH[cd] 'Sa'"))
        XCTAssertEqual(ObjectExpression.key("age").isBetween(18, 65), try ObjectPredicate(parsing: "age BETWEEN {18, 65}"))
        XCTAssertEqual(ObjectExpression.key("name").isIn(.aggregate(["Rex", "Max"])), try ObjectPredicate(parsing: "name IN {'Rex', 'Max'}"))
    }

    func testRoundTripOfEveryConstruct() throws {
        let formats = [
            "TRUEPREDICATE", "FALSEPREDICATE", "NOT (a == 1 OR b == 2)", "a == 1 AND (b == 2 OR c == 3)",
            "name LIKE[c] \"a*b?\"", "name MATCHES \"[AB]+\"", "code IN {\"FRA\", \"FIN\"}", "ALL kids.age > 3", "NONE tags.name == \"x\"",
            "kids.@count >= 3", "kids.@avg.age < 10.5", "SUBQUERY(cars, $car, $car.maker == \"FIAT\" AND $car.year > 2000).@count > 2",
            "(price * 2) + 1 > 10", "a[FIRST] == 1", "FUNCTION(SELF, \"doubled:\", 21) == 42", "date > CAST(123.5, \"NSDate\")",
            "id == CAST(\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\", \"NSUUID\")", "#size > 1", "$x.name == $NAME", "-3 < x",
            "s == \"quote \\\" and \\\\ and \\n\"", "name == \"café ✓\"", "a.b.c BEGINSWITH[cd] \"x\" AND d < -2.5e-07",
        ]
        for format in formats {
            let p = try ObjectPredicate(unboundFormat: format)
            XCTAssertEqual(try ObjectPredicate(unboundFormat: p.predicateFormat), p, "\(format) → \(p.predicateFormat)")
            assertTraceFormMatches(p)
        }
    }

    /// Object IDs in a trace line: the permanent common case (written from a cached prefix, twice in one buffer),
    /// a temporary ID, and an entity name that the URI percent-encodes.
    func testObjectIDLiteralsInTheTraceMatchTheirFormat() {
        let plain = EntityDescription(name: "Row", properties: [])
        let accented = EntityDescription(name: "Café", properties: [])
        let store = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        let ids = [ManagedObjectID(entity: plain, key: 42, storeIdentifier: store),
                   ManagedObjectID(entity: plain, key: -7, storeIdentifier: nil),
                   ManagedObjectID(entity: accented, key: 3, storeIdentifier: store)]
        for id in ids {
            assertTraceFormMatches(.comparison(Comparison(.evaluatedObject, .equal, .constant(.objectID(id)))))
        }
        XCTAssertEqual(ids[0].uriString, "x-coredata://\(store)/Row/p42")
        XCTAssertEqual(ids[2].uriString, "x-coredata://\(store)/Caf%C3%A9/p3")
    }

    /// Found by fuzz-predicate: the canonical form parenthesized every NOT and every operator of a chain, so a
    /// predicate well within the nesting limit printed as one beyond it.
    func testCanonicalFormsNestNoDeeperThanTheirSource() throws {
        let nots = try ObjectPredicate(unboundFormat: String(repeating: "!", count: 51) + "Y")
        XCTAssertEqual(nots.predicateFormat, String(repeating: "NOT ", count: 51) + "Y == YES")
        XCTAssertEqual(try ObjectPredicate(unboundFormat: nots.predicateFormat), nots)
        let sum = try ObjectPredicate(unboundFormat: "a == " + Array(repeating: "1", count: 60).joined(separator: " + ") + " - 2 * 3 * 4")
        XCTAssertEqual(sum.predicateFormat, "a == (" + Array(repeating: "1", count: 60).joined(separator: " + ") + " - (2 * 3 * 4))")
        XCTAssertEqual(try ObjectPredicate(unboundFormat: sum.predicateFormat), sum)
        for (format, canonical) in [("a == (1 - 2) - 3", "a == (1 - 2 - 3)"), ("a == 1 - (2 - 3)", "a == (1 - (2 - 3))"),
                                    ("a == 2 ** 3 ** 2", "a == (2 ** 3 ** 2)"), ("a == (2 ** 3) ** 2", "a == ((2 ** 3) ** 2)"),
                                    ("NOT (NOT a == 1)", "NOT NOT a == 1")] {
            let predicate = try ObjectPredicate(unboundFormat: format)
            XCTAssertEqual(predicate.predicateFormat, canonical, format)
            XCTAssertEqual(try ObjectPredicate(unboundFormat: canonical), predicate, format)
        }
    }

    /// Found by fuzz-predicate: Swift joins a combining mark to the character before it, so `\u0006` followed by
    /// U+0347 lost its last digit, and a quote followed by one did not close its string. The lexer splits such
    /// characters: strings holding combining marks anywhere print and read back.
    /// Found by fuzz-predicate (CI): `--9223372036854775808` negated Int64.min, a trap.
    func testNegatingInt64MinStaysASubtraction() throws {
        let predicate = try ObjectPredicate(unboundFormat: "a >= --9223372036854775808")
        XCTAssertEqual(predicate.predicateFormat, "a >= (0 - -9223372036854775808)")
        XCTAssertEqual(try ObjectPredicate(unboundFormat: predicate.predicateFormat), predicate)
        XCTAssertEqual(try ObjectPredicate(unboundFormat: "a == --5").predicateFormat, "a == 5")
    }

    func testCombiningMarksAfterSyntaxCharactersRoundTrip() throws {
        for text in ["\u{06}\u{0347}S", "\"\u{0347}", "\\\u{0347}", "\u{0347}start", "end\u{0347}", "a\u{301}", "e\u{301}\u{0327}"] {
            let predicate = ObjectPredicate.comparison(Comparison(.key("name"), .equal, .constant(.string(text))))
            let canonical = predicate.predicateFormat
            XCTAssertEqual(try ObjectPredicate(unboundFormat: canonical), predicate, "\(text.debugDescription) → \(canonical)")
        }
        let quoted = try ObjectPredicate(unboundFormat: "name == \"\u{0347}\" AND age > 1")
        XCTAssertEqual(quoted, .and([.comparison(Comparison(.key("name"), .equal, .constant(.string("\u{0347}")))),
                                     .comparison(Comparison(.key("age"), .greaterThan, .constant(.integer(1))))]))
    }

    func testMalformedPredicatesGiveErrorsWithPositions() {
        let cases: [(String, Int, String)] = [
            ("age >", 5, "expected an expression, found the end"),
            ("age > 3 AND", 11, "expected an expression, found the end"),
            ("(age > 3", 8, "expected ')'"),
            ("age >> 3", 5, "expected an expression, found '>'"),
            ("name == 'abc", 8, "unterminated string literal"),
            ("age ~ 3", 4, "unexpected character '~'"),
            ("age == %q", 7, "unknown format specifier"),
            ("age BETWEEN {1, 2, 3}", 21, "BETWEEN takes two values"),
            ("name ==[x] 'a'", 8, "unknown comparison option 'x'"),
            ("SUBQUERY(kids, x, x.age > 1).@count > 0", 15, "expected a $variable"),
            ("a == 1 b == 2", 7, "expected AND, OR or the end of the predicate"),
            ("", 0, "expected an expression, found the end"),
            // Found by fuzz-predicate: `#2` was a key named "2", printed as `2 == YES`, which reads back as a number.
            ("#2", 0, "expected a name after '#'"),
            ("a == #", 5, "expected a name after '#'"),
            // Found by fuzz-predicate: `#CAST(950, "NSDate")` called a function named like the keyword, printed as CAST.
            ("hired < #CAST(950, \"NSDate\")", 8, "'CAST' is a reserved word: it cannot name a function"),
            // Found by fuzz-predicate: a combining mark read as a name printed as "NOT ֵ == YES", where it joins the space.
            ("!\n\u{05B5}\n", 2, "unexpected character"),
        ]
        for (format, position, message) in cases {
            XCTAssertThrowsError(try ObjectPredicate(unboundFormat: format), format) { error in
                guard let error = error as? ObjectPredicateError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.position, position, "\(format): \(error)")
                XCTAssertTrue(error.message.hasPrefix(message), "\(format): \(error.message)")
            }
        }
        XCTAssertThrowsError(try ObjectPredicate(unboundFormat: "age >")) { error in
            XCTAssertEqual((error as? ObjectPredicateError)?.caretDescription, "expected an expression, found the end (at character 6)\n  age >\n       ^")
        }
    }

    func testWrongArgumentsAreErrorsNotCrashes() {
        let cases: [(String, [Any?], String)] = [
            ("age == %d", ["three"], "%d needs an integer, got String"),
            ("age == %d", [2.5], "%d needs an integer, got Double"),
            ("%K == 1", [5], "%K needs a key path string, got Int"),
            ("w == %f", [3], "%f needs a floating-point number, got Int"),
            ("a == %@ AND b == %@", ["x"], "missing argument for %@"),
            ("a == %@", ["x", "y"], "2 format arguments given but only 1 used"),
            ("a == %@", [NSObject()], "%@ needs an object"),
        ]
        for (format, args, message) in cases {
            XCTAssertThrowsError(try ObjectPredicate(parsing: format, argumentArray: args), format) { error in
                guard let error = error as? ObjectPredicateError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.kind, .argument)
                XCTAssertTrue(error.message.hasPrefix(message), "\(format): \(error.message)")
            }
        }
    }

    /// Random text, short and long (long enough to reach the nesting limit): each input either parses, and then its
    /// canonical form parses back to the same predicate, or fails with a predicate error pointing inside the text.
    func testRandomInputParsesAndRoundTripsOrFailsWithAPosition() {
        var generator = SplitMix(seed: 42)
        let alphabet = Array("abc AND OR NOT ( ) { } [ ] == != < > %@ %K $x . @count , ' \" 1 2.5 SUBQUERY ANY ALL BETWEEN IN CONTAINS[cd] -+*/!((((")
        var parsed = 0, failed = 0
        for round in 0..<4_000 {
            let length = round % 4 == 0 ? 200 + Int(generator.next() % 400) : Int(generator.next() % 40)
            let text = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            do {
                let predicate = try ObjectPredicate(unboundFormat: text)
                parsed += 1
                let canonical = predicate.predicateFormat
                XCTAssertEqual(try? ObjectPredicate(unboundFormat: canonical), predicate, "\(text) → \(canonical)")
            } catch let error as ObjectPredicateError {
                failed += 1
                XCTAssertEqual(error.format, text)
                XCTAssertTrue((0...text.count).contains(error.position ?? -1), "\(text): \(error)")
            } catch {
                XCTFail("\(text): not a predicate error: \(error)")
            }
            do {
                _ = try ObjectPredicate(parsing: text, argumentArray: ["name", 1, nil])
            } catch {
                XCTAssertTrue(error is ObjectPredicateError, "\(text): \(error)")
            }
        }
        XCTAssertGreaterThan(parsed, 50, "the generator reaches valid predicates")
        XCTAssertGreaterThan(failed, 50)
        // Wrappers mixed at random around a comparison: each is one level, the comparison two; past
        // `Limits.predicateNestingDepth` the error is the limit's, never a stack overflow.
        var overLimit = 0
        for wrappers in 90...110 {
            var text = "a == 1"
            for _ in 0..<wrappers {
                switch generator.next() % 3 {
                case 0: text = "(" + text + ")"
                case 1: text = "NOT " + text
                default: text = "!" + text
                }
            }
            do {
                _ = try ObjectPredicate(unboundFormat: text)
                XCTAssertLessThanOrEqual(wrappers + 2, Limits.predicateNestingDepth, text)
            } catch let error as ObjectPredicateError {
                XCTAssertEqual(error.kind, .limit, "\(wrappers) wrappers: \(error)")
                XCTAssertGreaterThan(wrappers + 2, Limits.predicateNestingDepth)
                overLimit += 1
            } catch {
                XCTFail("\(error)")
            }
        }
        XCTAssertEqual(overLimit, 12)
    }
}

/// A small deterministic generator for fuzz-style tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
}

/// LIKE in memory: NSPredicate's wildcards and escape, on values and patterns of any length.
final class LikeMatchingTests: XCTestCase {
    func like(_ s: String, _ p: String) -> Bool { PredicateEvaluator.like(Array(s.unicodeScalars)[...], Array(p.unicodeScalars)[...]) }

    func testWildcardsAndEscapes() {
        let cases: [(String, String, Bool)] = [
            ("", "", true), ("", "*", true), ("", "?", false), ("a", "", false),
            ("abc", "abc", true), ("abc", "a*", true), ("abc", "*c", true), ("abc", "a?c", true), ("abc", "a?", false),
            ("abc", "*b*", true), ("abc", "*d*", false), ("aaab", "*a*b", true), ("ab", "a**b", true),
            ("a*c", "a\\*c", true), ("abc", "a\\*c", false), ("a?c", "a\\?c", true), ("a\\", "a\\", true),
            ("mississippi", "m*iss*ppi", true), ("mississippi", "m*iss*x", false), ("ñandú", "?and?", true),
        ]
        for (subject, pattern, expected) in cases {
            XCTAssertEqual(like(subject, pattern), expected, "\(subject.debugDescription) LIKE \(pattern.debugDescription)")
        }
    }

    /// A recursive matcher went one frame deeper per character (a 200,000-character value overflowed the stack)
    /// and took exponential time on many stars.
    func testLongValuesAndManyStars() {
        let long = String(repeating: "a", count: 200_000)
        XCTAssertTrue(like(long, long))
        XCTAssertTrue(like(long + "b", "*b"))
        XCTAssertFalse(like(long, String(repeating: "a*", count: 30) + "b"))
    }
}
