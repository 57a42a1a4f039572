/// How much data the benchmark scenarios generate. `rows` is the size of the main data set (the seed's and GRDB's
/// "fetch 200,000 rows"); every other data set is derived from it, with fixed sizes where a claim names one
/// (200 products, 50 visited cities).
public struct BenchScale: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var rows: Int

    public static let small = BenchScale(name: "small", rows: 20_000)
    public static let medium = BenchScale(name: "medium", rows: 200_000)
    public static let large = BenchScale(name: "large", rows: 1_000_000)

    public init(name: String, rows: Int) {
        self.name = name
        self.rows = rows
    }

    /// `small`, `medium`, `large`, or a row count (at least 100).
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "small": self = .small
        case "medium": self = .medium
        case "large": self = .large
        default:
            guard let rows = Int(text.replacingOccurrences(of: "_", with: "")), rows >= 100 else { return nil }
            self.init(name: String(rows), rows: rows)
        }
    }

    /// `rows / divisor`, at least `minimum`.
    public func part(_ divisor: Int, minimum: Int = 10) -> Int { max(minimum, rows / divisor) }

    public var description: String { name == String(rows) ? "\(rows) rows" : "\(name) (\(rows) rows)" }
}
