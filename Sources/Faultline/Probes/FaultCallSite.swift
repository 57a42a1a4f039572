import Foundation
import Runtime

/// The return addresses of a fault (a cache miss or a relationship fault), captured cheaply when it fires and
/// resolved to the first frame outside Faultline — file and line from DWARF — only when an event is written or
/// reported, once per distinct stack.
public struct FaultStack: Sendable, Equatable {
    /// The runtime's `Backtrace` has no layout known when Faultline is compiled (its module is built for library
    /// evolution): held in a box, so that fault events, and every probe event with them, keep a fixed layout and
    /// are moved and copied inline rather than through the runtime's type metadata.
    private final class Box: Sendable {
        let backtrace: Backtrace
        init(_ backtrace: Backtrace) { self.backtrace = backtrace }
    }

    private let box: Box
    private let key: String

    var backtrace: Backtrace { box.backtrace }

    private static let images = ImageMap.capture()

    /// Frames kept, innermost first: the caller's frame lies within them (the engine's own frames and a context's
    /// queue take about 15 in a debug build).
    static let frameLimit = 40

    /// Captures the current stack (frame-pointer walk, about 2 µs), or nil when it cannot.
    static func capture() -> FaultStack? {
        // `top: 0`: the innermost frames only (the default keeps the outermost 16 and drops the middle — where the
        // caller's frame is in a deep stack).
        guard let backtrace = try? Backtrace.capture(algorithm: .fast, limit: frameLimit, top: 0, images: images) else { return nil }
        return FaultStack(box: Box(backtrace), key: backtrace.frames.map { "\($0)" }.joined(separator: ","))
    }

    /// Whether the two are equal.
    public static func == (lhs: FaultStack, rhs: FaultStack) -> Bool { lhs.key == rhs.key }

    /// The module of a mangled Swift symbol (`$s14FaultlineBench…` → `FaultlineBench`), or nil.
    static func moduleName(mangled: String) -> String? {
        guard mangled.hasPrefix("$s") else { return nil }
        let rest = mangled.dropFirst(2)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard let length = Int(digits), length > 0 else { return nil }
        let name = rest.dropFirst(digits.count).prefix(length)
        return name.count == length ? String(name) : nil
    }

    /// The module a source file belongs to by SwiftPM's layout (`…/Sources/Module/Sub/File.swift` → `Module`), else
    /// its folder: so that a frame whose symbol names no module (a closure's thunk) is spelled as `#fileID` spells it.
    static func moduleName(path: String) -> String? {
        let parts = path.split(separator: "/").map(String.init)
        if let sources = parts.lastIndex(where: { $0 == "Sources" || $0 == "Tests" }), sources + 2 < parts.count { return parts[sources + 1] }
        return parts.dropLast().last
    }

    private static let resolved = LockedDictionary<String, String>()

    private static let skippedPrefixes = ["$s9Faultline", "$ss", "$s8Dispatch", "swift_", "_swift",
                                          "$s15Instrumentation", "$s7Tracing", "$s20ServiceContextModule"]

    /// `Module/File.swift:line` of the first frame outside Faultline (its symbol name when there is no debug
    /// information), or nil when every frame is Faultline's or the runtime's.
    public var callSite: String? {
        if let cached = Self.resolved.get(key) { return cached.isEmpty ? nil : cached }
        var answer = ""
        if let symbolicated = backtrace.symbolicated(with: Self.images) {
            for frame in symbolicated.frames {
                guard let symbol = frame.symbol else { continue }
                let raw = symbol.rawName
                // Skip the engine itself, the Swift runtime and standard library, Dispatch, and the tracing packages
                // a context's queue carries the caller's `ServiceContext` through.
                if Self.skippedPrefixes.contains(where: raw.hasPrefix) { continue }
                // Thunks the compiler made have no line of their own: the frame that called them does.
                if let location = symbol.sourceLocation, location.line == 0 || location.path.hasPrefix("<") { continue }
                if let location = symbol.sourceLocation {
                    // `Module/File.swift:line`, as `#fileID` spells it (the module from the mangled symbol).
                    let file = location.path.split(separator: "/").last.map(String.init) ?? location.path
                    let module = Self.moduleName(mangled: raw) ?? Self.moduleName(path: location.path)
                    answer = (module.map { "\($0)/" } ?? "") + file + ":\(location.line)"
                } else {
                    answer = symbol.name
                }
                break
            }
        }
        Self.resolved.set(answer, for: key)
        return answer.isEmpty ? nil : answer
    }
}
