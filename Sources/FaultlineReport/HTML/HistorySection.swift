import Faultline
import Foundation

/// The report's section on a store's persistent history (`faultline report --store`): how many transactions and
/// changes, how fast they came, who made them, what they changed, the largest.
public enum HistorySection {
    private static func e(_ text: String) -> String { HTMLText.escape(text) }

    /// About 3,000 years either side of 2001: a timestamp past it is shown as seconds, not formatted.
    static let largestSeconds = 1e11

    public static func html(_ history: PersistentHistory, store: String) -> String {
        var out = "<h2>Persistent history of \(e(URL(fileURLWithPath: store).lastPathComponent))</h2>\n"
        guard history.isTracked else { return out + "<p>None: the store has no history tables (tracking was never on).</p>\n" }
        let s = HistorySummary(history)
        out += "<p>\(lines(s).map(e).joined(separator: "<br>"))</p>\n"
        func table(_ title: String, _ header: [String], _ rows: [[String]]) {
            guard !rows.isEmpty else { return }
            out += "<h3>\(e(title))</h3>\n<table><tr>" + header.map { "<th>\(e($0))</th>" }.joined() + "</tr>\n"
            for row in rows.prefix(25) { out += "<tr>" + row.enumerated().map { $0.offset == 0 ? "<td>\(e($0.element))</td>" : "<td class=n>\(e($0.element))</td>" }.joined() + "</tr>\n" }
            out += "</table>\n"
        }
        table("Transactions by author", ["author", "transactions", "changes"], s.byAuthor.map { [$0.name, "\($0.transactions)", "\($0.changes)"] })
        table("Transactions by context", ["context", "transactions", "changes"], s.byContext.map { [$0.name, "\($0.transactions)", "\($0.changes)"] })
        table("Changes by entity", ["entity", "changes", "inserts", "updates", "deletes"], s.byEntity.map { [$0.name, "\($0.changes)", "\($0.inserts)", "\($0.updates)", "\($0.deletes)"] })
        table("Largest transactions", ["token", "time", "author", "context", "changes"], s.largest.map {
            ["\($0.number)", timestamp($0.timestamp), $0.author ?? "-", $0.contextName ?? "-", "\($0.changes.count)"]
        })
        return out
    }

    /// The summary in sentences (the page's paragraph, the command's text).
    public static func lines(_ s: HistorySummary) -> [String] {
        var lines = ["\(s.transactions) transaction\(s.transactions == 1 ? "" : "s"), \(s.changes) change\(s.changes == 1 ? "" : "s")"
                     + (s.kinds.isEmpty ? "" : " (\(s.kinds.map { "\($0.value) \($0.key)" }.sorted().joined(separator: ", ")))")]
        if let first = s.first, let last = s.last {
            let span = last.timeIntervalSince(first)
            lines.append("from \(timestamp(first)) to \(timestamp(last))" + (span > 0 ? String(format: ": %.2f transactions per second on average", Double(s.transactions) / span) : "")
                         + "; at most \(s.peakPerSecond) in one second")
        }
        return lines
    }

    /// ISO 8601 with milliseconds; a time no calendar can hold (a damaged store's) is shown as its seconds.
    public static func timestamp(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, abs(seconds) < Self.largestSeconds else { return "\(seconds) s since 2001 (not a date)" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
