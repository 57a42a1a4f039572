import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// Reading Core Data's SQL debug output: every line shape of ../shared/fixtures/coredata-sqldebug/SHAPES.md, written
/// here for the test, and the ways people paste it.
final class CoreDataLogTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func read(_ text: String, model: ManagedObjectModel? = nil) throws -> TraceFile {
        let path = dir.appendingPathComponent("console-\(UUID().uuidString).txt").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let trace = try TraceFile(path: path, model: model)
        assertTimeAccounted(trace)
        return trace
    }

    static let uri = "x-coredata://6C1B6B1E-2B7A-4E0C-9F7E-0D3C1A2B3C4D"

    /// One line (or group of lines) per shape, in the order SHAPES.md lists them.
    static let shapes = """
    CoreData: annotation: Connecting to sqlite database file at "/Users/me/Library/Developer/CoreSimulator/Devices/X/Library/Application Support/Notes.sqlite"
    CoreData: sql: pragma recursive_triggers=1
    CoreData: annotation: sql execution time: 0.0001s
    CoreData: sql: pragma journal_mode=wal
    CoreData: sql: pragma cache_size=1000
    CoreData: sql: pragma auto_vacuum
    CoreData: sql: pragma page_count
    CoreData: sql: pragma freelist_count
    CoreData: sql: SELECT TBL_NAME FROM SQLITE_MASTER WHERE TBL_NAME = 'Z_METADATA'
    CoreData: sql: SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA
    CoreData: debug: Remote Change Notification - registered for notifications on Notes.sqlite
    CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZFOLDER FROM ZNOTE t0 WHERE  t0.ZTITLE = ? ORDER BY t0.ZCREATED DESC  LIMIT 20
    CoreData: details: SQLite bind[0] = "Groceries"
    CoreData: details: SQLite: EXPLAIN QUERY PLAN SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZFOLDER FROM ZNOTE t0 WHERE  t0.ZTITLE = ? ORDER BY t0.ZCREATED DESC  LIMIT 20
    CoreData: details: SQLite: |--SCAN t0
    CoreData: details: SQLite: `--USE TEMP B-TREE FOR ORDER BY
    CoreData: annotation: sql connection fetch time: 0.0021s
    CoreData: annotation: fetch using NSSQLiteStatement <0x600002c4c000> on entity 'Note' with sql text 'SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZFOLDER FROM ZNOTE t0 WHERE  t0.ZTITLE = ? ORDER BY t0.ZCREATED DESC  LIMIT 20' returned 2 rows with values: (x, y)
    CoreData: annotation: total fetch execution time: 0.0025s for 2 rows.
    CoreData: sql: SELECT t0.Z_ENT, t0.Z_PK, t0.Z_OPT, t0.ZNAME, t0.ZPARENT FROM ZFOLDER t0 WHERE  t0.Z_PK = ?
    CoreData: annotation: sql connection fetch time: 0.0003s
    CoreData: annotation: total fetch execution time: 0.0004s for 1 rows.
    CoreData: annotation: fault fulfilled from database for : 0x9c1a2d0e4f5a6b7c <\(uri)/SmartFolder/p3> with row values: <NSSQLRow: 0x600 SmartFolder p3>
    CoreData: sql: SELECT COUNT(*) FROM ZNOTE
    CoreData: annotation: sql connection fetch time: 0.0002s
    CoreData: annotation: total count request execution time: 0.0003s for count of 42.
    CoreData: annotation: count request <NSFetchRequest: 0x600001d0c1c0> (entity: Note; predicate: ((null)); sortDescriptors: ((null)); type: NSCountResultType; ) returned 42
    CoreData: sql: SELECT COUNT(DISTINCT t0.Z_PK) FROM ZNOTE t0 WHERE  t0.ZPINNED = ?
    CoreData: annotation: sql connection fetch time: 0.0002s
    CoreData: annotation: total count request execution time: 0.0002s for count of 7.
    CoreData: sql: SELECT  max( t0.ZCREATED), t0.ZFOLDER FROM ZNOTE t0 GROUP BY  t0.ZFOLDER HAVING __var0 > ?
    CoreData: annotation: sql connection fetch time: 0.0004s
    CoreData: annotation: total fetch execution time: 0.0005s for 3 rows.
    2014-07-30 12:00:00.123 Notes[1234:c07] CoreData: sql: SELECT 0, t0.Z_PK FROM ZNOTE t0 ORDER BY t0.ZCREATED
    2014-07-30 12:00:00.125 Notes[1234:c07] CoreData: annotation: sql connection fetch time: 0.0050s
    2014-07-30 12:00:00.126 Notes[1234:c07] CoreData: annotation: total fetch execution time: 0.0061s for 5000 rows.
    CoreData: annotation: Bound intarray _Z_intarray0
    CoreData: annotation: Bound intarray values.
    CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZFOLDER FROM ZNOTE t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)   LIMIT 20
    CoreData: annotation: sql connection fetch time: 0.0008s
    CoreData: annotation: total fetch execution time: 0.0009s for 20 rows.
    CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZFOLDER FROM ZNOTE t0 WHERE  t0.ZARCHIVED = ?
    CoreData: annotation: sql connection fetch time: 0.0030s
    CoreData: annotation: Bound intarray _Z_intarray1
    CoreData: annotation: Bound intarray values.
    CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0 WHERE  t0.ZNOTE IN (SELECT * FROM _Z_intarray1)  ORDER BY t0.ZNOTE
    CoreData: annotation: sql connection fetch time: 0.0011s
    CoreData: annotation: Prefetching with key 'tags'.  Got 33 rows.
    CoreData: annotation: total fetch execution time: 0.0049s for 12 rows.
    CoreData: sql: SELECT 0, t0.Z_PK FROM Z_2NOTES t1 JOIN ZTAG t0 ON t0.Z_PK = t1.Z_5TAGS WHERE t1.Z_2NOTES = ?
    CoreData: annotation: sql connection fetch time: 0.0006s
    CoreData: annotation: to-many relationship fault "tags" for objectID 0x8c2b3e1f <\(uri)/Note/p9> fulfilled from database.  Got 4 rows with values: (a, b, c, d)
    CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE FROM ZNOTE t0 WHERE (NSCoreDataStringSearch( t0.ZTITLE, ?, 385, 0) AND  t0.ZARCHIVED = ?)
    CoreData: details: SQLite: EXPLAIN QUERY PLAN SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE FROM ZNOTE t0 WHERE (NSCoreDataStringSearch( t0.ZTITLE, ?, 385, 0) AND  t0.ZARCHIVED = ?)
    0 0 0 SCAN TABLE ZNOTE AS t0
    CoreData: annotation: sql connection fetch time: 0.0040s
    CoreData: annotation: total fetch execution time: 0.0041s for 1 rows.
    CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZFOLDER t0 WHERE  t0.ZNAME = ?
    CoreData: details: SQLite: EXPLAIN QUERY PLAN SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZFOLDER t0 WHERE  t0.ZNAME = ?
    0 0 0 SEARCH TABLE ZFOLDER AS t0 USING COVERING INDEX ZFOLDER_ZNAME_INDEX (ZNAME=?) (~10 rows)
    CoreData: annotation: sql connection fetch time: 0.0001s
    CoreData: annotation: total fetch execution time: 0.0001s for 1 rows.
    CoreData: sql: BEGIN EXCLUSIVE
    CoreData: sql: SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?
    CoreData: sql: UPDATE OR FAIL Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?
    CoreData: sql: COMMIT
    CoreData: sql: BEGIN EXCLUSIVE
    CoreData: sql: UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?
    CoreData: sql: COMMIT
    CoreData: sql: BEGIN EXCLUSIVE
    CoreData: sql: INSERT INTO ZNOTE(Z_PK, Z_ENT, Z_OPT, ZFOLDER, ZCREATED, ZTITLE) VALUES(?, ?, ?, ?, ?, ?)
    CoreData: details: SQLite bind[0] = (int64)51
    CoreData: annotation: sql execution time: 0.0002s
    CoreData: sql: UPDATE ZFOLDER SET ZNAME = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?
    CoreData: annotation: sql execution time: 0.0001s
    CoreData: sql: DELETE FROM ZTAG WHERE Z_PK = ? AND Z_OPT = ?
    CoreData: sql: COMMIT
    CoreData: sql: BEGIN EXCLUSIVE
    CoreData: sql: INSERT OR IGNORE INTO ZNOTE(Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES(?, ?, ?, ?) ON CONFLICT(ZTITLE) DO UPDATE SET Z_OPT = Z_OPT+1 , ZTITLE = excluded.ZTITLE
    CoreData: sql: COMMIT
    CoreData: sql: CREATE TRIGGER IF NOT EXISTS Z_DA_ZFOLDER_Folder_noteCount_UPDATE AFTER UPDATE OF Z_OPT ON ZNOTE FOR EACH ROW BEGIN UPDATE ZFOLDER SET ZNOTECOUNT = ZNOTECOUNT WHERE Z_PK = NEW.ZFOLDER; SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZFOLDER', 0, NEW.ZFOLDER, 'ZNOTECOUNT', 0); END
    CoreData: sql: SELECT TBL_NAME FROM SQLITE_MASTER WHERE TBL_NAME = 'ATRANSACTION'
    CoreData: debug: CoreData+CloudKit: -[PFCloudKitSetupAssistant _setupIfNecessary](1133): <NSCloudKitMirroringDelegate: 0x600003d8c0f0>: Successfully set up CloudKit integration for store
    CoreData+CloudKit: -[NSCloudKitMirroringDelegate _requestAbortedNotInitialized:](2200): <NSCloudKitMirroringDelegate: 0x600003d8c0f0>: Never successfully initialized and cannot execute request

    """

    func testEveryShapeIsUnderstood() throws {
        let log = try read(Self.shapes)
        XCTAssertEqual(log.source, .coreDataLog)
        let stats = try XCTUnwrap(log.logStatistics)
        XCTAssertEqual(stats.notUnderstood, 0, "first not understood: line \(stats.firstNotUnderstood ?? 0)")
        XCTAssertEqual(stats.otherLines, 0, "the old-form plan rows without a prefix are plan rows")
        let events = log.events
        let connect = try XCTUnwrap(events.first { $0.kind == .connect })
        XCTAssertTrue(connect.name?.hasSuffix("/Notes.sqlite") == true)

        let fetches = events.filter { $0.kind == .fetch }
        XCTAssertEqual(fetches.map(\.entity), ["Note", "Note", "Note", "Note", "Note", "Note", "Note", "ZFOLDER"],
                       "the level-3 line names ZNOTE's entity; ZFOLDER's is not named")
        XCTAssertEqual(fetches.map(\.resultType), ["objects", "count", "count", "objects", "objectIDs", "objects", "objects", "objects"])
        XCTAssertEqual(fetches.map(\.results), [2, 42, 7, 3, 5000, 12, 1, 1])
        XCTAssertEqual(fetches[0].predicate, "WHERE t0.ZTITLE = ? ORDER BY t0.ZCREATED DESC", "Core Data's double spaces collapsed, LIMIT dropped")
        XCTAssertEqual(fetches[0].sort, ["ZCREATED"])
        XCTAssertEqual(fetches[4].batchSize, 1, "keys first: a batched fetch")
        XCTAssertEqual(fetches[4].statements, 2, "its batch belongs to it")
        XCTAssertEqual(fetches[5].prefetch, ["tags"])
        XCTAssertEqual(fetches[5].statements, 2, "the prefetch's SELECT belongs to its fetch")

        let faults = events.filter { $0.kind == .cacheMiss }
        XCTAssertEqual(faults.count, 2)
        XCTAssertEqual(faults[0].faultKind, "object")
        XCTAssertEqual(faults[0].object, "\(Self.uri)/SmartFolder/p3")
        XCTAssertEqual(faults[0].objectEntity, "SmartFolder")
        XCTAssertEqual(faults[1].faultKind, "relationship")
        XCTAssertEqual(faults[1].relationship, "tags")
        XCTAssertEqual(faults[1].objectEntity, "Note")
        XCTAssertEqual(faults[1].rows, 4)

        let saves = events.filter { $0.kind == .save }
        XCTAssertEqual(saves.count, 2, "key allocations are not saves")
        XCTAssertEqual(saves[0].inserted, ["Note": 1])
        XCTAssertEqual(saves[0].updated, ["ZFOLDER": 1])
        XCTAssertEqual(saves[0].deleted, ["ZTAG": 1])
        XCTAssertEqual(saves[1].inserted, ["Note": 1], "a batch insert's upsert")

        let plans = events.filter { $0.kind == .queryPlan }
        XCTAssertEqual(plans.map(\.planDetails), [["SCAN t0", "USE TEMP B-TREE FOR ORDER BY"], ["SCAN ZNOTE AS t0"],
                                                  ["SEARCH ZFOLDER AS t0 USING COVERING INDEX ZFOLDER_ZNAME_INDEX (ZNAME=?) (~10 rows)"]])
        XCTAssertEqual(plans[0].sql, "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE, t0.ZFOLDER FROM ZNOTE t0 WHERE t0.ZTITLE = ? ORDER BY t0.ZCREATED DESC LIMIT 20")
        let statements = events.filter { $0.kind == .statement }
        XCTAssertEqual(statements.filter { $0.purpose == "schema" }.count, 10, "pragmas and Core Data's catalogue reads")
        XCTAssertEqual(statements.filter { $0.purpose == "keys" }.count, 2)
        XCTAssertEqual(statements.filter { $0.purpose == "relationshipFault" }.count, 1)
        XCTAssertEqual(statements.filter { $0.purpose == "fault" }.count, 1)
        XCTAssertEqual(statements.first { $0.sql?.hasPrefix("INSERT INTO ZNOTE") == true }?.duration, 0.0002)

        // The plan rows make findings: the scan of ZNOTE by title, named by the entity the log's level-3 line gives.
        let findings = Analyzers().findings(in: log)
        XCTAssertTrue(findings.contains { $0.kind == .fullScan && $0.evidence.hasPrefix("Note: 1 run scanned the whole table (SCAN t0)") }, "\(findings.map(\.evidence))")
        // The scan's sort is the same finding, with one index for both (an equality, then the sort's column).
        XCTAssertFalse(findings.contains { $0.kind == .tempBTree }, "\(findings.map(\.evidence))")
        XCTAssertTrue(findings.contains { $0.kind == .fullScan && $0.fix.contains("CREATE INDEX ZNOTE_ZTITLE_ZCREATED_INDEX ON ZNOTE (ZTITLE, ZCREATED)") },
                      "\(findings.map(\.fix))")
        XCTAssertTrue(findings.allSatisfy { !$0.fix.contains("The log names no code") }, "the hint is the page's, once")
    }

    /// Level 3 of the iOS 6 era: `fetch using NSSQLiteStatement … returned N rows with values: (…)` carries a whole
    /// fetch — its entity, its SQL and its rows. A log of only such lines gives its fetches; with the `sql:` line
    /// before it the statement is that one (not counted twice); with a total after it the total times it. The values
    /// are skipped however long, with quotes or the words "returned 9 rows" in them, over several lines, or cut off.
    func testLevelThreeLinesAreFetches() throws {
        let only = try read("""
            CoreData: annotation: fetch using NSSQLiteStatement <0x8c8cd40> on entity 'Event' with sql text 'SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTIMESTAMP FROM ZEVENT t0 ORDER BY t0.ZTIMESTAMP DESC' returned 3 rows with values: (
                "<NSSQLRow: 0x8c90bb0>{Event 1-1-1 timeStamp=2013-02-01 note='it returned 9 rows' }",
                "<NSSQLRow: 0x8c90bc0>{Event 1-2-1 timeStamp=2013-02-02 }",
                "<NSSQLRow: 0x8c90bd0>{Event 1-3-1 timeStamp=2013-02-03 }"
            )
            CoreData: annotation: fetch using NSSQLiteStatement <0x8c8ce00> on entity 'Tag' with sql text 'SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0 WHERE  t0.ZNAME = ?' returned 1 rows with values: ("<NSSQLRow: 0x1>{Tag 2-1-1 name='a' returned 4 rows'}")
            CoreData: annotation: fetch using NSSQLiteStatement <0x8c8ce10> on entity 'Tag' with sql text 'SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0' returned 250 rows with values: ("<NSSQLRow: 0x1>{Tag 2-1-1 name='a'}", "<NSSQLRow: 0x2>{Ta
            """)
        let stats = try XCTUnwrap(only.logStatistics)
        XCTAssertEqual(stats.notUnderstood, 0)
        XCTAssertEqual(stats.otherLines, 0, "the value rows are the line's, not the app's")
        let fetches = only.events.filter { $0.kind == .fetch }
        XCTAssertEqual(fetches.map(\.entity), ["Event", "Tag", "Tag"])
        XCTAssertEqual(fetches.map(\.rows), [3, 1, 250])
        XCTAssertEqual(fetches.map(\.statements), [1, 1, 1])
        XCTAssertEqual(fetches.map(\.sort), [["ZTIMESTAMP"], [], []])
        XCTAssertEqual(fetches[1].predicate, "WHERE t0.ZNAME = ?")
        XCTAssertEqual(only.events.filter { $0.kind == .statement }.map(\.sql),
                       ["SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTIMESTAMP FROM ZEVENT t0 ORDER BY t0.ZTIMESTAMP DESC",
                        "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0 WHERE t0.ZNAME = ?", "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0"])

        // With the `sql:` lines (timed) and no totals: one statement each, timed by its connection time.
        let withSQL = try read("""
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0 WHERE  t0.ZNAME = ?
            CoreData: details: SQLite bind[0] = "a"
            CoreData: annotation: sql connection fetch time: 0.0040s
            CoreData: annotation: fetch using NSSQLiteStatement <0x8c8ce00> on entity 'Tag' with sql text 'SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0 WHERE  t0.ZNAME = ?' returned 2 rows with values: (
                "<NSSQLRow: 0x1>{Tag 2-1-1 name='a'}",
                "<NSSQLRow: 0x2>{Tag 2-2-1 name='a'}"
            )
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0
            CoreData: annotation: sql connection fetch time: 0.0010s
            CoreData: annotation: fetch using NSSQLiteStatement <0x8c8ce10> on entity 'Tag' with sql text 'SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZTAG t0' returned 7 rows with values: ()
            CoreData: annotation: total fetch execution time: 0.0012s for 7 rows.
            """)
        XCTAssertEqual(withSQL.logStatistics?.notUnderstood, 0)
        XCTAssertEqual(withSQL.logStatistics?.otherLines, 0)
        let timed = withSQL.events.filter { $0.kind == .fetch }
        XCTAssertEqual(timed.map(\.rows), [2, 7])
        XCTAssertEqual(timed.map(\.statements), [1, 1])
        XCTAssertEqual(timed.map(\.duration), [0.004, 0.0012], "the first by its statement, the second by its total")
        XCTAssertEqual(withSQL.events.filter { $0.kind == .statement }.count, 2)
    }

    /// How people paste the log changes nothing the reader makes of it.
    func testPastedFormsReadAsTheBareLog() throws {
        let bare = Self.shapes.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func summary(_ trace: TraceFile) -> [String] {
            trace.events.map { e in
                "\(e.kind.rawValue)|\(e.sql ?? "")|\(e.entity ?? "")|\(e.results)|\(e.rows)|\(e.object ?? "")|\(e.relationship ?? "")|\(e.planDetails)|\(e.inserted)|\(e.duration)"
            }
        }
        let expected = summary(try read(Self.shapes))
        func coreDataPrefixed(_ transform: (String) -> String) -> String {
            bare.map { $0.hasPrefix("CoreData: ") ? transform($0) : $0 }.joined(separator: "\n")
        }
        let forms: [(String, String)] = [
            ("NSLog prefix", coreDataPrefixed { "2013-11-02 09:41:07.512 Notes[4312:a0b] " + $0 }),
            ("os_log prefix", coreDataPrefixed { "2023-10-12 18:22:01.004512+0200 Notes[812:40455] [error] " + $0 }),
            ("CoreData: stripped", coreDataPrefixed { String($0.dropFirst("CoreData: ".count)) }),
            ("start cut", coreDataPrefixed { String($0.dropFirst(5)) }),
            ("start cut more", coreDataPrefixed { String($0.dropFirst(7)) }),
            ("indented", coreDataPrefixed { "        " + $0 }),
            ("CRLF", bare.joined(separator: "\r\n")),
            ("colour", coreDataPrefixed { $0.replacingOccurrences(of: "time: ", with: "time: \u{1B}[1;32m").replacingOccurrences(of: "s for", with: "\u{1B}[0ms for") }),
            ("app output between", bare.flatMap { [$0, "2023-10-12 Notes: user tapped row 3", "Optional(\"debug print\")"] }.joined(separator: "\n")),
        ]
        for (name, text) in forms {
            let trace = try read(text)
            XCTAssertEqual(trace.logStatistics?.notUnderstood, 0, "\(name): first at \(trace.logStatistics?.firstNotUnderstood ?? 0)")
            XCTAssertEqual(summary(trace), expected, name)
        }
        // Faultline's own SQLDebug lines read the same way.
        let faultline = try read(coreDataPrefixed { "Faultline: " + $0.dropFirst("CoreData: ".count) })
        XCTAssertEqual(summary(faultline), expected)
    }

    /// What is not understood is counted and named; cut lines, binary noise and a huge line do not stop the reader.
    func testWhatIsNotUnderstoodIsCountedAndNothingStopsTheReader() throws {
        let text = """
        CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZNOTE t0 WHERE  t0.ZTITLE = ?
        CoreData: annotation: sql connection fetch time: 0.0010s
        CoreData: annotation: something no release of Core Data printed
        CoreData: annotation: total fetch execution time: banana for 3 rows.
        CoreData: annotation: fault fulfilled from database for : nothing here
        CoreData: details: what?
        CoreData: annotation: total fetch execution time: 0.0011s for 3 rows.
        CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT FROM ZNO
        CoreData: annotation: total fetch execution time: 0.0011s for 99999999999999999999 rows.
        warning: unused variable 'x'
        error: the build's own line
        """
        let trace = try read(text + "\n\u{0}\u{1}\u{7F}garbage\n" + "CoreData: sql: SELECT " + String(repeating: "t0.ZX, ", count: 200_000) + "1 FROM ZNOTE t0\n")
        let stats = try XCTUnwrap(trace.logStatistics)
        XCTAssertEqual(stats.notUnderstood, 5, "a count beyond Limits.traceCount is not read as anything")
        XCTAssertEqual(stats.firstNotUnderstood, 3)
        XCTAssertEqual(stats.otherLines, 3, "another program's warning: and error: lines, and the noise")
        XCTAssertEqual(trace.warnings, ["5 Core Data lines not understood, first at line 3"])
        XCTAssertEqual(trace.events.filter { $0.kind == .fetch }.map(\.results), [3])
        XCTAssertEqual(trace.events.filter { $0.kind == .statement }.count, 3, "a cut statement is still a statement")
        let page = ReportPage(inputs: [.init(trace: trace, analyzers: Analyzers())]).html
        XCTAssertTrue(page.contains("5 not understood (first at line 3)"))
        // Bytes that are not UTF-8 are read as replacement characters: a console copy is not rejected for one.
        var bytes = Data("CoreData: sql: SELECT 0, t0.Z_PK FROM ZNOTE t0 WHERE  t0.ZTITLE = 'caf".utf8)
        bytes.append(0xE9)
        bytes.append(contentsOf: Array("'\nCoreData: annotation: sql connection fetch time: 0.0001s\n".utf8))
        let path = dir.appendingPathComponent("latin1.txt").path
        try bytes.write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try TraceFile(path: path).events.count, 1)
    }

    /// With the model, a log's tables are its entities' names.
    func testAModelNamesTheTables() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Note", properties: [AttributeDescription(name: "title", type: .string)]),
        ])
        let trace = try read("""
        CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE FROM ZNOTE t0
        CoreData: annotation: sql connection fetch time: 0.0010s
        CoreData: annotation: total fetch execution time: 0.0011s for 3 rows.
        CoreData: sql: BEGIN EXCLUSIVE
        CoreData: sql: INSERT INTO ZNOTE(Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES(?, ?, ?, ?)
        CoreData: sql: COMMIT
        """, model: model)
        XCTAssertEqual(trace.events.first { $0.kind == .fetch }?.entity, "Note")
        XCTAssertEqual(trace.events.first { $0.kind == .save }?.inserted, ["Note": 1])
    }

    /// A log whose faults show only as one-row reads by key (no `fault fulfilled` lines) still shows the N+1, by the
    /// table's entity; partial-property fetches (`SELECT 1, …`) and subquery aliases read as fetches.
    func testFaultsSeenOnlyAsOneRowSelectsAreFaults() throws {
        let faults = (1...15).map { _ in """
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZAUTHOR t0 WHERE  t0.Z_PK = ?
            CoreData: annotation: sql connection fetch time: 0.0002s
            CoreData: annotation: total fetch execution time: 0.0003s for 1 rows.

            """ }.joined()
        let trace = try read("""
            CoreData: sql: SELECT 1, t0.Z_PK, t0.ZTITLE FROM ZPOST t0 WHERE ( t0.ZAUTHOR IN (SELECT n1_t0.Z_PK FROM ZAUTHOR n1_t0 WHERE  n1_t0.ZNAME = ?) AND  t0.ZDRAFT = ?)  LIMIT 5
            CoreData: annotation: sql connection fetch time: 0.0010s
            CoreData: annotation: total fetch execution time: 0.0011s for 5 rows.

            """ + faults)
        XCTAssertEqual(trace.logStatistics?.notUnderstood, 0)
        XCTAssertEqual(trace.events.filter { $0.kind == .fetch }.map(\.entity), ["ZPOST"])
        let storm = try XCTUnwrap(Analyzers().findings(in: trace).first { $0.kind == .nPlusOne })
        XCTAssertEqual(storm.entity, "ZAUTHOR")
        XCTAssertEqual(storm.count, 15)
    }

    /// A log as the issue describes it: an Order fetch, then 48 Customer faults each timed only by `sql execution
    /// time` (some with a `fault fulfilled` line), 12 Currency fetches, an Item fetch whose prefetch of 1,581
    /// attachments has its own total, and Core Data's `Changing objectID` line. Every fault costs its statement, to
    /// the microsecond; the N+1 ranks first and names `Order.customer` from the model; the Currency fetches are 12;
    /// the prefetch makes no "large fetch".
    func testFaultsCostTheirStatementsAndTheCostliestFindingComesFirst() throws {
        let trace = try read(Self.orderLog, model: Self.orderModel())
        XCTAssertEqual(trace.logStatistics?.notUnderstood, 0)
        let events = trace.events
        let faults = events.filter { $0.kind == .cacheMiss }
        XCTAssertEqual(faults.count, 48)
        XCTAssertTrue(faults.allSatisfy { $0.duration == 0.00054 && $0.via == "Order.customer" && $0.objectEntity == "Customer" })
        let fetches = events.filter { $0.kind == .fetch }
        XCTAssertEqual(fetches.map { $0.entity ?? "?" }, ["Order"] + Array(repeating: "Currency", count: 12) + ["Item"])
        XCTAssertEqual(fetches.map(\.rows), [48] + Array(repeating: 1, count: 12) + [190], "each fetch's rows are its statement's")
        XCTAssertEqual(fetches.last?.prefetch, ["attachments"])
        XCTAssertEqual(events.first { $0.sql?.contains("ZATTACHMENT") == true }?.rows, 1_581)

        let findings = Analyzers().findings(in: trace)
        let first = try XCTUnwrap(findings.first)
        XCTAssertEqual(first.kind, .nPlusOne, "\(findings.map { "\($0.kind) \($0.cost)" })")
        XCTAssertEqual(first.count, 48)
        XCTAssertEqual((first.cost * 1e6).rounded(), (48 * 0.00054 * 1e6).rounded(), "the faults' statements' time, to the microsecond")
        XCTAssertTrue(first.evidence.contains("likely through Order.customer (the Order fetch came before them, and it is Order's only to-one to Customer)"),
                      "an inference, said to be one: \(first.evidence)")
        XCTAssertTrue(first.fix.contains("request.relationshipKeyPathsForPrefetching = [\"customer\"]"), first.fix)
        XCTAssertEqual(first.inferredRelationship, "Order.customer")
        XCTAssertTrue(findings.dropFirst().contains { $0.kind == .repeatedFetch && $0.count == 12 }, "\(findings.map(\.evidence))")
        XCTAssertFalse(findings.contains { $0.kind == .largeFetchWithoutBatchSize }, "a prefetch is not a large fetch: \(findings.map(\.evidence))")
        XCTAssertEqual(findings.map(\.cost), findings.map(\.cost).sorted(by: >), "costliest first")
    }

    /// The same log without a model: the relationship is read off the SQL — the Order fetch selected `t0.ZCUSTOMER`
    /// just before the `ZCUSTOMER` faults — spelled as the log's URIs spell Customer, and said to be inferred in the
    /// evidence and in JSON (`relationship`, `relationshipInferred`).
    func testWithoutAModelTheNPlusOneNamesTheRelationshipTheFetchRead() throws {
        let trace = try read(Self.orderLog)
        let faults = trace.events.filter { $0.kind == .cacheMiss }
        XCTAssertEqual(faults.count, 48)
        XCTAssertTrue(faults.allSatisfy { $0.via == "Order.customer" && $0.viaFromLog && $0.objectEntity == "Customer" }, "\(faults.map { $0.objectEntity ?? "?" })")
        let findings = Analyzers().findings(in: trace)
        let first = try XCTUnwrap(findings.first)
        XCTAssertEqual(first.kind, .nPlusOne)
        XCTAssertEqual(first.count, 48, "one finding: faults seen by their SELECT and by their URI are the same entity's")
        XCTAssertTrue(first.evidence.hasPrefix("Customer: 48 faults fulfilled one at a time from SQLite (N+1), likely through Order.customer "
            + "(inferred from the log, no model given: the fetch of ZORDER read ZCUSTOMER just before them)"), first.evidence)
        XCTAssertTrue(first.fix.contains("prefetch it with the Order fetch: request.relationshipKeyPathsForPrefetching = [\"customer\"]"), first.fix)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: FindingsJSON.data([("console.txt", trace.source, findings)])) as? [[String: Any]])
        let object = try XCTUnwrap(json.first)
        XCTAssertEqual(object["relationship"] as? String, "Order.customer")
        XCTAssertEqual(object["relationshipInferred"] as? Bool, true)
        XCTAssertEqual(json.dropFirst().compactMap { $0["relationshipInferred"] as? Bool }.filter { $0 }.count, 0, "only the N+1 is inferred")

        // A fetch that did not read the faulted table's column names nothing.
        let unrelated = try read(Self.orderLog.replacingOccurrences(of: "t0.ZNUMBER, t0.ZCUSTOMER FROM ZORDER", with: "t0.ZNUMBER FROM ZORDER"))
        let storm = try XCTUnwrap(Analyzers().findings(in: unrelated).first { $0.kind == .nPlusOne })
        XCTAssertNil(storm.inferredRelationship)
        XCTAssertTrue(storm.fix.contains("prefetch the relationship that leads to Customer"), storm.fix)
    }

    static func orderModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Order", properties: [
                AttributeDescription(name: "number", type: .integer64),
                RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders"),
            ]),
            EntityDescription(name: "Customer", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "orders", destination: "Order", inverse: "customer", isToMany: true),
            ]),
            EntityDescription(name: "Currency", properties: [AttributeDescription(name: "code", type: .string)]),
            EntityDescription(name: "Item", properties: [
                AttributeDescription(name: "title", type: .string),
                RelationshipDescription(name: "attachments", destination: "Attachment", inverse: "item", isToMany: true),
            ]),
            EntityDescription(name: "Attachment", properties: [
                AttributeDescription(name: "size", type: .integer64),
                RelationshipDescription(name: "item", destination: "Item", inverse: "attachments"),
            ]),
        ])
    }

    static var orderLog: String {
        var log = """
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNUMBER, t0.ZCUSTOMER FROM ZORDER t0 ORDER BY t0.ZNUMBER
            CoreData: annotation: sql connection fetch time: 0.0010s
            CoreData: annotation: total fetch execution time: 0.0012s for 48 rows.

            """
        for i in 1...48 {
            log += """
                CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZCUSTOMER t0 WHERE  t0.Z_PK = ?
                CoreData: annotation: sql execution time: 0.00054s

                """
            if i % 2 == 0 { log += "CoreData: annotation: fault fulfilled from database for : 0x8c2b3e1f <\(Self.uri)/Customer/p\(i)>\n" }
        }
        for _ in 1...12 {
            log += """
                CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZCODE FROM ZCURRENCY t0 WHERE  t0.ZCODE = ?
                CoreData: annotation: sql connection fetch time: 0.0005s
                CoreData: annotation: total fetch execution time: 0.00055s for 1 rows.

                """
        }
        log += """
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE FROM ZITEM t0
            CoreData: annotation: sql connection fetch time: 0.0020s
            CoreData: annotation: Bound intarray _Z_intarray0
            CoreData: annotation: Bound intarray values.
            CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZSIZE, t0.ZITEM FROM ZATTACHMENT t0 WHERE  t0.ZITEM IN (SELECT * FROM _Z_intarray0)  ORDER BY t0.ZITEM
            CoreData: annotation: sql connection fetch time: 0.0030s
            CoreData: annotation: total fetch execution time: 0.0031s for 1581 rows.
            CoreData: annotation: Prefetching with key 'attachments'.  Got 1581 rows.
            CoreData: annotation: total fetch execution time: 0.0055s for 190 rows.
            CoreData: sql: BEGIN EXCLUSIVE
            CoreData: sql: INSERT INTO ZCURRENCY(Z_PK, Z_ENT, Z_OPT, ZCODE) VALUES(?, ?, ?, ?)
            CoreData: sql: COMMIT
            CoreData: annotation: Changing objectID 0x600000a1 <x-coredata:///Currency/t1> to 0x600000a2 <\(Self.uri)/Currency/p13>

            """
        return log
    }

    /// Each statement's time goes to the work that ran it: a batched fetch's batches (read after its total) to the
    /// fetch, a save's BEGIN to COMMIT to the save, a schema read to nothing — and all of it to the whole.
    func testStatementsBelongToTheWorkThatRanThem() throws {
        var log = """
            CoreData: sql: pragma cache_size=200
            CoreData: annotation: sql execution time: 0.0001s
            CoreData: sql: SELECT t0.Z_ENT, t0.Z_PK FROM ZNOTE t0 ORDER BY t0.ZDATE
            CoreData: annotation: sql connection fetch time: 0.0020s
            CoreData: annotation: total fetch execution time: 0.0021s for 500 rows.

            """
        for _ in 1...3 {
            log += """
                CoreData: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZTITLE FROM ZNOTE t0 WHERE  t0.Z_PK IN (SELECT * FROM _Z_intarray0)  ORDER BY t0.ZDATE LIMIT 20
                CoreData: annotation: sql connection fetch time: 0.0007s
                CoreData: annotation: total fetch execution time: 0.0008s for 20 rows.

                """
        }
        log += """
            CoreData: sql: BEGIN EXCLUSIVE
            CoreData: annotation: sql execution time: 0.0001s
            CoreData: sql: UPDATE ZNOTE SET ZTITLE = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?
            CoreData: annotation: sql execution time: 0.0003s
            CoreData: sql: COMMIT
            CoreData: annotation: sql execution time: 0.0040s

            """
        let trace = try read(log)
        var run = Analyzers().start()
        for event in trace.events { run.add(event) }
        XCTAssertTrue(run.hasStatements)
        func cost(of kind: TraceEvent.Kind) -> [Double] {
            trace.events.indices.filter { trace.events[$0].kind == kind }.map { (run.durations[$0] * 1e6).rounded() }
        }
        XCTAssertEqual(cost(of: .fetch), [2_000 + 3 * 700], "the batches are the fetch's")
        XCTAssertEqual(cost(of: .save), [100 + 300 + 4_000], "BEGIN to COMMIT are the save's")
        XCTAssertEqual((run.totalTime * 1e6).rounded(), 100 + 4_100 + 4_400, "the schema read counts in the whole, in no event")
        XCTAssertEqual(trace.events.last?.kind, .save, "the save comes after its COMMIT")
    }

    func testLineNormalization() {
        XCTAssertEqual(CoreDataLogLine("CoreData: sql: SELECT 1"), CoreDataLogLine(category: .sql, text: "SELECT 1"))
        XCTAssertEqual(CoreDataLogLine("ata: annotation: Bound intarray values."), CoreDataLogLine(category: .annotation, text: "Bound intarray values."))
        XCTAssertEqual(CoreDataLogLine("\u{1B}[33mCoreData: details:\u{1B}[0m SQLite bind[0] = 1\r"), CoreDataLogLine(category: .details, text: "SQLite bind[0] = 1"))
        XCTAssertNil(CoreDataLogLine("Metadata: loaded 3 items"), "another program's 'x: y' line is not Core Data's")
        XCTAssertNil(CoreDataLogLine("sqlite> SELECT 1;"))
        XCTAssertEqual(CoreDataLogReader.planRow("3|0|0|SEARCH t0 USING INDEX X (ZA=?)"), "SEARCH t0 USING INDEX X (ZA=?)")
        XCTAssertEqual(CoreDataLogReader.planRow("0 0 0 SCAN TABLE ZNOTE AS t0"), "SCAN ZNOTE AS t0")
        XCTAssertEqual(CoreDataLogReader.planRow("|--USE TEMP B-TREE FOR ORDER BY"), "USE TEMP B-TREE FOR ORDER BY")
        XCTAssertNil(CoreDataLogReader.planRow("12 rows fetched"))
    }
}
