import CSQLite
import Foundation
import XCTest

/// Stores whose key columns hold what Core Data never writes — negative, zero, `Int64.min`/`max`, keys past
/// `Limits.primaryKeys`, NULL, text, reals, blobs, rows whose entity disagrees with what refers to them — given to
/// the real binary: each is read as it is or refused with an error naming the table, column and row; never a crash,
/// and the store is left as it was.
final class HostileStoreTests: CLITestCase {
    /// Party (Person, Company) with a self to-one to the hierarchy (an entity column), a many-to-many to Tag (a join
    /// table) and an ordered to-many to Note (an order column).
    func partyModel() throws -> String {
        try write("party.json", """
        {"entities": [
         {"name": "Party", "attributes": [{"name": "name", "type": "string"}],
          "relationships": [{"name": "owner", "destination": "Party", "inverse": "owned"},
                            {"name": "owned", "destination": "Party", "inverse": "owner", "toMany": true},
                            {"name": "tags", "destination": "Tag", "inverse": "parties", "toMany": true},
                            {"name": "notes", "destination": "Note", "inverse": "party", "toMany": true, "ordered": true}]},
         {"name": "Person", "parent": "Party", "attributes": [{"name": "age", "type": "integer64"}]},
         {"name": "Company", "parent": "Party", "attributes": [{"name": "size", "type": "integer32"}]},
         {"name": "Tag", "attributes": [{"name": "label", "type": "string"}],
          "relationships": [{"name": "parties", "destination": "Party", "inverse": "tags", "toMany": true}]},
         {"name": "Note", "attributes": [{"name": "text", "type": "string"}],
          "relationships": [{"name": "party", "destination": "Party", "inverse": "notes"}]}
        ]}
        """)
    }

    /// A store of the party model (Company 1; Persons 2 and 3; Tags 1 and 2; Notes 1–3), changed by `sql`.
    func partyStore(_ model: String, _ name: String, _ sql: String) throws -> String {
        let store = dir.appendingPathComponent(name).path
        let data = try write("party-data.json", """
        {"Company": [{"@id": "c1", "name": "Acme", "size": 10, "tags": ["t1"]}],
         "Person": [{"@id": "p1", "name": "Ann", "age": 30, "owner": "c1", "tags": ["t1", "t2"]}, {"@id": "p2", "name": "Bob", "age": 40, "owner": "p1"}],
         "Tag": [{"@id": "t1", "label": "x"}, {"@id": "t2", "label": "y"}],
         "Note": [{"@id": "n1", "text": "a", "party": "p1"}, {"@id": "n2", "text": "b", "party": "p1"}, {"@id": "n3", "text": "c", "party": "c1"}]}
        """)
        let load = try run(["load", "--model", model, "--store", store, data])
        XCTAssertEqual(load.status, 0, load.stderr)
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(store, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        XCTAssertEqual(sqlite3_exec(db, sql + "; PRAGMA wal_checkpoint(TRUNCATE);", nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)))
        return store
    }

    /// The read commands a user points at a store, each reaching the rows another way.
    func readCommands(_ model: String, _ store: String) -> [[String]] {
        let query = ["query", "--model", model, "--store", store]
        return [query + ["Party"], query + ["Person", "--prefetch", "owner"], query + ["Note", "--prefetch", "party"],
                query + ["Party", "--prefetch", "notes", "--prefetch", "tags"], query + ["Note", "--batch-size", "2"],
                query + ["Party", "--result", "ids"], query + ["Party", "--result", "dictionary", "--properties", "owner"],
                query + ["Tag"], ["diagram", model, "--store", store, "-o", "graph.svg"]]
    }

    func testEveryBadKeyIsRefusedNamingTheTableColumnAndRow() throws {
        let model = try partyModel()
        // (change, the error's table and column, its row) — each crashed, or was read as another object, before.
        let cases: [(String, String, String)] = [
            ("UPDATE ZPARTY SET Z_PK = -3 WHERE Z_PK = 3", "table ZPARTY, column Z_PK", "the row with Z_PK -3: -3"),
            ("UPDATE ZPARTY SET Z_PK = 0 WHERE Z_PK = 3", "table ZPARTY, column Z_PK", "the row with Z_PK 0: 0"),
            ("UPDATE ZPARTY SET Z_PK = -9223372036854775808 WHERE Z_PK = 3", "table ZPARTY, column Z_PK", "-9223372036854775808"),
            ("UPDATE ZPARTY SET Z_PK = 9223372036854775807 WHERE Z_PK = 3", "table ZPARTY, column Z_PK", "9223372036854775807"),
            ("UPDATE ZPARTY SET Z_PK = 281474976710656 WHERE Z_PK = 3", "table ZPARTY, column Z_PK", "281474976710656 — a key must be a whole number from 1 to 281474976710655 (Limits.primaryKeys)"),
            ("UPDATE ZTAG SET Z_PK = -1 WHERE Z_PK = 1", "table ZTAG, column Z_PK", "the row with Z_PK -1"),
            ("UPDATE ZPARTY SET Z_ENT = 99 WHERE Z_PK = 2", "table ZPARTY, column Z_ENT", "the row with Z_PK 2: 99 — an entity number here must be one of 2 to 4 (Party or a sub-entity)"),
            ("UPDATE ZPARTY SET Z_ENT = -1 WHERE Z_PK = 2", "table ZPARTY, column Z_ENT", "the row with Z_PK 2: -1"),
            ("UPDATE ZPARTY SET Z_ENT = NULL WHERE Z_PK = 2", "table ZPARTY, column Z_ENT", "the row with Z_PK 2: NULL"),
            ("UPDATE ZPARTY SET Z_ENT = 'Person' WHERE Z_PK = 2", "table ZPARTY, column Z_ENT", "the text 'Person'"),
            ("UPDATE ZPARTY SET Z_ENT = 4.5 WHERE Z_PK = 2", "table ZPARTY, column Z_ENT", "the real 4.5"),
            ("UPDATE ZPARTY SET Z_OPT = 'x' WHERE Z_PK = 2", "table ZPARTY, column Z_OPT", "the row with Z_PK 2: the text 'x'"),
            ("UPDATE ZPARTY SET Z_OPT = x'00' WHERE Z_PK = 2", "table ZPARTY, column Z_OPT", "a blob of 1 byte"),
            ("UPDATE ZNOTE SET ZPARTY = -2 WHERE Z_PK = 1", "table ZNOTE, column ZPARTY", "the row with Z_PK 1: -2"),
            ("UPDATE ZNOTE SET ZPARTY = 0 WHERE Z_PK = 1", "table ZNOTE, column ZPARTY", "the row with Z_PK 1: 0"),
            ("UPDATE ZNOTE SET ZPARTY = 'abc' WHERE Z_PK = 1", "table ZNOTE, column ZPARTY", "the text 'abc'"),
            ("UPDATE ZNOTE SET ZPARTY = 2.5 WHERE Z_PK = 1", "table ZNOTE, column ZPARTY", "the real 2.5"),
            ("UPDATE ZNOTE SET Z2_PARTY = 9 WHERE Z_PK = 1", "table ZNOTE, column Z2_PARTY", "the row with Z_PK 1: 9 — an entity number here must be one of 2 to 4"),
            ("UPDATE ZNOTE SET Z2_PARTY = NULL WHERE Z_PK = 1", "table ZNOTE, column Z2_PARTY", "the row with Z_PK 1: NULL"),
            ("UPDATE ZPARTY SET ZOWNER = 9223372036854775807 WHERE Z_PK = 2", "table ZPARTY, column ZOWNER", "the row with Z_PK 2: 9223372036854775807"),
            ("UPDATE Z_2TAGS SET Z_5TAGS = -1 WHERE Z_2PARTIES = 2 AND Z_5TAGS = 2", "table Z_2TAGS, column Z_5TAGS", "the row with Z_2PARTIES 2: -1"),
            ("UPDATE Z_2TAGS SET Z_5TAGS = 'two' WHERE Z_2PARTIES = 2 AND Z_5TAGS = 2", "table Z_2TAGS, column Z_5TAGS", "the text 'two'"),
            // Duplicates across sub-entities: Person 2's owner is said to be a Person, where row 1 is a Company.
            ("UPDATE ZPARTY SET Z2_OWNER = 4 WHERE Z_PK = 2", "table ZPARTY, column Z_ENT", "the row with Z_PK 1: 3 (Company) — the store refers to this row as Person (entity 4) elsewhere"),
            // A table without its primary key, holding key 2 twice: a Person and a Company.
            ("CREATE TABLE OLD AS SELECT * FROM ZPARTY; DROP TABLE ZPARTY; "
                + "CREATE TABLE ZPARTY (Z_PK INTEGER, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER, Z2_OWNER INTEGER, ZSIZE INTEGER, ZAGE INTEGER, ZNAME VARCHAR); "
                + "INSERT INTO ZPARTY SELECT * FROM OLD; DROP TABLE OLD; INSERT INTO ZPARTY VALUES (2, 3, 1, NULL, NULL, 5, NULL, 'twin')",
             "table ZPARTY, column Z_ENT", "the row with Z_PK 2: 3 (Company) — the store refers to this row as Person (entity 4) elsewhere"),
        ]
        var refused: [String: Int] = [:]
        for (index, (sql, place, row)) in cases.enumerated() {
            let store = try partyStore(model, "case\(index).sqlite", sql)
            let before = try Data(contentsOf: URL(fileURLWithPath: store))
            for command in readCommands(model, store) {
                let result = try run(command)
                XCTAssertTrue(result.status == 0 || result.status == 1, "\(sql) | \(command.dropFirst(3)): exit \(result.status)\n\(result.stderr.prefix(400))")
                guard result.status == 1 else { continue }
                XCTAssertTrue(result.stderr.hasPrefix("faultline \(command[0]): the store is damaged: table "), "\(sql) | \(command): \(result.stderr)")
                if result.stderr.contains(place + ", the row with ") && result.stderr.contains(row) { refused[sql, default: 0] += 1 }
            }
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "\(sql): the store is left as it was")
        }
        for (sql, place, row) in cases {
            XCTAssertGreaterThan(refused[sql] ?? 0, 0, "\(sql): some read command names \(place), \(row)")
        }
    }

    /// What is not a Core Data key but can be read as what it is: versions of any whole number or NULL, keys far
    /// apart, a NULL destination with its entity column.
    func testValuesThatCanBeReadAreRead() throws {
        let model = try partyModel()
        let store = try partyStore(model, "odd.sqlite", """
            UPDATE ZPARTY SET Z_OPT = NULL WHERE Z_PK = 1; UPDATE ZPARTY SET Z_OPT = -5 WHERE Z_PK = 2;
            UPDATE ZPARTY SET Z_OPT = 9223372036854775807 WHERE Z_PK = 3; UPDATE ZNOTE SET Z_OPT = 0;
            UPDATE ZTAG SET Z_PK = 281474976710655 WHERE Z_PK = 2; UPDATE Z_2TAGS SET Z_5TAGS = 281474976710655 WHERE Z_5TAGS = 2;
            UPDATE ZPARTY SET ZOWNER = NULL, Z2_OWNER = NULL WHERE Z_PK = 3
            """)
        let parties = try run(["query", "--model", model, "--store", store, "Party", "--prefetch", "notes", "--prefetch", "tags", "--format", "table"])
        XCTAssertEqual(parties.status, 0, parties.stderr)
        XCTAssertTrue(parties.stdout.contains("Tag/p281474976710655"), parties.stdout)
        let notes = try run(["query", "--model", model, "--store", store, "Note", "--prefetch", "party"])
        XCTAssertEqual(notes.status, 0, notes.stderr)
        XCTAssertEqual(notes.stdout.components(separatedBy: "\"text\"").count - 1, 3)
        // A version of Int64.max is saved past (a new version, not an overflow): the object changes once, as asked.
        let update = try run(["load", "--model", model, "--store", store, try write("more.json", #"{"Tag": [{"label": "z"}]}"#)])
        XCTAssertEqual(update.status, 0, update.stderr)
    }

    /// New keys run from Z_PRIMARYKEY's Z_MAX: a Z_MAX without room for them is refused and nothing is written.
    func testKeyAllocationPastTheLargestKeyIsRefused() throws {
        let model = try partyModel()
        for (index, (value, shown)) in [("9223372036854775807", "9223372036854775807"), ("281474976710655", "281474976710655"), ("-7", "-7"),
                                        ("'many'", "the text 'many'")].enumerated() {
            let store = try partyStore(model, "max\(index).sqlite", "UPDATE Z_PRIMARYKEY SET Z_MAX = \(value) WHERE Z_NAME = 'Tag'")
            let before = try Data(contentsOf: URL(fileURLWithPath: store))
            let load = try run(["load", "--model", model, "--store", store, try write("tag.json", #"{"Tag": [{"label": "z"}]}"#)])
            XCTAssertEqual(load.status, 1, "Z_MAX \(value): \(load.stderr)")
            XCTAssertTrue(load.stderr.contains("table Z_PRIMARYKEY, column Z_MAX, the row with Z_ENT 5 (Tag): \(shown)"), load.stderr)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store)), before, "Z_MAX \(value): nothing written")
        }
    }
}
