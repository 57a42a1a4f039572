/// Where a scenario's claim comes from, as a Core Data developer can look it up: the work, its chapter and section,
/// and the claim's key in Faultline's digests of that work (`P-16`, `B-PRAGMA`, `perf-23`), which names the exact
/// passage for us.
public struct ClaimSource: Sendable, Hashable, CustomStringConvertible {
    /// The works the advice comes from.
    public enum Work: String, Sendable, CaseIterable {
        /// Apple's "Core Data Programming Guide" (the 2015–2016 edition, in Apple's documentation archive).
        case appleGuide
        /// The first "Core Data Programming Guide" (Mac OS X 10.4–10.5, iPhone OS 3): its overview and model chapters.
        case appleGuideClassic
        /// objc.io's "Core Data" by Florian Kugler and Daniel Eggert (chapters by their English titles).
        case objcio
        /// Kodeco's "Core Data by Tutorials", chapter "The Core Data Stack".
        case kodeco
        /// A developer's Core Data study notes (leiiwang, 2014), excerpting Apple's guide and "Pro Core Data for iOS".
        case studyNotes
        /// GRDB.swift's performance suite (the peers' workloads).
        case grdb
        /// Faultline's own targets (the probes' cost, the store format).
        case faultline

        /// How the work is named in a citation.
        public var title: String {
            switch self {
            case .appleGuide: return "Apple, Core Data Programming Guide"
            case .appleGuideClassic: return "Apple, Core Data Programming Guide (Mac OS X 10.5 edition)"
            case .objcio: return "objc.io, Core Data (Eggert & Kugler)"
            case .kodeco: return "Kodeco, Core Data by Tutorials"
            case .studyNotes: return "leiiwang's Core Data study notes (2014)"
            case .grdb: return "GRDB.swift's performance suite"
            case .faultline: return "Faultline"
            }
        }
    }

    public let work: Work
    public let chapter: String
    public let section: String?
    /// Keys of the claim in Faultline's digests of the work (secondary: for us, not for looking up).
    public let keys: [String]

    public init(_ work: Work, _ chapter: String, _ section: String? = nil, keys: [String] = []) {
        self.work = work
        self.chapter = chapter
        self.section = section
        self.keys = keys
    }

    /// `Apple, Core Data Programming Guide › Performance › Reducing Memory Overhead`.
    public var citation: String {
        ([work.title, chapter] + (section.map { [$0] } ?? [])).joined(separator: " › ")
    }

    /// The citation and, in brackets, the digest keys.
    public var description: String {
        keys.isEmpty ? citation : citation + " [" + keys.joined(separator: ", ") + "]"
    }

    /// Apple's guide: `chapter › section`.
    static func apple(_ chapter: String, _ section: String? = nil, _ keys: String...) -> ClaimSource {
        ClaimSource(.appleGuide, chapter, section, keys: keys)
    }

    /// objc.io's book: `chapter › section`.
    static func objcio(_ chapter: String, _ section: String? = nil, _ keys: String...) -> ClaimSource {
        ClaimSource(.objcio, chapter, section, keys: keys)
    }
}
