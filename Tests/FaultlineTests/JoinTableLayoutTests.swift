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

    /// Column order, from stores Core Data wrote: dates before decimals whatever the names; the `Z_FOK_` columns after
    /// all of the entity's to-one columns, by name (coredata-formats.md §3, corrected: a real store of a model with two
    /// ordered to-manys reads `ZFAVORITEFOLDER, ZPARENT, Z_FOK_FAVORITEFOLDER, Z_FOK_PARENT`).
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
        XCTAssertTrue(tables.contains { $0.contains("ZFAVORITEFOLDER INTEGER, ZPARENT INTEGER, Z_FOK_FAVORITEFOLDER INTEGER, Z_FOK_PARENT INTEGER") }, "\(tables)")
    }

    /// The real store's bookmark table, column for column: attributes, to-ones, then their order columns, then strings.
    func testTwoOrderedToManysPutTheirOrderColumnsAfterAllToOnes() throws {
        let tables = try ddl([
            EntityDescription(name: "Bookmark", properties: [
                AttributeDescription(name: "uuid", type: .string), AttributeDescription(name: "url", type: .string),
                AttributeDescription(name: "title", type: .string),
                AttributeDescription(name: "isFolder", type: .boolean), AttributeDescription(name: "isFavorite", type: .boolean),
                RelationshipDescription(name: "parent", destination: "Bookmark", inverse: "children"),
                RelationshipDescription(name: "children", destination: "Bookmark", inverse: "parent", isToMany: true, isOrdered: true),
                RelationshipDescription(name: "favoriteFolder", destination: "Bookmark", inverse: "favorites"),
                RelationshipDescription(name: "favorites", destination: "Bookmark", inverse: "favoriteFolder", isToMany: true, isOrdered: true),
            ]),
        ])
        XCTAssertTrue(tables.contains("CREATE TABLE ZBOOKMARK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZISFAVORITE INTEGER, ZISFOLDER INTEGER, "
            + "ZFAVORITEFOLDER INTEGER, ZPARENT INTEGER, Z_FOK_FAVORITEFOLDER INTEGER, Z_FOK_PARENT INTEGER, ZTITLE VARCHAR, ZURL VARCHAR, ZUUID VARCHAR );"), "\(tables)")
    }

    /// A to-one to an entity with sub-entities keeps its entity column right after it (verified: `ZBOOK, Z1_BOOK`);
    /// its `Z_FOK_` column follows all to-ones and their entity columns — that placement is Faultline's guess
    /// (docs/store-format.md: no real store shows both).
    func testAnOrderColumnFollowsTheEntityColumnsToo() throws {
        let tables = try ddl([
            EntityDescription(name: "Book", properties: [
                AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "pages", destination: "Page", inverse: "book", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "GraphicNovel", parent: "Book", properties: [AttributeDescription(name: "artist", type: .string)]),
            EntityDescription(name: "Page", properties: [
                AttributeDescription(name: "number", type: .integer32),
                RelationshipDescription(name: "book", destination: "Book", inverse: "pages"),
                RelationshipDescription(name: "chapter", destination: "Chapter", inverse: "pages"),
            ]),
            EntityDescription(name: "Chapter", properties: [
                RelationshipDescription(name: "pages", destination: "Page", inverse: "chapter", isToMany: true),
            ]),
        ])
        XCTAssertTrue(tables.contains("CREATE TABLE ZPAGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNUMBER INTEGER, ZBOOK INTEGER, Z1_BOOK INTEGER, "
            + "ZCHAPTER INTEGER, Z_FOK_BOOK INTEGER );"), "\(tables)")
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
            let request = FetchRequest<ManagedObject>(entityName: "TodoItem")
            request.predicate = try ObjectPredicate(parsing: "title == 'b'")
            let b = try XCTUnwrap(try reader.fetch(request).first)
            XCTAssertEqual(b.objects(forRelationship: "blockedBy").map { $0.value(forKey: "title") as? String }, ["a"])
        }
    }

    /// Ordered on both sides, and sub-entities on either side: each ordered side has its order column, named after
    /// the column it orders; the table is named after the owning side's entity number (the sub-entity's own). No real
    /// store shows two ordered sides: their columns' order here is Faultline's rule (docs/store-format.md).
    func testOrderedOnBothSidesAndSubentities() throws {
        let both = try ddl([
            EntityDescription(name: "Playlist", properties: [
                RelationshipDescription(name: "songs", destination: "Song", inverse: "playlists", isToMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Song", properties: [
                RelationshipDescription(name: "playlists", destination: "Playlist", inverse: "songs", isToMany: true, isOrdered: true),
            ]),
        ])
        XCTAssertTrue(both.contains("CREATE TABLE Z_1SONGS ( Z_1PLAYLISTS INTEGER, Z_2SONGS INTEGER, Z_FOK_2SONGS INTEGER, Z_FOK_1PLAYLISTS INTEGER, PRIMARY KEY (Z_1PLAYLISTS, Z_2SONGS) );"), "\(both)")
        XCTAssertTrue(both.contains("CREATE INDEX Z_1SONGS_Z_2SONGS_INDEX ON Z_1SONGS (Z_2SONGS, Z_1PLAYLISTS);"), "\(both)")
        // Media (1) ← Track (2), Tag (3): "tag" sorts before "track", so Tag.tracks owns the table.
        let inherited = try ddl([
            EntityDescription(name: "Media", properties: [AttributeDescription(name: "title", type: .string)]),
            EntityDescription(name: "Track", parent: "Media", properties: [
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "tracks", isToMany: true),
            ]),
            EntityDescription(name: "Tag", properties: [
                RelationshipDescription(name: "tracks", destination: "Track", inverse: "tags", isToMany: true, isOrdered: true),
            ]),
        ])
        XCTAssertTrue(inherited.contains("CREATE TABLE Z_3TRACKS ( Z_3TAGS INTEGER, Z_2TRACKS INTEGER, Z_FOK_2TRACKS INTEGER, PRIMARY KEY (Z_3TAGS, Z_2TRACKS) );"), "\(inherited)")
    }

    /// Entity numbers as Core Data gives them: roots in case-insensitive name order, each entity's sub-entities
    /// right after it (the facts of ../shared/reference/coredata-formats.md, section 2).
    func testEntityNumbersInCaseInsensitiveOrder() throws {
        let sync = try ManagedObjectModel(entities: [
            EntityDescription(name: "SyncFeatureEntity", properties: [AttributeDescription(name: "x", type: .string)]),
            EntityDescription(name: "SyncableSettingsMetadata", properties: [AttributeDescription(name: "x", type: .string)]),
        ])
        XCTAssertEqual(sync.entities.map(\.name), ["SyncableSettingsMetadata", "SyncFeatureEntity"])
        let books = try ManagedObjectModel(entities: ["Writer", "Page", "Author", "GraphicNovel", "Feedback", "Book"].map { name in
            EntityDescription(name: name, parent: ["Author": "Writer", "GraphicNovel": "Book"][name],
                              properties: [AttributeDescription(name: "x\(name)", type: .string)])
        })
        XCTAssertEqual(books.entities.map { "\($0.entityNumber) \($0.name)" },
                       ["1 Book", "2 GraphicNovel", "3 Feedback", "4 Page", "5 Writer", "6 Author"])
    }

    /// A store whose `Z_PRIMARYKEY` numbers the entities otherwise than the model's rules, and whose many-to-many
    /// table is named after the other side: opened, it is read and written by its own numbers and tables.
    func testAStoresOwnNumbersAndJoinTablesAreAdopted() throws {
        let dir = TemporaryDirectory()
        func model() throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [
                EntityDescription(name: "Alpha", properties: [
                    AttributeDescription(name: "name", type: .string),
                    RelationshipDescription(name: "betas", destination: "Beta", inverse: "alphas", isToMany: true),
                    RelationshipDescription(name: "next", destination: "Alpha", inverse: "previous", isToMany: true),
                    RelationshipDescription(name: "previous", destination: "Alpha", inverse: "next", isToMany: true),
                ]),
                EntityDescription(name: "Beta", properties: [
                    AttributeDescription(name: "name", type: .string),
                    RelationshipDescription(name: "alphas", destination: "Alpha", inverse: "betas", isToMany: true),
                ]),
            ])
        }
        let rules = try model()
        XCTAssertEqual(rules.joinTables.map(\.name).sorted(), ["Z_1BETAS", "Z_1PREVIOUS"])
        let (_, context) = try makeStack(try model(), in: dir)
        try context.performAndWait {
            let a = try context.insertNewObject(forEntityName: "Alpha"), b = try context.insertNewObject(forEntityName: "Beta")
            let a2 = try context.insertNewObject(forEntityName: "Alpha")
            try a.setValue("a", forKey: "name")
            try a2.setValue("a2", forKey: "name")
            try b.setValue("b", forKey: "name")
            try a.setValue([b], forKey: "betas")
            try a.setValue([a2], forKey: "next")
            try context.save()
        }
        // As another program numbered it: Beta 1, Alpha 2; Alpha.betas's table named after Beta.alphas (Z_1ALPHAS,
        // its columns Z_1BETAS for Beta's keys, Z_2ALPHAS for Alpha's), the self-referential one after `next`.
        let store = dir.file("store.sqlite")
        let sql = SQLiteConnectionForTests(store)
        try sql.run("""
            UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 10; UPDATE Z_PRIMARYKEY SET Z_ENT = 13 - Z_ENT;
            UPDATE ZALPHA SET Z_ENT = 2; UPDATE ZBETA SET Z_ENT = 1;
            ALTER TABLE Z_1BETAS RENAME TO Z_1ALPHAS; ALTER TABLE Z_1ALPHAS RENAME COLUMN Z_1ALPHAS TO Z_2ALPHAS_;
            ALTER TABLE Z_1ALPHAS RENAME COLUMN Z_2BETAS TO Z_1BETAS; ALTER TABLE Z_1ALPHAS RENAME COLUMN Z_2ALPHAS_ TO Z_2ALPHAS;
            ALTER TABLE Z_1PREVIOUS RENAME TO Z_2NEXT; ALTER TABLE Z_2NEXT RENAME COLUMN Z_1NEXT TO Z_2NEXT;
            ALTER TABLE Z_2NEXT RENAME COLUMN Z_1PREVIOUS TO Z_2PREVIOUS;
            """)
        let adopted = try model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: adopted, probes: .disabled)
        try coordinator.addPersistentStore(at: store)
        XCTAssertEqual(adopted.entities.map { "\($0.entityNumber) \($0.name)" }, ["1 Beta", "2 Alpha"])
        XCTAssertEqual(adopted.joinTables.map(\.name).sorted(), ["Z_1ALPHAS", "Z_2NEXT"])
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Alpha")
            request.predicate = try ObjectPredicate(parsing: "name == 'a'")
            let a = try XCTUnwrap(try reader.fetch(request).first)
            XCTAssertEqual(a.objects(forRelationship: "betas").map { $0.value(forKey: "name") as? String }, ["b"])
            XCTAssertEqual(a.objects(forRelationship: "next").map { $0.value(forKey: "name") as? String }, ["a2"])
            let c = try reader.insertNewObject(forEntityName: "Beta")
            try c.setValue("c", forKey: "name")
            try c.setValue([a], forKey: "alphas")
            try reader.save()
        }
        XCTAssertEqual(try sql.strings("SELECT Z_ENT || ' ' || Z_NAME || ' ' || Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"), ["1 Beta 2", "2 Alpha 2"])
        XCTAssertEqual(try sql.strings("SELECT Z_ENT || ' ' || ZNAME FROM ZBETA ORDER BY Z_PK"), ["1 b", "1 c"])
        XCTAssertEqual(try sql.strings("SELECT Z_1BETAS || ' ' || Z_2ALPHAS FROM Z_1ALPHAS ORDER BY Z_1BETAS"), ["1 1", "2 1"])
        // The model is in use with this layout: a store laid out by the rules needs a model of its own.
        _ = try makeStack(try model(), in: dir, name: "rules.sqlite")
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: adopted, probes: .disabled).addPersistentStore(at: dir.file("rules.sqlite"))) { error in
            XCTAssertTrue("\(error)".contains("load the model again"), "\(error)")
        }
    }

    /// A to-many without an inverse keeps its links in the destination's column `Z<entity number><NAME>`, indexed;
    /// deleting the source clears them (Nullify) and leaves the rows.
    func testAToManyWithoutAnInverseIsAColumnOfTheDestination() throws {
        let dir = TemporaryDirectory()
        let model = try Self.cocktails()
        let statements = SchemaGenerator.statements(for: model)
        XCTAssertTrue(statements.contains("CREATE TABLE ZINGREDIENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, Z1SPEC INTEGER, ZUNIT VARCHAR )"), "\(statements)")
        XCTAssertTrue(statements.contains("CREATE INDEX ZINGREDIENT_Z1SPEC_INDEX ON ZINGREDIENT (Z1SPEC)"), "\(statements)")
        XCTAssertFalse(statements.contains { $0.contains("Z_1SPEC") }, "no join table")
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            let drink = try context.insertNewObject(forEntityName: "Cocktail")
            let parts = try (0..<3).map { i -> ManagedObject in
                let part = try context.insertNewObject(forEntityName: "Ingredient")
                try part.setValue("u\(i)", forKey: "unit")
                return part
            }
            try drink.setValue(parts, forKey: "spec")
            try context.save()
            XCTAssertEqual(try context.count(for: FetchRequest<ManagedObject>(entityName: "Cocktail", predicate: try ObjectPredicate(parsing: "ANY spec.unit == 'u2'"))), 1)
            context.delete(drink)
            try context.save()
        }
        let sql = SQLiteConnectionForTests(dir.file("store.sqlite"))
        XCTAssertEqual(try sql.strings("SELECT ZUNIT || ' ' || ifnull(Z1SPEC, 'none') FROM ZINGREDIENT ORDER BY ZUNIT"), ["u0 none", "u1 none", "u2 none"])
    }
}

extension JoinTableLayoutTests {
    /// A store of an earlier Faultline build kept a to-many without an inverse in a join table (`Z_1SPEC(Z_1INV_SPEC,
    /// Z_2SPEC)`): opened, the table it has is used, read and written; nothing is lost.
    func testAnEarlierBuildsJoinTableForAToManyWithoutAnInverseStillReads() throws {
        let dir = TemporaryDirectory()
        let model = Self.cocktails
        let (_, context) = try makeStack(try model(), in: dir)
        try context.performAndWait {
            let drink = try context.insertNewObject(forEntityName: "Cocktail")
            try drink.setValue("sour", forKey: "name")
            let part = try context.insertNewObject(forEntityName: "Ingredient")
            try part.setValue("oz", forKey: "unit")
            try drink.setValue([part], forKey: "spec")
            try context.save()
        }
        let store = dir.file("store.sqlite")
        let sql = SQLiteConnectionForTests(store)
        try sql.run("""
            CREATE TABLE Z_1SPEC ( Z_1INV_SPEC INTEGER, Z_2SPEC INTEGER, PRIMARY KEY (Z_1INV_SPEC, Z_2SPEC) );
            INSERT INTO Z_1SPEC SELECT Z1SPEC, Z_PK FROM ZINGREDIENT WHERE Z1SPEC IS NOT NULL;
            DROP INDEX ZINGREDIENT_Z1SPEC_INDEX; ALTER TABLE ZINGREDIENT DROP COLUMN Z1SPEC;
            """)
        let legacy = try model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: legacy, probes: .disabled)
        try coordinator.addPersistentStore(at: store)
        XCTAssertEqual(legacy.joinTables.map(\.name), ["Z_1SPEC"])
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let drink = try XCTUnwrap(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Cocktail")).first)
            XCTAssertEqual(drink.objects(forRelationship: "spec").map { $0.value(forKey: "unit") as? String }, ["oz"])
            let dash = try reader.insertNewObject(forEntityName: "Ingredient")
            try dash.setValue("dash", forKey: "unit")
            try drink.setValue(drink.objects(forRelationship: "spec") + [dash], forKey: "spec")
            try reader.save()
        }
        XCTAssertEqual(try sql.strings("SELECT Z_1INV_SPEC || ' ' || Z_2SPEC FROM Z_1SPEC ORDER BY Z_2SPEC"), ["1 1", "1 2"])
    }
}

extension JoinTableLayoutTests {
    /// A `Z_PRIMARYKEY` that does not keep a sub-entity right after its parent is refused, naming the entity; the model
    /// that failed to open it keeps the rules' numbers and makes a new store as before.
    func testANumberingThatSplitsAHierarchyIsRefused() throws {
        let dir = TemporaryDirectory()
        func model() throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [
                EntityDescription(name: "Alpha", properties: [AttributeDescription(name: "name", type: .string)]),
                EntityDescription(name: "AlphaSub", parent: "Alpha", properties: [AttributeDescription(name: "extra", type: .string)]),
                EntityDescription(name: "Beta", properties: [AttributeDescription(name: "name", type: .string)]),
            ])
        }
        _ = try makeStack(try model(), in: dir)
        try SQLiteConnectionForTests(dir.file("store.sqlite")).run("UPDATE Z_PRIMARYKEY SET Z_ENT = 100 WHERE Z_ENT = 2; UPDATE Z_PRIMARYKEY SET Z_ENT = 2 WHERE Z_ENT = 3; UPDATE Z_PRIMARYKEY SET Z_ENT = 3 WHERE Z_ENT = 100")
        let refused = try model()
        XCTAssertThrowsError(try PersistentStoreCoordinator(managedObjectModel: refused, probes: .disabled).addPersistentStore(at: dir.file("store.sqlite"))) { error in
            XCTAssertTrue("\(error)".contains("AlphaSub") && "\(error)".contains("sub-entities right after"), "\(error)")
        }
        XCTAssertEqual(refused.entities.map { "\($0.entityNumber) \($0.name)" }, ["1 Alpha", "2 AlphaSub", "3 Beta"])
        _ = try makeStack(refused, in: dir, name: "new.sqlite")
        XCTAssertEqual(try SQLiteConnectionForTests(dir.file("new.sqlite")).strings("SELECT Z_ENT || ' ' || Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT"),
                       ["1 Alpha", "2 AlphaSub", "3 Beta"])
    }
}

extension JoinTableLayoutTests {
    /// Cocktail.spec, a to-many without an inverse, to Ingredient.
    static func cocktails() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Cocktail", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "spec", destination: "Ingredient", isToMany: true),
            ]),
            EntityDescription(name: "Ingredient", properties: [AttributeDescription(name: "unit", type: .string)]),
        ])
    }
}

/// Raw SQL on a store file, for tests that set up what another program would have written.
struct SQLiteConnectionForTests {
    let url: URL
    init(_ url: URL) { self.url = url }

    func run(_ script: String) throws {
        let connection = try SQLiteConnection(path: url.path, create: false)
        try connection.execute(script)
    }

    func strings(_ query: String) throws -> [String] {
        let connection = try SQLiteConnection(path: url.path, create: false, readOnly: true)
        let statement = try connection.prepare(query)
        var result: [String] = []
        while try statement.step() { result.append(statement.text(at: 0)) }
        return result
    }
}
