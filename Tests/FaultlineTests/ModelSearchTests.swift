import Foundation
import XCTest
@testable import Faultline

/// Models by name, as Core Data finds them: `PersistentContainer(name:)`, `mergedModel(from:)`, and the failable
/// `init?(contentsOf:)`.
final class ModelSearchTests: XCTestCase {
    func write(_ json: String, to url: URL) throws {
        try Data(json.utf8).write(to: url)
    }

    func testContainerByNameFindsTheModelOnTheSearchPath() throws {
        let dir = TemporaryDirectory()
        try write(#"{"entities": [{"name": "Dog", "attributes": [{"name": "name", "type": "String"}]}]}"#, to: dir.file("Kennel.json"))
        setenv("FAULTLINE_MODEL_PATH", dir.url.path, 1)
        defer { unsetenv("FAULTLINE_MODEL_PATH") }
        XCTAssertEqual(ManagedObjectModel.url(forModelNamed: "Kennel")?.lastPathComponent, "Kennel.json")
        XCTAssertEqual(ManagedObjectModel.modelSearchFolders.first?.path, dir.url.path)
        let container = PersistentContainer(name: "Kennel", probes: .disabled)
        XCTAssertEqual(container.managedObjectModel.entities.map(\.name), ["Dog"])
        container.persistentStoreDescriptions = [PersistentStoreDescription(type: .inMemory)]
        try container.loadPersistentStores()
        let context = container.newBackgroundContext()
        try context.performAndWait {
            try EntityDescription.insertNewObject(forEntityName: "Dog", into: context).setValue("Rex", forKey: "name")
            try context.save()
        }

        // No such model: an empty model, and loading says where it looked (Core Data logs "Failed to load model").
        let missing = PersistentContainer(name: "Cattery", probes: .disabled)
        XCTAssertEqual(missing.managedObjectModel.entities.count, 0)
        XCTAssertThrowsError(try missing.loadPersistentStores()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("no model named 'Cattery' (Cattery.momd, Cattery.xcdatamodeld, Cattery.mom, Cattery.json) in: \(dir.url.path)"), text)
            XCTAssertTrue(text.hasSuffix("set FAULTLINE_MODEL_PATH, or pass the model"), text)
        }
        // A model that is there but unreadable: the file and the problem.
        try write("{not json", to: dir.file("Broken.json"))
        XCTAssertThrowsError(try PersistentContainer(name: "Broken", probes: .disabled).loadPersistentStores()) { error in
            XCTAssertTrue("\(error)".hasPrefix("the model named 'Broken' cannot be loaded: "), "\(error)")
        }
        XCTAssertNil(ManagedObjectModel.url(forModelNamed: "../Kennel"), "a name, not a path")
    }

    func testFailableInitAndMergedModel() throws {
        let dir = TemporaryDirectory()
        XCTAssertNil(ManagedObjectModel(contentsOf: dir.file("absent.json")), "Core Data's init?(contentsOf:) gives nil")
        XCTAssertThrowsError(try ManagedObjectModel(loadingContentsOf: dir.file("absent.json"))) { error in
            XCTAssertTrue("\(error)".contains("no such file or folder"), "\(error)")
        }
        let folder = dir.file("Resources")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let one = #"{"entities": [{"name": "Dog", "attributes": [{"name": "name", "type": "String"}]}]}"#
        try write(one, to: dir.file("k.json"))
        XCTAssertEqual(ManagedObjectModel(contentsOf: dir.file("k.json"))?.entities.map(\.name), ["Dog"])
        let bundle = try XCTUnwrap(Bundle(path: folder.path))
        XCTAssertNil(ManagedObjectModel.mergedModel(from: [bundle]), "no model in the bundle")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Dogs.xcdatamodeld/Dogs.xcdatamodel"), withIntermediateDirectories: true)
        try write(Self.contents(entity: "Dog"), to: folder.appendingPathComponent("Dogs.xcdatamodeld/Dogs.xcdatamodel/contents"))
        XCTAssertEqual(ManagedObjectModel.mergedModel(from: [bundle])?.entities.map(\.name), ["Dog"])
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Cats.xcdatamodeld/Cats.xcdatamodel"), withIntermediateDirectories: true)
        try write(Self.contents(entity: "Cat"), to: folder.appendingPathComponent("Cats.xcdatamodeld/Cats.xcdatamodel/contents"))
        XCTAssertEqual(ManagedObjectModel.mergedModel(from: [bundle])?.entities.map(\.name).sorted(), ["Cat", "Dog"])
    }

    static func contents(entity: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="1" systemVersion="1" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="\(entity)" representedClassName="\(entity)" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
            </entity>
        </model>
        """
    }
}
