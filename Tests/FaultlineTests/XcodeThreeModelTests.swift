import Foundation
import XCTest
@testable import Faultline

/// Models Xcode 3 saved (`elements` keyed archives, no `contents`): read into the same model an Xcode 4 XML gives,
/// with Core Data's hashes — the published vectors for Apple's Recipes sample.
final class XcodeThreeModelTests: XCTestCase {
    private func folder() throws -> URL {
        guard let fixtures = fixturesDirectory()?.appendingPathComponent("xcdatamodels-xcode3") else {
            throw XCTSkip("../shared/fixtures is absent: the Xcode 3 models are not checked")
        }
        return fixtures
    }

    func testRecipesLoadsWithCoreDatasHashes() throws {
        let model = try ManagedObjectModel(loadingContentsOf: try folder().appendingPathComponent("recipes/Recipes.xcdatamodel"))
        XCTAssertEqual(model.entities.map(\.name), ["Image", "Ingredient", "Recipe", "RecipeType"])
        try VersionHashTests.assertRecipesVectors(model)
        // What the archive says, read as Xcode's XML would say it.
        let ingredient = try XCTUnwrap(model.entity(named: "Ingredient"))
        let name = try XCTUnwrap(ingredient.attribute(named: "name"))
        XCTAssertEqual(name.type, .string)
        XCTAssertFalse(name.isOptional)
        XCTAssertEqual(name.defaultValue as? String, "Ingredient Name")
        XCTAssertEqual(ingredient.attribute(named: "displayOrder")?.defaultValue as? Int64, 0)
        let recipe = try XCTUnwrap(model.entity(named: "Recipe"))
        let ingredients = try XCTUnwrap(recipe.relationship(named: "ingredients"))
        XCTAssertTrue(ingredients.isToMany)
        XCTAssertEqual(ingredients.deleteRule, .cascade)
        XCTAssertEqual(ingredients.inverse?.name, "recipe")
        XCTAssertEqual(recipe.relationship(named: "type")?.destination?.name, "RecipeType")
        XCTAssertEqual(recipe.representedClassName, "Recipe")
    }

    func testAVersionedBundleAndASmallModelLoad() throws {
        let tiktok = try ManagedObjectModel(loadingContentsOf: try folder().appendingPathComponent("tiktok/DataModel.xcdatamodeld"))
        XCTAssertEqual(tiktok.versionName, "DataModel-v03", "the version .xccurrentversion names")
        XCTAssertEqual(tiktok.versionIdentifiers, ["v03"])
        XCTAssertEqual(Set(tiktok.entities.map(\.name)), ["Coupon", "Location", "Merchant"])
        XCTAssertTrue(tiktok.warnings.contains { "\($0)".contains("property 'lastUpdated': Date default value '0' of an Xcode 3 model is not a date") },
                      "\(tiktok.warnings)")
        let coupon = try XCTUnwrap(tiktok.entity(named: "Coupon"))
        XCTAssertEqual(coupon.relationship(named: "merchant")?.inverse?.name, "coupons")
        XCTAssertEqual(coupon.attribute(named: "title")?.userInfo["com.apple.syncservices.ExcludeFromDataChangeAlert"], "NO")
        let bug = try ManagedObjectModel(loadingContentsOf: try folder().appendingPathComponent("coredatabug/DataModel.xcdatamodel"))
        XCTAssertFalse(bug.entities.isEmpty)
        // The `elements` file itself, given alone.
        let alone = try ManagedObjectModel(loadingContentsOf: try folder().appendingPathComponent("recipes/Recipes.xcdatamodel/elements"))
        XCTAssertEqual(alone.coreDataVersionHashes, try ManagedObjectModel(loadingContentsOf: try folder().appendingPathComponent("recipes/Recipes.xcdatamodel")).coreDataVersionHashes)
    }

    /// A small model of our own (the fuzz seed, built with Python's plistlib: an entity with a default and an index,
    /// a many-to-many), read without the fixtures.
    func testASmallArchiveOfOurOwn() throws {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        let data = try Data(contentsOf: url.appendingPathComponent("Fuzz/Seeds/compiled-model/xcode3-elements.bplist"))
        XCTAssertTrue(ManagedObjectModel.isXcodeThreeElements(data))
        let model = try ManagedObjectModel(xcodeThreeElements: data, source: "seed")
        XCTAssertEqual(model.entities.map(\.name), ["Note", "Tag"])
        let title = try XCTUnwrap(model.entity(named: "Note")?.attribute(named: "title"))
        XCTAssertEqual(title.defaultValue as? String, "Untitled")
        XCTAssertTrue(title.isIndexed)
        XCTAssertFalse(title.isOptional)
        let tags = try XCTUnwrap(model.entity(named: "Note")?.relationship(named: "tags"))
        XCTAssertTrue(tags.isToMany && tags.inverse?.isToMany == true)
        XCTAssertEqual(model.versionIdentifiers, ["1"])
        XCTAssertTrue(SchemaGenerator.script(for: model).contains("CREATE TABLE Z_1TAGS"))
    }

    /// A damaged archive is named, never a trap: a keyed archive whose root is not a model, and one cut short.
    func testDamagedElementsAreNamed() throws {
        let dir = TemporaryDirectory()
        let source = try Data(contentsOf: try folder().appendingPathComponent("recipes/Recipes.xcdatamodel/elements"))
        let model = dir.url.appendingPathComponent("Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        for cut in [source.count / 2, source.count - 40, 64] {
            try source.prefix(cut).write(to: model.appendingPathComponent("elements"))
            XCTAssertThrowsError(try ManagedObjectModel(loadingContentsOf: model)) { error in
                XCTAssertTrue("\(error)".contains("Broken.xcdatamodel"), "\(error)")
            }
        }
        try FileManager.default.removeItem(at: model.appendingPathComponent("elements"))
        XCTAssertThrowsError(try ManagedObjectModel(loadingContentsOf: model)) { error in
            XCTAssertTrue("\(error)".contains("missing 'contents'") && "\(error)".contains("elements"), "\(error)")
        }
    }
}
