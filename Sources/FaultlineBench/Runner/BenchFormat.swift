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

    /// `1.37×`; two significant digits below 0.1 (`0.0021×`).
    public static func ratio(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f×", value) : value >= 10 ? String(format: "%.1f×", value)
            : value >= 0.1 || value == 0 ? String(format: "%.2f×", value) : String(format: "%.2g×", value)
    }

    /// Bytes in B, kB, MB or GB (powers of 1,000), with a sign when negative.
    public static func bytes(_ value: Int) -> String {
        let magnitude = Double(value.magnitude), sign = value < 0 ? "-" : ""
        if magnitude >= 1e9 { return sign + String(format: "%.2f GB", magnitude / 1e9) }
        if magnitude >= 1e6 { return sign + String(format: "%.1f MB", magnitude / 1e6) }
        if magnitude >= 1e3 { return sign + String(format: "%.1f kB", magnitude / 1e3) }
        return sign + "\(value.magnitude) B"
    }

    /// A run's memory in one phrase: "12.3 MB in 45210 allocations, kept 3.1 MB, peak 120.4 MB".
    public static func memory(_ m: MemoryMeasurement) -> String {
        var parts: [String] = []
        if let bytes = m.bytesAllocated, let count = m.allocations { parts.append("\(Self.bytes(bytes)) in \(count) allocations") }
        if let live = m.liveBytes { parts.append("kept \(Self.bytes(live))" + spares(m)) }
        if let peak = m.peakResidentBytes { parts.append("peak \(Self.bytes(peak))") }
        return parts.joined(separator: ", ")
    }

    /// " (and 1.2 MB of spare pages)" when the engine kept emptied pages for reuse during the run, else "".
    public static func spares(_ m: MemoryMeasurement) -> String {
        guard let spare = m.spareBytes, spare != 0 else { return "" }
        return " (\(spare > 0 ? "and" : "less") \(bytes(abs(spare))) of spare pages)"
    }

    /// A run's phases in one phrase (medians): "fetch 81.2 ms, use 6.1 ms, release 52.0 ms"; without their names,
    /// "81.2 ms · 6.1 ms · 52.0 ms" with `separator: " · "`.
    public static func phases(_ phases: [PhaseResult], named: Bool = true, separator: String = ", ") -> String {
        phases.map { (named ? "\($0.phase.rawValue) " : "") + seconds($0.median) }.joined(separator: separator)
    }
}
