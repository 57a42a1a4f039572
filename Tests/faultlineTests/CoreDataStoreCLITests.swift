import Foundation
import XCTest

/// The commands on stores Apple's Core Data wrote (../shared/fixtures/coredata-stores), each from a temporary copy:
/// the model bundle's version that wrote the store is found, and no read command changes a byte of the store, its
/// `-wal` or its `-shm`.
final class CoreDataStoreCLITests: CLITestCase {
    struct Case {
        let store: String
        let bundle: String
        let version: String?
        let entity: String
        let count: Int
    }

    static let cases: [Case] = [
        Case(store: "bnr-coredatastack/TestModel.sqlite", bundle: "bnr-coredatastack/Sample.xcdatamodeld", version: "TestModel", entity: "Author", count: 0),
        Case(store: "coredataplus-samplemodel/SampleModel_V1.sqlite", bundle: "coredataplus-samplemodel/SampleModel.xcdatamodeld", version: nil, entity: "Car", count: 125),
        Case(store: "coredataplus-samplemodel/SampleModel_V2.sqlite", bundle: "coredataplus-samplemodel/SampleModel.xcdatamodeld", version: "SampleModel2", entity: "Person", count: 20),
        Case(store: "flickrsearcher/starter_database.sqlite", bundle: "flickrsearcher/FlickrSearcher.xcdatamodeld", version: "FlickrSearcher", entity: "Photo", count: 109),
        Case(store: "wibosco-migration/CoreDataMigration_Example_1.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: "CoreDataMigration_Example", entity: "Post", count: 1_001),
        Case(store: "wibosco-migration/CoreDataMigration_Example_2.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: "CoreDataMigration_Example 2", entity: "Post", count: 5_979),
        Case(store: "wibosco-migration/CoreDataMigration_Example_3.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: "CoreDataMigration_Example 3", entity: "Color", count: 7_995),
        Case(store: "wibosco-migration/CoreDataMigration_Example_WAL.sqlite", bundle: "wibosco-migration/CoreDataMigration_Example.xcdatamodeld", version: nil, entity: "Post", count: 84),
    ]

    func testEveryFixtureStoreIsReadWithItsVersionAndLeftByteIdentical() throws {
        var fixtures = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { fixtures.deleteLastPathComponent() }
        fixtures = fixtures.appendingPathComponent("shared/fixtures/coredata-stores")
        guard FileManager.default.fileExists(atPath: fixtures.path) else { throw XCTSkip("../shared/fixtures is absent: Core Data's stores are not checked") }
        for testCase in Self.cases {
            let source = fixtures.appendingPathComponent(testCase.store)
            let store = dir.appendingPathComponent(source.lastPathComponent).path
            var files: [String: Data] = [:]
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
                try FileManager.default.copyItem(atPath: source.path + suffix, toPath: store + suffix)
                files[suffix] = try Data(contentsOf: URL(fileURLWithPath: store + suffix))
            }
            let bundle = fixtures.appendingPathComponent(testCase.bundle).path
            let count = try run(["query", "--model", bundle, "--store", store, testCase.entity, "--result", "count"])
            XCTAssertEqual(count.status, 0, "\(testCase.store): \(count.stderr)")
            XCTAssertEqual(count.stdout, "{\"count\": \(testCase.count)}\n", testCase.store)
            if let version = testCase.version {
                XCTAssertTrue(count.stderr.hasPrefix("faultline: the store was made with model version '\(version)'"), "\(testCase.store): \(count.stderr)")
            } else {
                XCTAssertEqual(count.stderr, "", "the bundle's current version fits \(testCase.store)")
            }
            for arguments in [["query", "--model", bundle, "--store", store, testCase.entity, "--limit", "3"],
                              ["explain", "--model", bundle, "--store", store, testCase.entity],
                              ["diagram", bundle, "--store", store, "--limit", "30", "-o", "graph.svg"]] {
                let result = try run(arguments)
                XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
            }
            for (suffix, bytes) in files {
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + suffix)), bytes, "\(testCase.store)\(suffix) is unchanged")
            }
            for suffix in ["-wal", "-shm", "-journal"] where files[suffix] == nil {
                XCTAssertFalse(FileManager.default.fileExists(atPath: store + suffix), "no \(suffix) was created beside \(testCase.store)")
            }
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).filter { $0.hasPrefix("faultline-readonly-") }
        XCTAssertEqual(leftovers, [], "scratch copies are removed")
    }
}
