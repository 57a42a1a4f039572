import Foundation
import XCTest
@testable import Faultline

/// `explain` judges a plan by the rows it examines against the rows it returns, counted on a scratch copy, not by
/// the plan's words: an entity walked through its `Z_ENT` index is a scan, a scan returning most of a table is
/// right, a small table gets no advice.
final class PlanSelectivityTests: XCTestCase {
    /// Person with a sub-entity Employee (one table, told apart by Z_ENT), and a small Department.
    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Person", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "age", type: .integer32),
                AttributeDescription(name: "salary", type: .integer64),
            ]),
            EntityDescription(name: "Employee", parent: "Person", properties: [
                AttributeDescription(name: "badge", type: .integer32),
            ]),
            EntityDescription(name: "Department", properties: [AttributeDescription(name: "name", type: .string)]),
        ])
    }

    /// 6,000 people and 6,000 employees; 1 employee in 100 (and nobody else) earns over 50,000, and is under 30.
    func stack(in dir: TemporaryDirectory) throws -> ManagedObjectContext {
        let (_, context) = try makeStack(try model(), in: dir)
        try context.performAndWait {
            var people: [[String: any Sendable]] = [], employees: [[String: any Sendable]] = []
            for i in 0..<6_000 {
                people.append(["name": "p\(i)", "age": 18 + i % 50, "salary": 20_000 + i])
                employees.append(["name": "e\(i)", "age": i % 100 == 0 ? 25 : 40 + i % 20, "salary": i % 100 == 0 ? 70_000 : 30_000 + i, "badge": i])
            }
            _ = try context.execute(BatchInsertRequest(entityName: "Person", objects: people))
            _ = try context.execute(BatchInsertRequest(entityName: "Employee", objects: employees))
            for name in ["Sales", "Support", "R&D", "Legal"] {
                try context.insertNewObject(forEntityName: "Department").setValue(name, forKey: "name")
            }
            try context.save()
        }
        return context
    }

    func explain(_ context: ManagedObjectContext, _ entity: String, _ format: String) throws -> FetchExplanation {
        try context.performAndWait {
            try context.explain(FetchRequest<ManagedObject>(entityName: entity, predicate: try ObjectPredicate(parsing: format)))
        }
    }

    func testASubEntityWalkedThroughItsZENTIndexIsAScanAndGetsTheIndexSQLiteThenUses() throws {
        let dir = TemporaryDirectory()
        let context = try stack(in: dir)
        let explanation = try explain(context, "Employee", "salary > 50000 AND age < 30")
        XCTAssertEqual(explanation.plan.entityWalks.count, 1, "\(explanation.plan)")
        XCTAssertTrue(explanation.plan.fullScans.isEmpty, "SQLite says SEARCH: \(explanation.plan)")
        XCTAssertTrue(explanation.plan.description.contains("[walks every row of the entity"), "\(explanation.plan)")
        let measured = try XCTUnwrap(explanation.measurement)
        XCTAssertEqual(measured.examined, 6_000, "every employee is read")
        XCTAssertEqual(measured.returned, 60)
        XCTAssertTrue(explanation.verdict.contains("walks every row of the entity"), explanation.verdict)
        let suggestion = try XCTUnwrap(explanation.suggestions.first, explanation.verdict)
        // (ZSALARY, Z_ENT) would select as well, but SQLite, without statistics, keeps walking Z_ENT=? with it in
        // place: the measured winner is the index it does use.
        XCTAssertEqual(suggestion.columns, ["Z_ENT", "ZSALARY"])
        let after = try XCTUnwrap(suggestion.measurement)
        XCTAssertEqual(after.returned, 60)
        XCTAssertEqual(after.examined, 60)
        XCTAssertLessThan(after.examined * 2, measured.examined, suggestion.reason)
        XCTAssertTrue(suggestion.reason.contains("examines \(after.examined) rows instead of 6000"), suggestion.reason)
    }

    func testASmallTableGetsNoIndexAdvice() throws {
        let dir = TemporaryDirectory()
        let context = try stack(in: dir)
        let explanation = try explain(context, "Department", "name == 'Legal'")
        XCTAssertEqual(explanation.plan.fullScans.count, 1)
        XCTAssertEqual(explanation.tableRows, 4)
        XCTAssertTrue(explanation.suggestions.isEmpty)
        XCTAssertEqual(explanation.verdict, "ZDEPARTMENT has 4 rows, fewer than 1000: too small for an index to matter.")
    }

    func testAScanReturningMostOfTheTableIsTheRightPlanAndASelectiveOneIsNot() throws {
        let dir = TemporaryDirectory()
        let context = try stack(in: dir)
        // Every person (both entities share the table) aged 30 or more: 4,560 people and 5,940 employees, 88%.
        let broad = try explain(context, "Person", "age >= 30")
        XCTAssertEqual(broad.plan.fullScans.count, 1, "\(broad.plan)")
        let measured = try XCTUnwrap(broad.measurement)
        XCTAssertEqual(measured.examined, 12_000)
        XCTAssertEqual(measured.returned, 4_560 + 5_940)
        XCTAssertTrue(broad.suggestions.isEmpty, "\(broad.suggestions.map(\.sql))")
        XCTAssertTrue(broad.verdict.contains("a scan is the right plan"), broad.verdict)

        // The same attribute, one row in a hundred: the index is proven by the rows it spares.
        let narrow = try explain(context, "Person", "name == 'e42'")
        XCTAssertEqual(narrow.measurement?.examined, 12_000)
        XCTAssertEqual(narrow.measurement?.returned, 1)
        let suggestion = try XCTUnwrap(narrow.suggestions.first, narrow.verdict)
        XCTAssertEqual(suggestion.columns, ["ZNAME"])
        XCTAssertEqual(suggestion.measurement?.examined, 1)
    }

    /// The counting term goes first in the top-level WHERE clause, around what was there, and leaves subqueries,
    /// quoted text and the ORDER BY alone.
    func testRowsExaminedRewritesOnlyTheTopLevelWhereClause() {
        XCTAssertEqual(RowsExamined.instrumented("SELECT t0.Z_PK FROM ZA t0 WHERE t0.ZX = ? OR t0.ZY = ' WHERE ' ORDER BY t0.ZX"),
                       "SELECT t0.Z_PK FROM ZA t0 WHERE faultline_visit(t0.Z_PK) AND (t0.ZX = ? OR t0.ZY = ' WHERE ') ORDER BY t0.ZX")
        XCTAssertEqual(RowsExamined.instrumented("SELECT t0.Z_PK FROM ZA t0 WHERE EXISTS (SELECT 1 FROM ZB t1 WHERE t1.ZA = t0.Z_PK LIMIT 1) LIMIT 5"),
                       "SELECT t0.Z_PK FROM ZA t0 WHERE faultline_visit(t0.Z_PK) AND (EXISTS (SELECT 1 FROM ZB t1 WHERE t1.ZA = t0.Z_PK LIMIT 1)) LIMIT 5")
        XCTAssertEqual(RowsExamined.instrumented("SELECT t0.Z_PK FROM ZA t0 ORDER BY t0.ZX"),
                       "SELECT t0.Z_PK FROM ZA t0 WHERE faultline_visit(t0.Z_PK) ORDER BY t0.ZX")
        XCTAssertNil(RowsExamined.instrumented("SELECT Z_PK FROM ZA"))
        XCTAssertNil(RowsExamined.instrumented("SELECT t0.Z_PK FROM ZA t0 WHERE (t0.ZX = ?"))
    }
}
