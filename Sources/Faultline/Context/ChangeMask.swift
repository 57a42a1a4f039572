/// A set of slot indexes, inline for entities with up to 64 properties.
struct ChangeMask {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    @inline(__always) mutating func insert(_ index: Int) {
        if index < 64 { low |= 1 << UInt64(index); return }
        let word = index / 64 - 1
        if high.count <= word { high.append(contentsOf: repeatElement(0, count: word - high.count + 1)) }
        high[word] |= 1 << UInt64(index % 64)
    }

    mutating func remove(_ index: Int) {
        if index < 64 { low &= ~(1 << UInt64(index)); return }
        let word = index / 64 - 1
        if word < high.count { high[word] &= ~(1 << UInt64(index % 64)) }
    }

    @inline(__always) func contains(_ index: Int) -> Bool {
        if index < 64 { return low & (1 << UInt64(index)) != 0 }
        let word = index / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(index % 64)) != 0
    }

    mutating func removeAll() {
        low = 0
        high = []
    }

    /// The mask as one word, when every member is below 64.
    var smallValue: UInt64? { high.allSatisfy { $0 == 0 } ? low : nil }
}
