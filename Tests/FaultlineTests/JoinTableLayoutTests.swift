import Foundation
import XCTest
@testable import Faultline

/// Many-to-many tables named and laid out as Core Data lays them out (../shared/reference/coredata-formats.md,
/// section 3), checked against the DDL of stores Core Data wrote.
final class JoinTableLayoutTests: XCTestCase {
    func ddl(_ entities: [EntityDescription]) throws -> [String] {
        SchemaGenerator.script(for: try ManagedObjectModel(entities: entities)).split(separator: "\n").map(String.init)
    }

    func testAnEntityAndItselfAsCoreDataWroteThem() throws {
        // TodoItem.blockedBy ↔ blocking (entity 2).
        let todo = try ddl([
            EntityDescription(name: "Aardvark", properties: [AttributeDescription(name: "x", type: .string)]),
            EntityDescription(name: "TodoItem", properties: [
                RelationshipDescription(name: "blockedBy", destination: "TodoItem", inverse: "blocking", isToMany: true),
                RelationshipDescription(name: "blocking", destination: "TodoItem", inverse: "blockedBy", isToMany: true),
            ]),
        ])
        XCTAssertTrue(todo.contains("CREATE TABLE Z_2BLOCKING ( Z_2BLOCKEDBY INTEGER, Z_2BLOCKING INTEGER, PRIMARY KEY (Z_2BLOCKEDBY, Z_2BLOCKING) );"), "\(todo)")
        XCTAssertTrue(todo.contains("CREATE INDEX Z_2BLOCKING_Z_2BLOCKING_INDEX ON Z_2BLOCKING (Z_2BLOCKING, Z_2BLOCKEDBY);"), "\(todo)")
        // BookmarkEntity.favorites (ordered) ↔ favoriteFolders (entity 1).
        let bookmarks = try ddl([
            EntityDescription(name: "BookmarkEntity", properties: [
                RelationshipDescription(name: "favorites", destination: "BookmarkEntity", inverse: "favoriteFolders", isToMany: true, isOrdered: true),
                RelationshipDescription(name: "favoriteFolders", destination: "BookmarkEntity", inverse: "favorites", isToMany: true),
            ]),
        ])
        XCTAssertTrue(bookmarks.contains("CREATE TABLE Z_1FAVORITES ( Z_1FAVORITEFOLDERS INTEGER, Z_1FAVORITES INTEGER, Z_FOK_1FAVORITES INTEGER, PRIMARY KEY (Z_1FAVORITEFOLDERS, Z_1FAVORITES) );"), "\(bookmarks)")
        XCTAssertTrue(bookmarks.contains("CREATE INDEX Z_1FAVORITES_Z_1FAVORITES_INDEX ON Z_1FAVORITES (Z_1FAVORITES, Z_1FAVORITEFOLDERS);"), "\(bookmarks)")
    }

    func testTwoEntitiesTheFirstByNameOwnsTheTable() throws {
        // Recipe.categories ↔ RecipeCategory.recipes: Z_<recipe>CATEGORIES(Z_<recipe>RECIPES, Z_<category>CATEGORIES).
        let recipes = try ddl([
            EntityDescription(name: "RecipeCategory", properties: [
                RelationshipDescription(name: "recipes", destination: "Recipe", inverse: "categories", isToMany: true),
            ]),
            EntityDescription(name: "Recipe", properties: [
                RelationshipDescription(name: "categories", destination: "RecipeCategory", inverse: "recipes", isToMany: true),
            ]),
        ])
        XCTAssertTrue(recipes.contains("CREATE TABLE Z_1CATEGORIES ( Z_1RECIPES INTEGER, Z_2CATEGORIES INTEGER, PRIMARY KEY (Z_1RECIPES, Z_2CATEGORIES) );"), "\(recipes)")
        XCTAssertTrue(recipes.contains("CREATE INDEX Z_1CATEGORIES_Z_2CATEGORIES_INDEX ON Z_1CATEGORIES (Z_2CATEGORIES, Z_1RECIPES);"), "\(recipes)")
    }

    /// Column order, from stores Core Data wrote: dates before decimals whatever the names; each `Z_FOK_` right after
    /// its relationship's column.
    func testColumnsInCoreDatasOrder() throws {
        let tables = try ddl([
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "publishedAt", type: .date), AttributeDescription(name: "price", type: .decimal),
            ]),
            EntityDescription(name: "Payment", properties: [
                AttributeDescription(name: "amount", type: .decimal), AttributeDescription(name: "createdAt", type: .date),
                AttributeDescription(name: "currencyCode", type: .string), AttributeDescription(name: "date", type: .date),
                AttributeDescription(name: "updatedAt", type: .date),
            ]),
            EntityDescription(name: "Bookmark", properties: [
                AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "parent", destination: "Bookmark", inverse: "children"),
                RelationshipDescription(name: "children", destination: "Bookmark", inverse: "parent", isToMany: true, isOrdered: true),
                RelationshipDescription(name: "favoriteFolder", destination: "Bookmark", inverse: "favoriteItems"),
                RelationshipDescription(name: "favoriteItems", destination: "Bookmark", inverse: "favoriteFolder", isToMany: true, isOrdered: true),
            ]),
        ])
        XCTAssertTrue(tables.contains("CREATE TABLE ZBOOK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPUBLISHEDAT TIMESTAMP, ZPRICE DECIMAL );"), "\(tables)")
        XCTAssertTrue(tables.contains("CREATE TABLE ZPAYMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCREATEDAT TIMESTAMP, ZDATE TIMESTAMP, ZUPDATEDAT TIMESTAMP, ZAMOUNT DECIMAL, ZCURRENCYCODE VARCHAR );"), "\(tables)")
        XCTAssertTrue(tables.contains { $0.contains("ZFAVORITEFOLDER INTEGER, Z_FOK_FAVORITEFOLDER INTEGER, ZPARENT INTEGER, Z_FOK_PARENT INTEGER") }, "\(tables)")
    }

    /// A store made with the layout reads its links back (the join table as named is the one used).
    func testASelfReferentialManyToManyRoundTrips() throws {
        let dir = TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "TodoItem", properties: [
                AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "blockedBy", destination: "TodoItem", inverse: "blocking", isToMany: true),
                RelationshipDescription(name: "blocking", destination: "TodoItem", inverse: "blockedBy", isToMany: true),
            ]),
        ])
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let a = try context.insertNewObject(forEntityName: "TodoItem"), b = try context.insertNewObject(forEntityName: "TodoItem")
            try a.setValue("a", forKey: "title")
            try b.setValue("b", forKey: "title")
            try a.setValue([b], forKey: "blocking")
            try context.save()
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "TodoItem")
            request.predicate = try ObjectPredicate(format: "title == 'b'")
            let b = try XCTUnwrap(try reader.fetch(request).first)
            XCTAssertEqual(b.objects(forRelationship: "blockedBy").map { $0.value(forKey: "title") as? String }, ["a"])
        }
    }
}
