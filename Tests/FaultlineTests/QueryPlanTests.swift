import Foundation
import XCTest
@testable import Faultline

final class QueryPlanTests: XCTestCase {
    /// Moody's GeographicRegion (seed 001, L5740–5812), with either a single-column or a compound index.
    func regionModel(compound: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "GeographicRegion", properties: [
                AttributeDescription(name: "markedForDeletionDate", type: .date, isIndexed: !compound),
                AttributeDescription(name: "updatedAt", type: .date),
                AttributeDescription(name: "numericISO3166Code", type: .integer16),
            ], compoundIndexes: compound ? [["markedForDeletionDate", "updatedAt"]] : []),
        ])
    }

    func explanation(compound: Bool) throws -> FetchExplanation {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try regionModel(compound: compound), in: dir)
        return try context.performAndWait {
            for i in 0..<1_200 {
                let region = try context.insertNewObject(forEntityName: "GeographicRegion")
                try region.setValue(i % 5 == 0 ? Date(timeIntervalSinceReferenceDate: 1) : nil, forKey: "markedForDeletionDate")
                try region.setValue(Date(timeIntervalSinceReferenceDate: Double(i)), forKey: "updatedAt")
            }
            try context.save()
            let request = FetchRequest<ManagedObject>(entityName: "GeographicRegion",
                                                      predicate: try ObjectPredicate(parsing: "markedForDeletionDate == %@", Date(timeIntervalSinceReferenceDate: 1)),
                                                      sortDescriptors: [FetchSortDescriptor(keyPath: "updatedAt", ascending: false)])
            return try context.explain(request)
        }
    }

    /// The SELECT a fetch would run, shown without running it: the same text `explain` and the fetch use.
    func testSelectStatementShowsTheCompiledSQLAndItsBindings() throws {
        let dir = TemporaryDirectory()
        let (_, context) = try makeStack(try regionModel(compound: true), in: dir)
        let request = FetchRequest<ManagedObject>(entityName: "GeographicRegion",
                                                  predicate: try ObjectPredicate(parsing: "numericISO3166Code == %d AND updatedAt > %@", 276, Date(timeIntervalSinceReferenceDate: 10)),
                                                  sortDescriptors: [FetchSortDescriptor(keyPath: "updatedAt", ascending: false)])
        let statement = try context.performAndWait { try context.selectStatement(for: request) }
        XCTAssertEqual(statement.sql, "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNUMERICISO3166CODE, t0.ZMARKEDFORDELETIONDATE, t0.ZUPDATEDAT FROM ZGEOGRAPHICREGION t0 WHERE (t0.ZNUMERICISO3166CODE = ? AND t0.ZUPDATEDAT > ?) ORDER BY t0.ZUPDATEDAT DESC")
        XCTAssertEqual(statement.bindings, ["276", "10.0"])
        XCTAssertThrowsError(try context.selectStatement(for: FetchRequest<ManagedObject>(entityName: "Nope")))
    }

    func testSingleIndexSortsInTempBTreeAndTheCompoundIndexDoesNot() throws {
        let single = try explanation(compound: false)
        XCTAssertEqual(single.sql, "SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNUMERICISO3166CODE, t0.ZMARKEDFORDELETIONDATE, t0.ZUPDATEDAT FROM ZGEOGRAPHICREGION t0 WHERE t0.ZMARKEDFORDELETIONDATE = ? ORDER BY t0.ZUPDATEDAT DESC")
        XCTAssertEqual(single.plan.steps.map(\.detail), [
            "SEARCH t0 USING INDEX ZGEOGRAPHICREGION_ZMARKEDFORDELETIONDATE_INDEX (ZMARKEDFORDELETIONDATE=?)",
            "USE TEMP B-TREE FOR ORDER BY",
        ])
        XCTAssertTrue(single.plan.sortsInTemporaryBTree)
        // The advice: the compound index, proven on a scratch copy.
        let suggestion = try XCTUnwrap(single.suggestions.first)
        XCTAssertEqual(suggestion.columns, ["ZMARKEDFORDELETIONDATE", "ZUPDATEDAT"])
        XCTAssertEqual(suggestion.sql, "CREATE INDEX ZGEOGRAPHICREGION_ZMARKEDFORDELETIONDATE_ZUPDATEDAT ON ZGEOGRAPHICREGION (ZMARKEDFORDELETIONDATE, ZUPDATEDAT)")
        XCTAssertFalse(suggestion.planWithIndex.sortsInTemporaryBTree)

        let compound = try explanation(compound: true)
        XCTAssertEqual(compound.plan.steps.map(\.detail), [
            "SEARCH t0 USING INDEX ZGEOGRAPHICREGION_ZMARKEDFORDELETIONDATE_ZUPDATEDAT (ZMARKEDFORDELETIONDATE=?)",
        ])
        XCTAssertFalse(compound.plan.sortsInTemporaryBTree)
        XCTAssertTrue(compound.suggestions.isEmpty)
    }

    func testPlanDetailsOfOldAndNewSQLite() {
        let old = QueryPlan(nodes: [
            .init(id: 0, parent: 0, detail: "SEARCH TABLE ZGEOGRAPHICREGION AS t0 USING INDEX ZGEOGRAPHICREGION_ZMARKEDFORDELETIONDATE_INDEX (ZMARKEDFORDELETIONDATE=?)"),
            .init(id: 1, parent: 0, detail: "SCAN TABLE ZMOOD AS t1"),
            .init(id: 2, parent: 0, detail: "USE TEMP B-TREE FOR ORDER BY"),
        ])
        XCTAssertEqual(old.steps.map(\.kind), [.search, .scan, .tempBTree])
        XCTAssertEqual(old.steps.map(\.table), ["t0", "t1", nil])
        XCTAssertEqual(old.steps[0].index, "ZGEOGRAPHICREGION_ZMARKEDFORDELETIONDATE_INDEX")
        XCTAssertEqual(old.steps[0].constraint, "ZMARKEDFORDELETIONDATE=?")
        XCTAssertEqual(old.fullScans.map(\.table), ["t1"])
        let new = QueryPlan(nodes: [.init(id: 2, parent: 0, detail: "SCAN t0"), .init(id: 5, parent: 0, detail: "SEARCH t1 USING INTEGER PRIMARY KEY (rowid=?)"),
                                    .init(id: 9, parent: 0, detail: "SCAN t2 USING COVERING INDEX ZX_ZY_INDEX")])
        XCTAssertEqual(new.steps.map(\.table), ["t0", "t1", "t2"])
        XCTAssertEqual(new.steps[1].index, "INTEGER PRIMARY KEY")
        XCTAssertEqual(new.fullScans.map(\.table), ["t0", "t2"], "a scan through an index still reads every row")
        XCTAssertEqual(new.verdict(new.steps[2]), "full scan in index order (ZX_ZY_INDEX)")
        XCTAssertTrue(new.description.contains("`--SCAN t0   [full scan]"))
    }
}

extension QueryPlanTests {
    /// Core Data's `noindex:(expression)`: the same objects, and a plan that uses no index for the term.
    func testNoindexRulesTheIndexOutAndFindsTheSameObjects() throws {
        let dir = TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "City", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "population", type: .integer64, isIndexed: true),
        ])])
        let (_, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            for i in 0..<500 {
                let city = try context.insertNewObject(forEntityName: "City")
                try city.setValue("city \(i)", forKey: "name")
                try city.setValue(Int64(i * 1_000), forKey: "population")
            }
            try context.save()
            func names(_ format: String) throws -> [String] {
                try context.fetch(FetchRequest<ManagedObject>(entityName: "City", predicate: try ObjectPredicate(parsing: format, Int64(400_000))))
                    .compactMap { $0.value(forKey: "name") as? String }.sorted()
            }
            XCTAssertEqual(try names("noindex:(population) > %@"), try names("population > %@"))
            XCTAssertEqual(try names("noindex:(population) > %@").count, 99)
            let plain = try context.explain(FetchRequest<ManagedObject>(entityName: "City", predicate: try ObjectPredicate(parsing: "population > 400000")))
            let ruledOut = try context.explain(FetchRequest<ManagedObject>(entityName: "City", predicate: try ObjectPredicate(parsing: "noindex:(population) > 400000")))
            XCTAssertTrue(ruledOut.sql.contains("+t0.ZPOPULATION > ?"), ruledOut.sql)
            XCTAssertTrue(plain.plan.description.contains("INDEX"), plain.plan.description)
            XCTAssertFalse(ruledOut.plan.description.contains("INDEX"), ruledOut.plan.description)
            XCTAssertEqual(try ObjectPredicate(parsing: "noindex:(population) > 5").predicateFormat, "noindex:(population) > 5")
        }
    }
}
