import Foundation

/// How the runner prints times and ratios.
public enum BenchFormat {
    /// `12.3 ms`, `4.56 µs`, `789 ns`, `1.23 s`.
    public static func seconds(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 1 { return String(format: "%.2f s", value) }
        if magnitude >= 1e-3 { return String(format: "%.1f ms", value * 1e3) }
        if magnitude >= 1e-6 { return String(format: "%.2f µs", value * 1e6) }
        return String(format: "%.0f ns", value * 1e9)
    }

    /// `1.37×`.
    public static func ratio(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f×", value) : value >= 10 ? String(format: "%.1f×", value) : String(format: "%.2f×", value)
    }
}
