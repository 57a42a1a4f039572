/// The order keys (`Z_FOK_` values) to write when an ordered relationship's members change: as few as the gaps allow.
///
/// Core Data numbers an ordered relationship's members 2048, 3072, 4096, … — gaps of 1024, so that a member can be
/// put between two others without renumbering them. The members whose stored keys are already in the new order (the
/// longest such run) keep them; the others get keys spread over the gap they fall in (after the last member:
/// 1024 apart; before the first: below it, above 0). When a gap holds too few keys, every member is renumbered.
enum OrderKeyAssignment {
    /// For the members in their new order, each one's stored key (nil: none, new to the relationship), the key to
    /// write for each: nil where the stored key stays.
    static func keys(_ stored: [Int64?]) -> [Int64?] {
        let kept = longestIncreasing(stored)
        var result = [Int64?](repeating: nil, count: stored.count)
        var previous: Int64?
        var i = 0
        while i < stored.count {
            if kept[i] {
                previous = stored[i]
                i += 1
                continue
            }
            var end = i
            while end < stored.count && !kept[end] { end += 1 }
            guard let keys = fill(after: previous, before: end < stored.count ? stored[end] : nil, count: end - i) else {
                return (0..<stored.count).map { SQLiteStore.OrderKey.position(at: $0) }
            }
            for (offset, key) in keys.enumerated() { result[i + offset] = key }
            i = end
        }
        return result
    }

    /// `count` increasing keys strictly between `low` and `high` (nil: no bound on that side), or nil when they
    /// do not fit.
    static func fill(after low: Int64?, before high: Int64?, count: Int) -> [Int64]? {
        let gap = SQLiteStore.OrderKey.gap
        switch (low, high) {
        case (nil, nil):
            return (0..<count).map { SQLiteStore.OrderKey.position(at: $0) }
        case (let low?, nil):
            // After the last kept member, 1024 apart.
            let (span, overflow) = gap.multipliedReportingOverflow(by: Int64(count))
            guard !overflow, low <= Int64.max - span else { return nil }
            return (0..<count).map { low + gap * Int64($0 + 1) }
        case (nil, let high?):
            // Before the first kept member: 1024 apart below it when that stays above 0, else spread over (0, high).
            let (span, overflow) = gap.multipliedReportingOverflow(by: Int64(count))
            if !overflow, high > span { return (0..<count).map { high - span + gap * Int64($0) } }
            return spread(over: 0, high, count: count)
        case (let low?, let high?):
            return spread(over: low, high, count: count)
        }
    }

    /// `count` keys evenly spread strictly between `low` and `high`, or nil when there are too few integers.
    private static func spread(over low: Int64, _ high: Int64, count: Int) -> [Int64]? {
        let (width, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, width > Int64(count) else { return nil }
        let step = width / Int64(count + 1)
        return (0..<count).map { low + step * Int64($0 + 1) }
    }

    /// Which members keep their stored keys: a longest run, in the new order, of strictly increasing stored keys.
    static func longestIncreasing(_ stored: [Int64?]) -> [Bool] {
        // Patience sorting: tails[k] is the index ending the best run of length k + 1 found so far.
        var tails: [Int] = [], tailKeys: [Int64] = []
        var previous = [Int](repeating: -1, count: stored.count)
        for (index, key) in stored.enumerated() {
            guard let key else { continue }
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if tailKeys[middle] < key { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count {
                tails.append(index)
                tailKeys.append(key)
            } else {
                tails[low] = index
                tailKeys[low] = key
            }
        }
        var kept = [Bool](repeating: false, count: stored.count)
        var index = tails.last ?? -1
        while index >= 0 {
            kept[index] = true
            index = previous[index]
        }
        return kept
    }
}
