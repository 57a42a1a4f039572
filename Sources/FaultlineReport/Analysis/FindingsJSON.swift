import Foundation

extension Finding.Kind {
    /// The kind's name on the command line (`--fail-on n-plus-one`) and in JSON (`id`).
    public var slug: String {
        switch self {
        case .nPlusOne: return "n-plus-one"
        case .relationshipFaultStorm: return "relationship-faults"
        case .countThroughFaults: return "count-through-faults"
        case .fullScan: return "full-scan"
        case .tempBTree: return "temp-b-tree"
        case .repeatedFetch: return "repeated-fetch"
        case .fetchInLoop: return "fetch-in-loop"
        case .avoidableFetch: return "avoidable-fetch"
        case .largeFetchWithoutBatchSize: return "large-fetch"
        case .batchSizeTooSmall: return "small-batch-size"
        case .foldingSearch: return "folding-search"
        case .unusedPrefetch: return "unused-prefetch"
        case .manySmallSaves: return "small-saves"
        case .growingContext: return "growing-context"
        case .textScan: return "text-scan"
        case .optionalNotEqual: return "optional-not-equal"
        case .missingRow: return "missing-row"
        case .largeSave: return "large-save"
        case .redundantIndex: return "redundant-index"
        case .unusedIndex: return "unused-index"
        case .controllerWithoutBatchSize: return "controller-without-batch-size"
        case .changeStorm: return "change-storm"
        case .sectionCacheRebuilt: return "section-cache-rebuilt"
        case .sectionsFromObjects: return "sections-from-objects"
        }
    }

    /// The kind a slug or a kind's name (case-insensitive) names.
    public init?(named name: String) {
        let wanted = name.trimmingCharacters(in: .whitespaces).lowercased()
        guard let kind = Self.allCases.first(where: { $0.slug == wanted || $0.rawValue.lowercased() == wanted }) else { return nil }
        self = kind
    }
}

extension Finding {
    /// How urgent the finding is: `high` for patterns that grow with the data (N+1 faults, relationship faults one by
    /// one, full scans), `medium` for costs that repeat, `low` for waste.
    public var severity: String {
        switch kind {
        case .nPlusOne, .relationshipFaultStorm, .fullScan, .growingContext, .textScan, .missingRow: return "high"
        case .tempBTree, .repeatedFetch, .fetchInLoop, .largeFetchWithoutBatchSize, .batchSizeTooSmall, .foldingSearch, .manySmallSaves, .countThroughFaults,
             .optionalNotEqual, .largeSave, .controllerWithoutBatchSize, .changeStorm, .sectionsFromObjects: return "medium"
        case .avoidableFetch, .unusedPrefetch, .redundantIndex, .unusedIndex, .sectionCacheRebuilt: return "low"
        }
    }

    /// The entity (or table) the evidence names first (`Post.comments: …` → Post).
    public var entity: String? { subject?.entity }
    /// The relationship the evidence names (`Post.comments: …` → comments).
    public var relationship: String? { subject?.relationship }

    private var subject: (entity: String, relationship: String?)? {
        guard let colon = evidence.range(of: ": ") else { return nil }
        let head = evidence[..<colon.lowerBound]
        guard !head.isEmpty, !head.contains(" ") else { return nil }
        let parts = head.split(separator: ".", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? String(parts[1]) : nil)
    }
}

/// Findings as JSON for CI and editors (`faultline report --json`): an array with one object per finding.
public enum FindingsJSON {
    public static func data(_ reports: [(path: String, source: TraceFile.Source, findings: [Finding])]) throws -> Data {
        var array: [[String: Any]] = []
        for report in reports {
            for finding in report.findings {
                var object: [String: Any] = [
                    "file": report.path, "source": report.source == .coreDataLog ? "coredata-log" : report.source == .otlp ? "otlp-json" : "faultline-trace",
                    "kind": finding.kind.rawValue, "id": finding.kind.slug, "severity": finding.severity, "count": finding.count,
                    "time": finding.cost, "sharedTime": finding.sharedCost, "lines": finding.lines, "evidence": finding.evidence, "fix": finding.fix,
                ]
                object["entity"] = finding.entity ?? NSNull()
                object["relationship"] = finding.inferredRelationship ?? finding.relationship ?? NSNull()
                object["relationshipInferred"] = finding.inferredRelationship != nil
                object["callSite"] = finding.callSite ?? NSNull()
                if let site = finding.faultlineSite { object["faultlineSite"] = site }
                if !finding.segment.isEmpty { object["segment"] = finding.segment }
                if !finding.segments.isEmpty { object["segments"] = finding.segments }
                array.append(object)
            }
        }
        return try JSONSerialization.data(withJSONObject: array, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }
}
