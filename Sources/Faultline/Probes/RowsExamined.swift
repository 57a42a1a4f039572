import CSQLite
import Foundation

/// What running a statement cost: the rows it examined, the rows it returned and its time.
public struct StatementMeasurement: Sendable, Equatable {
    /// Rows of the fetched table the statement's loop visited (before its conditions rejected some).
    public let examined: Int
    /// Rows the statement returned.
    public let returned: Int
    /// The best of a few runs, in seconds.
    public let seconds: Double

    /// Returned rows over examined rows (1 when nothing was examined).
    public var share: Double { examined > 0 ? Double(returned) / Double(examined) : 1 }
}

/// Counts the rows a SELECT examines by running it with a counting term first in its WHERE clause:
/// `WHERE faultline_visit(t0.Z_PK) AND (…)`. SQLite evaluates the term once for each row its loop over `t0`
/// visits — after the index's own constraints, before the other conditions — and, being a function of the row,
/// the term changes neither the plan nor the result (checked: a changed plan gives no count). SQLite's own
/// per-loop counters (`sqlite3_stmt_scanstatus`) need a compile option Debian's library lacks.
enum RowsExamined {
    static let functionName = "faultline_visit"

    final class Counter { var visits = 0 }

    /// `sql` with the counting term, or nil when it has no `t0` table or no top-level place for the term.
    static func instrumented(_ sql: String) -> String? {
        guard sql.contains(" t0") else { return nil }
        let bytes = Array(sql.utf8)
        var depth = 0, quote: UInt8? = nil
        var whereAt: Int?, endAt: Int?
        func keyword(_ word: String, at i: Int) -> Bool {
            let w = Array(word.utf8)
            return i + w.count <= bytes.count && Array(bytes[i..<i + w.count]) == w
        }
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if let q = quote {
                if b == q { quote = nil }
            } else if b == UInt8(ascii: "'") || b == UInt8(ascii: "\"") {
                quote = b
            } else if b == UInt8(ascii: "(") {
                depth += 1
            } else if b == UInt8(ascii: ")") {
                depth -= 1
            } else if depth == 0 && b == UInt8(ascii: " ") {
                if whereAt == nil && keyword(" WHERE ", at: i) { whereAt = i + 7 }
                if endAt == nil && (keyword(" GROUP BY ", at: i) || keyword(" ORDER BY ", at: i) || keyword(" LIMIT ", at: i)) { endAt = i }
            }
            i += 1
        }
        guard depth == 0, quote == nil else { return nil }
        let term = "\(functionName)(t0.Z_PK)"
        let end = endAt ?? bytes.count
        if let whereAt, whereAt <= end {
            let condition = String(decoding: bytes[whereAt..<end], as: UTF8.self)
            return String(decoding: bytes[..<whereAt], as: UTF8.self) + "\(term) AND (\(condition))" + String(decoding: bytes[end...], as: UTF8.self)
        }
        guard whereAt == nil else { return nil }
        return String(decoding: bytes[..<end], as: UTF8.self) + " WHERE \(term)" + String(decoding: bytes[end...], as: UTF8.self)
    }

    /// Runs `sql` on `db` (a scratch copy): rows examined and returned, and the best time of up to three runs (one
    /// when a run takes over a second). Nil when the statement cannot be counted.
    static func measure(_ sql: String, bindings: [Slot], on db: OpaquePointer) -> StatementMeasurement? {
        guard let counting = instrumented(sql) else { return nil }
        let counter = Counter()
        return withExtendedLifetime(counter) {
            let registered = sqlite3_create_function_v2(db, functionName, 1, SQLITE_UTF8, Unmanaged.passUnretained(counter).toOpaque(), { context, _, _ in
                if let data = sqlite3_user_data(context) { Unmanaged<Counter>.fromOpaque(data).takeUnretainedValue().visits += 1 }
                sqlite3_result_int(context, 1)
            }, nil, nil, nil)
            guard registered == SQLITE_OK else { return nil }
            defer { sqlite3_create_function_v2(db, functionName, 1, SQLITE_UTF8, nil, nil, nil, nil, nil) }
            guard let plain = try? PersistentStoreCoordinator.queryPlan(sql, bindings: bindings, on: db),
                  let instrumentedPlan = try? PersistentStoreCoordinator.queryPlan(counting, bindings: bindings, on: db),
                  plain.steps.map(\.detail) == instrumentedPlan.steps.map(\.detail),
                  let returned = run(counting, bindings: bindings, on: db) else { return nil }
            var best = Double.infinity
            for _ in 0..<3 {
                let start = DispatchTime.now().uptimeNanoseconds
                guard run(sql, bindings: bindings, on: db) != nil else { return nil }
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                best = min(best, seconds)
                if seconds > 1 { break }
            }
            return StatementMeasurement(examined: counter.visits, returned: returned, seconds: best)
        }
    }

    /// Steps `sql` to the end; the rows it returned, or nil on an error.
    private static func run(_ sql: String, bindings: [Slot], on db: OpaquePointer) -> Int? {
        var handle: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &handle, nil) == SQLITE_OK, let handle else { return nil }
        defer { sqlite3_finalize(handle) }
        PersistentStoreCoordinator.bind(bindings, to: handle)
        var rows = 0
        while true {
            let rc = sqlite3_step(handle)
            if rc == SQLITE_ROW { rows += 1; continue }
            return rc == SQLITE_DONE ? rows : nil
        }
    }
}
