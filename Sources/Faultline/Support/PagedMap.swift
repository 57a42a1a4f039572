/// A map from row keys to values, stored in pages of consecutive primary keys.
///
/// Rows are fetched, cached and registered in primary-key order far more often than at random, so pages of
/// consecutive keys turn the per-row hash-table insert of a dictionary (a cache miss or two on a large table) into
/// a store into an array that is already in cache; the page directory is hashed once per page, not per row.
/// Empty pages are freed. Reference semantics: owned by one coordinator or context, never copied.
final class PagedMap<Value> {
    static var pageSize: Int { 128 }
    private static var pageShift: Int64 { 7 }

    private struct PageKey: Hashable {
        let table: Int32
        let page: Int64

        func _rawHashValue(seed: Int) -> Int {
            var h = UInt64(bitPattern: page) ^ (UInt64(UInt32(bitPattern: table)) << 44) ^ UInt64(bitPattern: Int64(seed))
            h = (h ^ (h >> 33)) &* 0xff51afd7ed558ccd
            h = (h ^ (h >> 33)) &* 0xc4ceb9fe1a85ec53
            return Int(bitPattern: UInt(h ^ (h >> 33)))
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(page)
            hasher.combine(table)
        }
    }

    /// A page: `pageSize` slots of which only those marked in `bits` are initialized. A new page initializes
    /// nothing and an emptied one destroys nothing: a query whose rows are scattered over the table makes and frees a
    /// page for nearly every row it reads, and writing and then walking all 128 slots of each (through unspecialized
    /// value witnesses) was most of such a query's registering and releasing.
    private final class Page {
        let slots: UnsafeMutablePointer<Value>
        /// Which slots hold a value: bit `i % 64` of word `i / 64`.
        var bits: (UInt64, UInt64) = (0, 0)
        var occupied = 0

        init() { slots = .allocate(capacity: PagedMap.pageSize) }

        deinit {
            if occupied > 0 {
                for i in 0..<PagedMap.pageSize where has(i) { (slots + i).deinitialize(count: 1) }
            }
            slots.deallocate()
        }

        @inline(__always) func has(_ i: Int) -> Bool {
            let bit = UInt64(1) << UInt64(i & 63)
            return (i < 64 ? bits.0 : bits.1) & bit != 0
        }

        @inline(__always) func mark(_ i: Int, _ on: Bool) {
            let bit = UInt64(1) << UInt64(i & 63)
            if i < 64 { bits.0 = on ? bits.0 | bit : bits.0 & ~bit } else { bits.1 = on ? bits.1 | bit : bits.1 & ~bit }
            occupied += on ? 1 : -1
        }
    }

    private var pages: [PageKey: Page] = [:]
    private var lastKey = PageKey(table: -1, page: .min)
    /// The page of `lastKey`, unretained: `pages` holds it, and every path that drops a page clears this first.
    /// (Retaining it on each lookup was a retain and a release per registered or released object.)
    private var lastPage: Unmanaged<Page>?
    /// The last page emptied, kept for the next page needed: a context whose objects come and go one at a time
    /// (fetched, used, released) would otherwise allocate and free a page for each.
    private var spare: Page?
    /// Number of values stored.
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    @inline(__always) private func location(_ key: ObjectKey) -> (PageKey, Int) {
        (PageKey(table: key.table, page: key.key >> Self.pageShift), Int(key.key & (Int64(Self.pageSize) - 1)))
    }

    /// The page for `pageKey` (created when `create`), unretained, or nil. Valid until a page is dropped: callers
    /// use it at once.
    @inline(__always) private func page(_ pageKey: PageKey, create: Bool) -> Unmanaged<Page>? {
        if pageKey == lastKey, let lastPage { return lastPage }
        return pageSlowPath(pageKey, create: create)
    }

    @inline(never) private func pageSlowPath(_ pageKey: PageKey, create: Bool) -> Unmanaged<Page>? {
        let page: Page
        if let existing = pages[pageKey] {
            page = existing
        } else {
            guard create else { return nil }
            page = spare ?? Page()
            spare = nil
            pages[pageKey] = page
        }
        lastKey = pageKey
        lastPage = Unmanaged.passUnretained(page)
        return lastPage
    }

    /// Takes the value out of slot `slot` of `page`, dropping the page when it empties; the caller releases the
    /// value after this returns (its release may run code that uses this map).
    @inline(__always) private func take(_ slot: Int, of page: Unmanaged<Page>, at pageKey: PageKey) -> Value {
        let (value, empty) = page._withUnsafeGuaranteedRef { page -> (Value, Bool) in
            page.mark(slot, false)
            return ((page.slots + slot).move(), page.occupied == 0)
        }
        count -= 1
        if empty { drop(pageKey) }
        return value
    }

    /// The value for `key`, or nil; assigning nil removes it.
    subscript(key: ObjectKey) -> Value? {
        @inline(__always) get {
            let (pageKey, slot) = location(key)
            guard let page = page(pageKey, create: false) else { return nil }
            return page._withUnsafeGuaranteedRef { $0.has(slot) ? $0.slots[slot] : nil }
        }
        set {
            let (pageKey, slot) = location(key)
            if let newValue {
                let page = page(pageKey, create: true).unsafelyUnwrapped
                let added = page._withUnsafeGuaranteedRef { page -> Bool in
                    if page.has(slot) {
                        page.slots[slot] = newValue
                        return false
                    }
                    (page.slots + slot).initialize(to: newValue)
                    page.mark(slot, true)
                    return true
                }
                if added { count += 1 }
            } else if let page = page(pageKey, create: false), page._withUnsafeGuaranteedRef({ $0.has(slot) }) {
                withExtendedLifetime(take(slot, of: page, at: pageKey)) {}
            }
        }
    }

    /// Runs `body` on the value for `key`, created with `makeValue` when absent: one lookup for read-modify-write.
    @inline(__always) func update<R>(_ key: ObjectKey, default makeValue: () -> Value, _ body: (inout Value) -> R) -> R {
        let (pageKey, slot) = location(key)
        let page = page(pageKey, create: true).unsafelyUnwrapped
        let pointer = page._withUnsafeGuaranteedRef { $0.slots + slot }
        if !page._withUnsafeGuaranteedRef({ $0.has(slot) }) {
            pointer.initialize(to: makeValue())
            page._withUnsafeGuaranteedRef { $0.mark(slot, true) }
            count += 1
        }
        return body(&pointer.pointee)
    }

    /// Updates the value for `key` in place if present; returns false when absent.
    @inline(__always) func modifyIfPresent(_ key: ObjectKey, _ body: (inout Value) -> Void) -> Bool {
        let (pageKey, slot) = location(key)
        guard let page = page(pageKey, create: false), page._withUnsafeGuaranteedRef({ $0.has(slot) }) else { return false }
        body(&page._withUnsafeGuaranteedRef { $0.slots + slot }.pointee)
        return true
    }

    /// Runs `body` on the value for `key` if present, removing the value when `body` returns true: one lookup for
    /// a decrement that may remove.
    @inline(__always) func modifyOrRemove(_ key: ObjectKey, _ body: (inout Value) -> Bool) {
        let (pageKey, slot) = location(key)
        guard let page = page(pageKey, create: false), page._withUnsafeGuaranteedRef({ $0.has(slot) }) else { return }
        if body(&page._withUnsafeGuaranteedRef { $0.slots + slot }.pointee) {
            withExtendedLifetime(take(slot, of: page, at: pageKey)) {}
        }
    }

    private func drop(_ pageKey: PageKey) {
        spare = pages.removeValue(forKey: pageKey)
        if lastKey == pageKey {
            lastKey = PageKey(table: -1, page: .min)
            lastPage = nil
        }
    }

    /// Calls `body` with every value, page by page.
    func forEach(_ body: (Value) -> Void) {
        for page in pages.values {
            for i in 0..<Self.pageSize where page.has(i) { body(page.slots[i]) }
        }
    }

    /// Calls `body` with every key and value, page by page.
    func forEachKeyed(_ body: (ObjectKey, Value) -> Void) {
        for (pageKey, page) in pages {
            for i in 0..<Self.pageSize {
                if page.has(i) { body(ObjectKey(table: pageKey.table, key: pageKey.page << Self.pageShift | Int64(i)), page.slots[i]) }
            }
        }
    }

    /// Every value, page by page.
    var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for page in pages.values {
            for i in 0..<Self.pageSize where page.has(i) { result.append(page.slots[i]) }
        }
        return result
    }

    /// Removes every value of one table.
    func removeAll(table: Int32) {
        for (key, page) in pages where key.table == table {
            count -= page.occupied
            pages[key] = nil
        }
        lastKey = PageKey(table: -1, page: .min)
        lastPage = nil
    }

    func removeAll() {
        pages.removeAll()
        lastKey = PageKey(table: -1, page: .min)
        lastPage = nil
        count = 0
    }
}
