import Faultline
import Foundation

/// One line of a trace (docs/trace-format.md), decoded: the fields of every event type, those a type lacks left
/// empty. A class: analyses pass events around by the hundred thousand, and a copy of a struct this wide would
/// retain every string in it.
public final class TraceEvent: @unchecked Sendable {
    public enum Kind: String, Sendable {
        case connect, statement, queryPlan, fetch, fault, cacheMiss, save, signpost, prefetchUse, batch, merge, refresh, invalidate, resultsController, migration
    }

    public var kind: Kind
    /// Seconds since the trace started (the event's end).
    public var time: Double
    /// Line number in the file.
    public var line: Int

    public init(kind: Kind, time: Double, line: Int) {
        self.kind = kind
        self.time = time
        self.line = line
    }
    /// The signpost in force when the event happened (`SCENARIO/VARIANT` in `faultline bench` traces), or "".
    public var segment: String = ""
    /// The context (its `serialNumber`) of a fetch, fault, cache miss or save; 0 when the trace does not say.
    public var context = 0

    // statement, queryPlan
    public var sql: String?
    public var purpose: String?
    /// The fetch that ran this statement, when it is not the next fetch, save or fault (a batch of a batched fetch
    /// in a Core Data log, read after the fetch's total).
    public var owner: TraceEvent?
    public var rows = 0
    public var fullScanSteps = 0
    public var vmSteps = 0
    public var sorts = 0
    public var planDetails: [String] = []
    // statement, fault, cacheMiss, save: the duration; fetch: its total time
    public var duration = 0.0
    // fetch
    public var entity: String?
    public var predicate: String?
    public var sort: [String] = []
    public var batchSize = 0
    public var prefetch: [String] = []
    public var resultType: String?
    public var statements = 0
    public var results = 0
    /// Of `results`, the objects the context had registered before the fetch.
    public var registered = 0
    public var sqlTime = 0.0
    /// Of the fetch's time, seconds inside SQLite's `sqlite3_step` (0: the trace does not say).
    public var stepTime = 0.0
    /// Of the fetch's time, seconds decoding rows into the row cache (0: the trace does not say).
    public var rowCacheTime = 0.0
    // fetch, fault, cacheMiss, save
    public var callSite: String?
    // fault, cacheMiss
    public var faultKind: String?
    public var object: String?
    public var relationship: String?
    /// An object fault in a Core Data log: the to-one ("Order.customer", or several joined by
    /// " or ") of the entity fetched before it that leads to the faulted entity.
    public var via: String?
    /// `via` was inferred from the log's SQL alone (no model): the fetch before the faults selected a column named
    /// after the faulted table.
    public var viaFromLog = false
    public var batch: Int?
    /// A relationship fault fired only to count the members.
    public var countOnly = false
    /// An object fault that found no row (deleted elsewhere).
    public var missing = false
    // fetch: optional attributes compared with != to a value, nil left unsaid
    public var optionalNotEqual: [String] = []
    // save: bytes of the values written
    public var savedBytes = 0
    // fetch, save: the context's object counts and the row cache's size when it ended (traces from before these
    // gauges have none)
    public var gauges: ContextGauges?
    // save
    public var inserted: [String: Int] = [:]
    public var updated: [String: Int] = [:]
    public var deleted: [String: Int] = [:]
    public var error: String?
    // signpost, connect
    public var name: String?
    // prefetchUse
    public var keyPath: String?
    public var loaded = 0
    public var used = 0

    /// The entity of a fault's object, from its URI (`x-coredata://…/Entity/p12`); for a fault a Core Data log shows
    /// only as its one-row SELECT, the entity of its table.
    public var objectEntity: String? {
        guard var object else { return kind == .cacheMiss ? entity : nil }
        return object.withUTF8(Self.secondToLastPiece)
    }

    /// The second-to-last of the non-empty pieces between slashes (read from the end: no array of pieces).
    private static func secondToLastPiece(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var end = bytes.count, found = 0
        while true {
            while end > 0 && bytes[end - 1] == 0x2F { end -= 1 }
            guard end > 0 else { return nil }
            var start = end
            while start > 0 && bytes[start - 1] != 0x2F { start -= 1 }
            found += 1
            if found == 2 { return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self) }
            end = start
        }
    }

    /// A fetch, save, fault or cache miss: the events whose times add up to the time a program spent in Core Data
    /// work (statements and plans are inside them).
    public var isTopLevel: Bool { kind == .fetch || kind == .save || kind == .fault || kind == .cacheMiss }

    /// Objects a save wrote (inserted + updated + deleted).
    public var savedObjects: Int { inserted.values.reduce(0, +) + updated.values.reduce(0, +) + deleted.values.reduce(0, +) }
}
