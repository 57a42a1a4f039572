import Foundation
import XCTest
@testable import Faultline

/// Binary attributes that allow external storage, in Core Data's format: a marker byte and the bytes inline up to
/// the threshold, else a marker and a UUID naming a file in `.<Store>_SUPPORT/_EXTERNAL_DATA/`.
final class ExternalBinaryStorageTests: XCTestCase {
    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Photo", properties: [
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "image", type: .binary, allowsExternalBinaryDataStorage: true),
                AttributeDescription(name: "thumbnail", type: .binary),
            ]),
        ])
    }

    func testSmallValuesStayInlineAndLargeOnesGoToAFileThatLeavesWithItsRow() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try model(), in: dir, name: "Photos.sqlite")
        let folder = dir.url.appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA")
        let small = Data([7, 8, 9])
        let large = Data((0..<(ExternalBinaryStorage.threshold + 1)).map { UInt8($0 & 0xff) })
        try context.performAndWait {
            for (title, image) in [("small", small), ("large", large)] {
                let photo = try context.insertNewObject(forEntityName: "Photo")
                try photo.setValue(title, forKey: "title")
                try photo.setValue(image, forKey: "image")
                try photo.setValue(image, forKey: "thumbnail")
            }
            try context.save()
        }
        // As stored: 0x01 + bytes inline; 0x02 + UUID + NUL for the large one, whose bytes are in the file.
        let connection = try SQLiteConnection(path: dir.file("Photos.sqlite").path, create: false)
        let rows = try connection.prepare("SELECT ZTITLE, ZIMAGE, ZTHUMBNAIL FROM ZPHOTO ORDER BY ZTITLE")
        XCTAssertTrue(try rows.step())
        let stored = rows.data(at: 1)
        XCTAssertEqual(stored.first, 0x02)
        XCTAssertEqual(stored.count, 1 + 36 + 1)
        XCTAssertEqual(stored.last, 0)
        let name = String(decoding: stored.dropFirst().dropLast(), as: UTF8.self)
        XCTAssertNotNil(UUID(uuidString: name))
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent(name)), large)
        XCTAssertEqual(rows.data(at: 2), large, "an attribute without external storage is stored as it is")
        XCTAssertTrue(try rows.step())
        XCTAssertEqual(rows.data(at: 1), Data([0x01]) + small)
        rows.reset()

        // Read back in a fresh stack, by fetch and as a dictionary result.
        let (_, reader) = try makeStack(try model(), in: dir, name: "Photos.sqlite")
        try reader.performAndWait {
            let photos = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Photo"))
            let byTitle = Dictionary(uniqueKeysWithValues: photos.map { ($0.value(forKey: "title") as! String, $0) })
            XCTAssertEqual(byTitle["small"]?.value(forKey: "image") as? Data, small)
            XCTAssertEqual(byTitle["large"]?.value(forKey: "image") as? Data, large)
            let request = FetchRequest<ManagedObject>(entityName: "Photo")
            request.propertiesToFetch = [PropertyToFetch("image")]
            let images = try reader.fetchDictionaries(request).compactMap { $0["image"] as? Data }
            XCTAssertEqual(Set(images), [small, large])

            // Replacing the large value by a small one and deleting the object remove the file after the save.
            try byTitle["large"]!.setValue(small, forKey: "image")
            try reader.save()
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path))
            try byTitle["small"]!.setValue(large, forKey: "image")
            try reader.save()
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            XCTAssertEqual(files.count, 1)
            reader.delete(byTitle["small"]!)
            try reader.save()
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
        }
    }

    /// A column naming a file that is missing, or bytes without a marker, read as stored rather than failing.
    func testMissingFilesAndUnmarkedBytesAreKept() throws {
        let external = ExternalBinaryStorage(storePath: "/nonexistent/App.sqlite")
        XCTAssertEqual(external.folder?.path, "/nonexistent/.App_SUPPORT/_EXTERNAL_DATA")
        let reference = Data([0x02]) + Data(UUID().uuidString.utf8) + Data([0])
        XCTAssertTrue(ManagedObjectContext.sameStoredValue(external.read(.blob(reference)), .blob(reference)))
        XCTAssertTrue(ManagedObjectContext.sameStoredValue(external.read(.blob(Data([9, 9]))), .blob(Data([9, 9]))))
        let traversal = Data([0x02]) + Data("../../etc/passwd".utf8) + Data([0])
        XCTAssertNil(external.file(of: .blob(traversal)), "only a UUID names a file")
    }
}
