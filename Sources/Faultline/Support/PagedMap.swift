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

    private final class Page {
        let slots: UnsafeMutablePointer<Value?>
        var occupied = 0

        init() {
            slots = .allocate(capacity: PagedMap.pageSize)
            slots.initialize(repeating: nil, count: PagedMap.pageSize)
        }

        deinit {
            slots.deinitialize(count: PagedMap.pageSize)
            slots.deallocate()
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

    /// The slots of the page for `pageKey` (created when `create`), or nil. The pointer is valid until a page is
    /// dropped: callers use it at once.
    @inline(__always) private func slots(_ pageKey: PageKey, create: Bool) -> UnsafeMutablePointer<Value?>? {
        if pageKey == lastKey, let lastPage { return lastPage._withUnsafeGuaranteedRef { $0.slots } }
        return slotsSlowPath(pageKey, create: create)
    }

    @inline(never) private func slotsSlowPath(_ pageKey: PageKey, create: Bool) -> UnsafeMutablePointer<Value?>? {
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
        return page.slots
    }

    /// Counts a value added to or removed from the page for `pageKey` (which must exist), dropping it when empty.
    @inline(__always) private func occupy(_ pageKey: PageKey, by change: Int) {
        let page = pageKey == lastKey && lastPage != nil ? lastPage.unsafelyUnwrapped : Unmanaged.passUnretained(pages[pageKey].unsafelyUnwrapped)
        let occupied = page._withUnsafeGuaranteedRef { page -> Int in
            page.occupied += change
            return page.occupied
        }
        count += change
        if occupied == 0 { drop(pageKey) }
    }

    /// The value for `key`, or nil; assigning nil removes it.
    subscript(key: ObjectKey) -> Value? {
        @inline(__always) get {
            let (pageKey, slot) = location(key)
            return slots(pageKey, create: false)?[slot]
        }
        set {
            let (pageKey, slot) = location(key)
            if let newValue {
                let slots = slots(pageKey, create: true).unsafelyUnwrapped
                let added = slots[slot] == nil
                slots[slot] = newValue
                if added { occupy(pageKey, by: 1) }
            } else if let slots = slots(pageKey, create: false), slots[slot] != nil {
                // Moved out and released after the bookkeeping: its release may run code that uses this map.
                let old = (slots + slot).move()
                (slots + slot).initialize(to: nil)
                occupy(pageKey, by: -1)
                withExtendedLifetime(old) {}
            }
        }
    }

    /// Runs `body` on the value for `key`, created with `makeValue` when absent: one lookup for read-modify-write.
    @inline(__always) func update<R>(_ key: ObjectKey, default makeValue: () -> Value, _ body: (inout Value) -> R) -> R {
        let (pageKey, slot) = location(key)
        let pointer = slots(pageKey, create: true).unsafelyUnwrapped + slot
        if pointer.pointee == nil {
            pointer.pointee = makeValue()
            occupy(pageKey, by: 1)
        }
        return body(&pointer.pointee!)
    }

    /// Updates the value for `key` in place if present; returns false when absent.
    @inline(__always) func modifyIfPresent(_ key: ObjectKey, _ body: (inout Value) -> Void) -> Bool {
        let (pageKey, slot) = location(key)
        guard let slots = slots(pageKey, create: false), slots[slot] != nil else { return false }
        body(&slots[slot]!)
        return true
    }

    /// Runs `body` on the value for `key` if present, removing the value when `body` returns true: one lookup for
    /// a decrement that may remove.
    @inline(__always) func modifyOrRemove(_ key: ObjectKey, _ body: (inout Value) -> Bool) {
        let (pageKey, slot) = location(key)
        guard let slots = slots(pageKey, create: false), slots[slot] != nil else { return }
        if body(&slots[slot]!) {
            let old = (slots + slot).move()
            (slots + slot).initialize(to: nil)
            occupy(pageKey, by: -1)
            withExtendedLifetime(old) {}
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
            for i in 0..<Self.pageSize { if let value = page.slots[i] { body(value) } }
        }
    }

    /// Calls `body` with every key and value, page by page.
    func forEachKeyed(_ body: (ObjectKey, Value) -> Void) {
        for (pageKey, page) in pages {
            for i in 0..<Self.pageSize {
                if let value = page.slots[i] { body(ObjectKey(table: pageKey.table, key: pageKey.page << Self.pageShift | Int64(i)), value) }
            }
        }
    }

    /// Every value, page by page.
    var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for page in pages.values {
            for i in 0..<Self.pageSize { if let value = page.slots[i] { result.append(value) } }
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
