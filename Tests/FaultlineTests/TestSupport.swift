import Foundation
import XCTest
@testable import Faultline

/// A temporary folder removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// The shared fixtures folder (`../shared/fixtures` beside the project), or nil when absent.
func fixturesDirectory() -> URL? {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    let fixtures = url.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    return FileManager.default.fileExists(atPath: fixtures.path) ? fixtures : nil
}

/// A small model exercising every relationship shape: DogWalk (seed 002) plus people, tags and a hierarchy.
func makeTestModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(entities: [
        EntityDescription(name: "Dog", properties: [
            AttributeDescription(name: "name", type: .string, isIndexed: true),
            RelationshipDescription(name: "walks", destination: "Walk", inverse: "dog", isToMany: true, isOrdered: true, deleteRule: .cascade),
            RelationshipDescription(name: "owner", destination: "Person", inverse: "dogs", deleteRule: .nullify),
            RelationshipDescription(name: "tags", destination: "Tag", inverse: "dogs", isToMany: true),
            RelationshipDescription(name: "collar", destination: "Collar", inverse: "dog", deleteRule: .cascade),
        ]),
        EntityDescription(name: "Walk", properties: [
            AttributeDescription(name: "date", type: .date),
            AttributeDescription(name: "distance", type: .double, defaultValue: 1.5),
            RelationshipDescription(name: "dog", destination: "Dog", inverse: "walks"),
        ]),
        EntityDescription(name: "Person", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "age", type: .integer16, defaultValue: Int64(0)),
            RelationshipDescription(name: "dogs", destination: "Dog", inverse: "owner", isToMany: true, deleteRule: .deny),
        ], uniquenessConstraints: [["name"]]),
        EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "label", type: .string),
            RelationshipDescription(name: "dogs", destination: "Dog", inverse: "tags", isToMany: true),
        ]),
        EntityDescription(name: "Collar", properties: [
            AttributeDescription(name: "color", type: .string),
            RelationshipDescription(name: "dog", destination: "Dog", inverse: "collar"),
        ]),
        EntityDescription(name: "Region", isAbstract: true, properties: [
            AttributeDescription(name: "code", type: .integer32),
            AttributeDescription(name: "updatedAt", type: .date),
        ]),
        EntityDescription(name: "Country", parent: "Region", properties: [
            RelationshipDescription(name: "continent", destination: "Continent", inverse: "countries"),
        ]),
        EntityDescription(name: "Continent", parent: "Region", properties: [
            AttributeDescription(name: "numberOfCountries", type: .integer64),
            RelationshipDescription(name: "countries", destination: "Country", inverse: "continent", isToMany: true),
        ]),
    ])
}

/// A coordinator with a fresh store file in `directory`.
func makeStack(_ model: ManagedObjectModel, in directory: TemporaryDirectory, name: String = "store.sqlite") throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(at: directory.file(name))
    return (coordinator, ManagedObjectContext(.privateQueue, coordinator: coordinator))
}

/// A trace line's predicate is the same text as `predicateFormat`, escaped, whether formatted straight into the line
/// or recorded when the event is queued and replayed by the writer (walked, or by its shape's text and constants).
/// Each is done twice into one buffer, so that what a buffer or recording caches between events is used too.
/// Returns whether the predicate could be recorded by its shape.
@discardableResult
func assertTraceFormMatches(_ predicate: ObjectPredicate, file: StaticString = #filePath, line: UInt = #line) -> Bool {
    let once = JSONLineBuffer.quote(predicate.predicateFormat)
    // Formatted into the buffer directly (twice: the buffer's caches must not change the text).
    var json = JSONLineBuffer()
    for _ in 0..<2 {
        json.literal("\"")
        PredicateFormatter.format(predicate, into: &json)
        json.literal("\"")
    }
    XCTAssertEqual(json.string, once + once, file: file, line: line)
    // Recorded as the traced thread records it, and replayed as the trace writer does.
    var recording = PredicateRecording()
    var replayed = JSONLineBuffer()
    for _ in 0..<2 {
        recording.bytes.count = 0
        PredicateFormatter.format(predicate, into: &recording)
        replayed.literal("\"")
        PredicateRecording.replay(recording.bytes.slice(0, recording.bytes.count), into: &replayed)
        replayed.literal("\"")
    }
    XCTAssertEqual(replayed.string, once + once, "recorded and replayed", file: file, line: line)
    // By its shape, as a fetch compiled through a template is recorded.
    let shape = PredicateShape(recordsConstants: true)
    guard shape.scan(entity: 0, predicate: predicate, sortDescriptors: []),
          let text = PredicateTextShape(predicate, constants: shape.constants.count) else { return false }
    recording.bytes.count = 0
    replayed = JSONLineBuffer()
    for round in 0..<2 {
        // Scanned again: the scan's recording keeps the last object-URI prefix between scans.
        if round > 0 { XCTAssertTrue(shape.scan(entity: 0, predicate: predicate, sortDescriptors: []), file: file, line: line) }
        recording.record(text, constants: shape.recordedConstants)
        replayed.literal("\"")
        PredicateRecording.replay(recording.bytes.slice(0, recording.bytes.count), into: &replayed)
        replayed.literal("\"")
        recording.bytes.count = 0
    }
    XCTAssertEqual(replayed.string, once + once, "recorded by its shape and replayed", file: file, line: line)
    return true
}

/// A page of the SampleModel2 fixture's model (`Page`: number, isBookmarked, content, book), its content copied from
/// `contentOf` (a required value the tests do not care about), in `book`.
@discardableResult
func insertPage(number: Int64, into context: ManagedObjectContext, book: ManagedObject, contentOf other: ManagedObject) throws -> ManagedObject {
    let page = try context.insertNewObject(forEntityName: "Page")
    try page.setValue(number, forKey: "number")
    try page.setValue(false, forKey: "isBookmarked")
    try page.setValue(other.value(forKey: "content"), forKey: "content")
    try page.setValue(book, forKey: "book")
    return page
}
