import Foundation
import XCTest
@testable import Faultline

/// The traced thread records each fetch's predicate for the trace writer (`PredicateRecording`); replayed, it must
/// give the predicate's format, escaped. (Every predicate the parser tests round-trip is checked the same way by
/// `assertTraceFormMatches`.)
final class PredicateRecordingTests: XCTestCase {
    /// The recording keeps the last object-URI prefix and finds it by the entity's and the store's identity: IDs of
    /// another entity of the same name (another model), of another entity, or of another store must not reuse it. A
    /// store identifier that needs escaping, and a temporary ID, are recorded as text.
    func testObjectURIPrefixesFollowTheEntityAndTheStore() throws {
        let model = try makeTestModel(), otherModel = try makeTestModel()
        let dog = try XCTUnwrap(model.entity(named: "Dog"))
        let otherDog = try XCTUnwrap(otherModel.entity(named: "Dog"))
        let walk = try XCTUnwrap(model.entity(named: "Walk"))
        let store = "A1B2C3D4-0000-4000-8000-000000000001"
        let otherStore = String("A1B2C3D4-0000-4000-8000-000000000002".reversed())
        let ids = [ManagedObjectID(entity: dog, key: 7, storeIdentifier: store),
                   ManagedObjectID(entity: dog, key: 8, storeIdentifier: store),
                   ManagedObjectID(entity: walk, key: 9, storeIdentifier: store),
                   ManagedObjectID(entity: otherDog, key: 10, storeIdentifier: otherStore),
                   ManagedObjectID(entity: dog, key: 11, storeIdentifier: otherStore),
                   ManagedObjectID(entity: dog, key: 12, storeIdentifier: String(store.reversed().reversed())),
                   ManagedObjectID(entity: dog, key: 13, storeIdentifier: #"odd "store" \ name"#),
                   ManagedObjectID(entity: dog, key: Int64.max, storeIdentifier: store),
                   ManagedObjectID(entity: dog, key: -3, storeIdentifier: nil)]
        var recording = PredicateRecording()
        var json = JSONLineBuffer()
        var expected = ""
        for id in ids + ids.reversed() {
            let predicate = ObjectPredicate.comparison(Comparison(.evaluatedObject, .equal, .constant(.objectID(id))))
            recording.bytes.count = 0
            PredicateFormatter.format(predicate, into: &recording)
            PredicateRecording.replay(recording.bytes.slice(0, recording.bytes.count), into: &json)
            json.literal(",")
            expected += String(JSONLineBuffer.quote(predicate.predicateFormat).dropFirst().dropLast()) + ","
        }
        XCTAssertEqual(json.string, expected)
        XCTAssertTrue(expected.contains("x-coredata://\(otherStore)/Dog/p10"), expected)
        XCTAssertTrue(expected.contains(#"odd \\\"store\\\" \\\\ name/Dog/p13"#), expected)
        withExtendedLifetime((model, otherModel)) {}
    }

    /// Predicates with every kind of constant are recorded by their shape (a reference to the shape's text and the
    /// constants), and replay as their format; those whose SQL depends on more than their shape are not.
    func testPredicatesAreRecordedByTheirShape() throws {
        let model = try makeTestModel()
        let dog = try XCTUnwrap(model.entity(named: "Dog"))
        let id = ManagedObjectID(entity: dog, key: 42, storeIdentifier: "A1B2C3D4-0000-4000-8000-000000000001")
        let byShape = try [
            ObjectPredicate(format: "name == %@ AND age > %d", "line\nbreak \"quoted\"", -42),
            ObjectPredicate(format: "SELF == %@ OR owner == nil", id),
            ObjectPredicate(format: "tags.name IN %@ AND age BETWEEN {1, %ld}", ["a", "b"], Int.max),
            ObjectPredicate(format: "born > %@ AND weight < 2.5 AND NOT (name BEGINSWITH[cd] 'é')", Date(timeIntervalSinceReferenceDate: 12.5)),
            ObjectPredicate(format: "ANY walks.distance > 3 AND (age * 2) + 1 >= 9"),
        ]
        for predicate in byShape { XCTAssertTrue(assertTraceFormMatches(predicate), "\(predicate)") }
        let walked = try [
            ObjectPredicate(format: "SUBQUERY(walks, $w, $w.distance > 2.5).@count == 0"),
            ObjectPredicate(format: "SELF == CAST('x-coredata://A/Dog/p1', 'NSManagedObjectID')"),
        ]
        for predicate in walked { XCTAssertFalse(assertTraceFormMatches(predicate), "\(predicate)") }
    }

    /// Recordings of several predicates end to end, as the trace's queue keeps them (from a small start, so that
    /// the storage grows on the way), replay one by one: each token says how long it is, so none reads into the next.
    func testRecordingsReplayOneByOne() throws {
        let predicates = try [
            ObjectPredicate(format: "name == %@ AND age > %d", "line\nbreak \"quoted\"", -42),
            ObjectPredicate(format: "SUBQUERY(walks, $w, $w.distance > 2.5).@count == 0"),
            ObjectPredicate(format: "tags.name IN %@", ["a", "b"]),
            ObjectPredicate(format: "name == 'café ✓' OR age BETWEEN {1, 9223372036854775807}"),
        ]
        var recording = PredicateRecording(capacity: 8)
        var ends: [Int] = []
        for predicate in predicates {
            PredicateFormatter.format(predicate, into: &recording)
            ends.append(recording.bytes.count)
        }
        for (i, predicate) in predicates.enumerated() {
            var json = JSONLineBuffer()
            PredicateRecording.replay(recording.bytes.slice(i == 0 ? 0 : ends[i - 1], ends[i]), into: &json)
            XCTAssertEqual(json.string, String(JSONLineBuffer.quote(predicate.predicateFormat).dropFirst().dropLast()))
        }
    }
}
