import Foundation

/// Core Data's SQL debug output, prefixed `Faultline:` (seed 001 §2.2 shapes): level 1 SQL and timings, 2 bind
/// values, 3 returned values, 4 EXPLAIN QUERY PLAN.
public final class SQLDebugLogger: ProbeRecorder, @unchecked Sendable {
    /// The SQL debug level: 1 SQL and times, 2 bind values, 3 returned values, 4 query plans.
    public let level: Int
    private let write: @Sendable (String) -> Void

    /// A logger at `level`, writing lines to standard error (or to `write`).
    public init(level: Int, write: (@Sendable (String) -> Void)? = nil) {
        self.level = level
        self.write = write ?? { line in StandardError.write(line) }
    }

    public func record(_ event: consuming ProbeEvent, at time: UInt64) {
        Self.lines(of: event, level: level) { category, text in write("Faultline: \(category): \(text)") }
    }

    /// Calls `line` with each line of Core Data's SQL debug output for `event` at `level` (its category —
    /// `sql`, `details`, `annotation` — and its text), in order.
    static func lines(of event: borrowing ProbeEvent, level: Int, _ line: (String, String) -> Void) {
        switch event {
        case .connect(let e):
            line("annotation", "Connecting to sqlite database file at \"\(e.path)\"")
        case .statement(let e):
            line("sql", e.sql)
            if level >= 2 {
                for (i, value) in e.bindings.enumerated() { line("details", "SQLite bind[\(i)] = \(value)") }
            }
            switch e.purpose {
            case .fetch, .fault, .relationshipFault:
                line("annotation", "sql connection fetch time: \(Self.seconds(e.duration))s")
            default:
                line("annotation", "sql execution time: \(Self.seconds(e.duration))s")
            }
        case .queryPlan(let e):
            guard level >= 4 else { return }
            line("details", "SQLite: EXPLAIN QUERY PLAN \(e.sql)")
            for node in e.nodes { line("details", "SQLite: \(node.id)|\(node.parent)|0|\(node.detail)") }
        case .fetch(let e):
            if e.resultType == .count {
                line("annotation", "total count request execution time: \(Self.seconds(e.totalTime))s for count of \(e.results).")
            } else {
                line("annotation", "total fetch execution time: \(Self.seconds(e.totalTime))s for \(e.rows) rows.")
            }
            if level >= 3, let values = e.values {
                line("annotation", "fetch on entity '\(e.entity)' returned \(e.results) rows with values: (\(values.joined(separator: ", ")))")
            }
        case .fault(let e):
            // Row-cache faults print nothing; a batch's fetch has printed its own lines.
            guard e.source == .database, e.batch == nil else { return }
            switch e.kind {
            case .object:
                line("annotation", "total fetch execution time: \(Self.seconds(e.duration))s for 1 rows.")
                let values = level >= 3 ? e.values.map { " with row values: \($0)" } ?? "" : ""
                line("annotation", "fault fulfilled from database for : <\(e.object)>\(values)")
            case .relationship:
                line("annotation", "to-many relationship fault \"\(e.relationship ?? "")\" for objectID <\(e.object)> fulfilled from database.  Got \(e.count ?? 0) rows")
            }
        case .batch(let e):
            let outcome = e.error.map { " (failed: \($0))" } ?? ""
            line("annotation", "batch \(e.kind) execution time: \(Self.seconds(e.duration))s for \(e.rows) rows of \(e.entity).\(outcome)")
        case .merge(let e):
            line("annotation", "merge of \(e.inserted) inserted, \(e.updated) updated, \(e.deleted) deleted objects: \(e.refreshed) refreshed, \(e.registered) registered in \(Self.seconds(e.duration))s")
        case .refresh(let e):
            line("annotation", "refresh of \(e.objects) object\(e.objects == 1 ? "" : "s") (\(e.mergeChanges ? "merging changes" : "to faults")) in \(Self.seconds(e.duration))s")
        case .resultsController(let e):
            if e.kind == "fetch" {
                let cache = e.cache == "none" ? "" : ", section cache \(e.cache)\(e.cacheReason.map { " (\($0))" } ?? "")"
                line("annotation", "fetched results controller fetch of \(e.objects) \(e.entity) objects in \(e.sections) sections\(cache) in \(Self.seconds(e.duration))s")
            } else {
                line("annotation", "fetched results controller changes: \(e.inserted) inserted, \(e.deleted) deleted, \(e.moved) moved, \(e.updated) updated; sections \(e.sectionsInserted) inserted, \(e.sectionsDeleted) deleted in \(Self.seconds(e.duration))s")
            }
        case .invalidate(let e):
            let why = e.reason == .reset ? "reset" : "the context went away"
            line("annotation", "invalidated \(e.objects) object\(e.objects == 1 ? "" : "s") (\(why)) in \(Self.seconds(e.duration))s")
        case .migration(let e):
            line("annotation", "migration step \(e.step) ('\(e.from)' → '\(e.to)'): \(e.rows) rows of \(e.entity) copied in \(Self.seconds(e.duration))s")
        case .signpost, .prefetchUse:
            return
        case .save(let e):
            let inserted = e.inserted.values.reduce(0, +), updated = e.updated.values.reduce(0, +), deleted = e.deleted.values.reduce(0, +)
            let outcome = e.error.map { " (failed: \($0))" } ?? (e.parent.map { " (into parent context \($0))" } ?? "")
            line("annotation", "save execution time: \(Self.seconds(e.duration))s for \(inserted) inserted, \(updated) updated, \(deleted) deleted objects.\(outcome)")
        }
    }

    static func seconds(_ value: Double) -> String { String(format: "%.4f", value) }
}
