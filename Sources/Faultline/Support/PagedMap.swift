import CProcessor

/// A map from row keys to values, stored in pages of consecutive primary keys.
///
/// Rows are fetched, cached and registered in primary-key order far more often than at random, so pages of
/// consecutive keys turn the per-row hash-table insert of a dictionary (a cache miss or two on a large table) into
/// a store into an array that is already in cache. A page is found by index in its table's directory (an array of
/// pages, one entry per `pageSize` keys) when the table number and key are small and non-negative, as Core Data's entity
/// numbers and primary keys are; any other key (a damaged store's negative or huge `Z_PK`) goes through a hashed
/// directory. Emptied pages are freed, or kept for the next keys up to `maxSpares` (counted in `SparePages`).
/// Reference semantics: owned by one coordinator or context, never copied.
final class PagedMap<Value> {
    static var pageSize: Int { 64 }
    private static var pageShift: Int64 { 6 }
    /// Tables numbered below this have an indexed directory; others are hashed.
    static var indexedTables: Int32 { 1_024 }
    /// Pages below this (keys below 2²³) are indexed; a table's directory grows to its highest page, at most
    /// 1 MB.
    static var indexedPages: Int64 { 1 << 17 }
    /// Emptied pages kept for reuse by default, at most.
    static var defaultMaxSpares: Int { 1 }

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

    /// Which slots of a page hold a value (bit `i`), and how many.
    private struct Occupancy {
        var bits: UInt64 = 0
        var occupied = 0
    }

    /// A page: `pageSize` slots after its header, in one allocation, of which only those marked in the header are
    /// initialized. A new page initializes nothing and an emptied one destroys nothing: a query whose rows are
    /// scattered over the table makes and frees a page for nearly every row it reads.
    private final class Page: ManagedBuffer<Occupancy, Value> {
        static func make() -> Page {
            unsafeDowncast(Page.create(minimumCapacity: PagedMap.pageSize) { _ in Occupancy() }, to: Page.self)
        }

        deinit {
            withUnsafeMutablePointers { occupancy, slots in
                guard occupancy.pointee.occupied > 0 else { return }
                for i in 0..<PagedMap.pageSize where Page.has(occupancy.pointee, i) { (slots + i).deinitialize(count: 1) }
            }
        }

        // Through pointers: `ManagedBuffer.header` is a stored property, checked for exclusive access on each use.
        @inline(__always) var slots: UnsafeMutablePointer<Value> { withUnsafeMutablePointerToElements { $0 } }
        @inline(__always) var occupancy: UnsafeMutablePointer<Occupancy> { withUnsafeMutablePointerToHeader { $0 } }
        @inline(__always) var occupied: Int { occupancy.pointee.occupied }

        /// The page's size as the allocator counts it.
        var usableBytes: Int { faultline_usable_size(Unmanaged.passUnretained(self).toOpaque()) }

        @inline(__always) static func has(_ occupancy: Occupancy, _ i: Int) -> Bool {
            occupancy.bits & UInt64(1) << UInt64(i & 63) != 0
        }

        @inline(__always) func has(_ i: Int) -> Bool { Page.has(occupancy.pointee, i) }

        @inline(__always) func mark(_ i: Int, _ on: Bool) {
            let occupancy = occupancy
            let bit = UInt64(1) << UInt64(i & 63)
            occupancy.pointee.bits = on ? occupancy.pointee.bits | bit : occupancy.pointee.bits & ~bit
            occupancy.pointee.occupied += on ? 1 : -1
        }
    }

    /// One table's indexed pages: `pages[n]` holds page `n` (retained), or nil.
    private struct Directory {
        var pages: UnsafeMutablePointer<Unmanaged<Page>?>?
        var capacity = 0
    }

    /// Indexed directories by table number (`tableCount` of them, grown on demand).
    @exclusivity(unchecked) private var directories: UnsafeMutablePointer<Directory>?
    @exclusivity(unchecked) private var tableCount = 0
    /// Pages whose table or page number is outside the indexed range.
    @exclusivity(unchecked) private var hashed: [PageKey: Page] = [:]
    @exclusivity(unchecked) private var lastTable: Int32 = -1
    @exclusivity(unchecked) private var lastPageNumber: Int64 = .min
    /// The page of (`lastTable`, `lastPageNumber`), unretained: a directory holds it, and every path that drops a
    /// page clears this first. (Retaining it on each lookup was a retain and a release per registered or released
    /// object.)
    @exclusivity(unchecked) private var lastPage: Unmanaged<Page>?
    /// Pages emptied, kept for the next pages needed (at most `maxSpares`): objects that come and go one at a time,
    /// or a query's worth at a time on scattered keys, would otherwise allocate and free a page for each. Their
    /// bytes are counted in `SparePages`.
    @exclusivity(unchecked) private var spares: [Page] = []
    /// How many emptied pages this map keeps for reuse, at most.
    let maxSpares: Int
    /// Number of values stored.
    @exclusivity(unchecked) private(set) var count = 0

    /// A map that keeps at most `maxSpares` emptied pages for reuse.
    init(maxSpares: Int = PagedMap.defaultMaxSpares) {
        self.maxSpares = max(0, maxSpares)
    }

    deinit {
        releaseAllPages()
        freeSpares()
    }

    var isEmpty: Bool { count == 0 }

    @inline(__always) private static func isIndexed(_ table: Int32, _ page: Int64) -> Bool {
        UInt32(bitPattern: table) < UInt32(indexedTables) && UInt64(bitPattern: page) < UInt64(indexedPages)
    }

    /// The page of `key` (created when `create`), unretained, and the key's slot in it. Valid until a page is
    /// dropped: callers use it at once.
    @inline(__always) private func page(_ key: ObjectKey, create: Bool) -> (Unmanaged<Page>?, Int) {
        let number = key.key >> Self.pageShift, slot = Int(key.key & (Int64(Self.pageSize) - 1))
        if number == lastPageNumber, key.table == lastTable, let lastPage { return (lastPage, slot) }
        return (pageSlowPath(key.table, number, create: create), slot)
    }

    @inline(never) private func pageSlowPath(_ table: Int32, _ number: Int64, create: Bool) -> Unmanaged<Page>? {
        let found: Unmanaged<Page>
        if Self.isIndexed(table, number) {
            let t = Int(table), n = Int(number)
            if t < tableCount, n < directories.unsafelyUnwrapped[t].capacity, let page = directories.unsafelyUnwrapped[t].pages.unsafelyUnwrapped[n] {
                found = page
            } else {
                guard create else { return nil }
                growDirectory(table: t, page: n)
                found = Unmanaged.passRetained(takeSpare())
                directories.unsafelyUnwrapped[t].pages.unsafelyUnwrapped[n] = found
            }
        } else {
            let pageKey = PageKey(table: table, page: number)
            if let existing = hashed[pageKey] {
                found = Unmanaged.passUnretained(existing)
            } else {
                guard create else { return nil }
                let page = takeSpare()
                hashed[pageKey] = page
                found = Unmanaged.passUnretained(page)
            }
        }
        lastTable = table
        lastPageNumber = number
        lastPage = found
        return found
    }

    private func takeSpare() -> Page {
        guard let page = spares.popLast() else { return Page.make() }
        if !spares.isEmpty { SparePages.add(-pageBytes) }
        return page
    }

    /// Emptied pages kept for reuse.
    var spareCount: Int { spares.count }
    /// The bytes of the spare pages `SparePages` counts: all but the first (a map kept one spare page before pages
    /// were pooled, and objects that come and go one at a time keep only that one: counting it would cost an atomic
    /// add on each object's release).
    var spareBytes: Int { max(0, spares.count - 1) * pageBytes }
    /// A page's size as the allocator counts it (every page is the same size): measured on the first page kept.
    @exclusivity(unchecked) private var pageBytes = 0

    private func keepSpare(_ page: Page) {
        guard spares.count < maxSpares else { return }
        if pageBytes == 0 { pageBytes = page.usableBytes }
        if !spares.isEmpty { SparePages.add(pageBytes) }
        spares.append(page)
    }

    private func freeSpares() {
        SparePages.add(-spareBytes)
        spares = []
    }

    /// Makes room in the directories for page `n` of table `t`.
    private func growDirectory(table t: Int, page n: Int) {
        if t >= tableCount {
            let newCount = max(t + 1, min(tableCount * 2, Int(Self.indexedTables)))
            let grown = UnsafeMutablePointer<Directory>.allocate(capacity: newCount)
            if let directories {
                grown.moveInitialize(from: directories, count: tableCount)
                directories.deallocate()
            }
            (grown + tableCount).initialize(repeating: Directory(), count: newCount - tableCount)
            directories = grown
            tableCount = newCount
        }
        let directory = directories.unsafelyUnwrapped + t
        let old = directory.pointee.capacity
        guard n >= old else { return }
        let capacity = min(max(n + 1, old * 2, 16), Int(Self.indexedPages))
        let pages = UnsafeMutablePointer<Unmanaged<Page>?>.allocate(capacity: capacity)
        if let existing = directory.pointee.pages {
            pages.moveInitialize(from: existing, count: old)
            existing.deallocate()
        }
        (pages + old).initialize(repeating: nil, count: capacity - old)
        directory.pointee = Directory(pages: pages, capacity: capacity)
    }

    /// Takes the value out of slot `slot` of `page`, dropping the page when it empties; the caller releases the
    /// value after this returns (its release may run code that uses this map).
    @inline(__always) private func take(_ slot: Int, of page: Unmanaged<Page>, table: Int32, number: Int64) -> Value {
        let (value, empty) = page._withUnsafeGuaranteedRef { page -> (Value, Bool) in
            page.mark(slot, false)
            return ((page.slots + slot).move(), page.occupied == 0)
        }
        count -= 1
        if empty { drop(table, number) }
        return value
    }

    /// The value for `key`, or nil; assigning nil removes it.
    subscript(key: ObjectKey) -> Value? {
        @inline(__always) get {
            let (page, slot) = page(key, create: false)
            guard let page else { return nil }
            return page._withUnsafeGuaranteedRef { $0.has(slot) ? $0.slots[slot] : nil }
        }
        set {
            if let newValue {
                let (found, slot) = page(key, create: true)
                let added = found.unsafelyUnwrapped._withUnsafeGuaranteedRef { page -> Bool in
                    if page.has(slot) {
                        page.slots[slot] = newValue
                        return false
                    }
                    (page.slots + slot).initialize(to: newValue)
                    page.mark(slot, true)
                    return true
                }
                if added { count += 1 }
            } else {
                let (found, slot) = page(key, create: false)
                if let found, found._withUnsafeGuaranteedRef({ $0.has(slot) }) {
                    withExtendedLifetime(take(slot, of: found, table: key.table, number: key.key >> Self.pageShift)) {}
                }
            }
        }
    }

    /// Runs `body` on the value for `key`, created with `makeValue` when absent: one lookup for read-modify-write.
    @inline(__always) func update<R>(_ key: ObjectKey, default makeValue: () -> Value, _ body: (inout Value) -> R) -> R {
        let (found, slot) = page(key, create: true)
        let page = found.unsafelyUnwrapped
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
        let (found, slot) = page(key, create: false)
        guard let page = found, page._withUnsafeGuaranteedRef({ $0.has(slot) }) else { return false }
        body(&page._withUnsafeGuaranteedRef { $0.slots + slot }.pointee)
        return true
    }

    /// Runs `body` on the value for `key` if present, removing the value when `body` returns true: one lookup for
    /// a decrement that may remove.
    @inline(__always) func modifyOrRemove(_ key: ObjectKey, _ body: (inout Value) -> Bool) {
        let (found, slot) = page(key, create: false)
        guard let page = found, page._withUnsafeGuaranteedRef({ $0.has(slot) }) else { return }
        if body(&page._withUnsafeGuaranteedRef { $0.slots + slot }.pointee) {
            withExtendedLifetime(take(slot, of: page, table: key.table, number: key.key >> Self.pageShift)) {}
        }
    }

    /// Takes the emptied page out of its directory and keeps it as a spare (or frees it when there are enough).
    private func drop(_ table: Int32, _ number: Int64) {
        if lastTable == table && lastPageNumber == number {
            lastTable = -1
            lastPageNumber = .min
            lastPage = nil
        }
        if Self.isIndexed(table, number) {
            let slot = directories.unsafelyUnwrapped[Int(table)].pages.unsafelyUnwrapped + Int(number)
            guard let page = slot.pointee else { return }
            slot.pointee = nil
            keepSpare(page.takeRetainedValue())
        } else if let page = hashed.removeValue(forKey: PageKey(table: table, page: number)) {
            keepSpare(page)
        }
    }

    /// Calls `body` with every page, with its table and page number.
    private func forEachPage(_ body: (Int32, Int64, Page) -> Void) {
        for t in 0..<tableCount {
            let directory = directories.unsafelyUnwrapped[t]
            for n in 0..<directory.capacity {
                if let page = directory.pages.unsafelyUnwrapped[n] { body(Int32(t), Int64(n), page.takeUnretainedValue()) }
            }
        }
        for (key, page) in hashed { body(key.table, key.page, page) }
    }

    /// Calls `body` with every value, page by page.
    func forEach(_ body: (Value) -> Void) {
        forEachPage { _, _, page in
            for i in 0..<Self.pageSize where page.has(i) { body(page.slots[i]) }
        }
    }

    /// Calls `body` with every key and value, page by page.
    func forEachKeyed(_ body: (ObjectKey, Value) -> Void) {
        forEachPage { table, number, page in
            for i in 0..<Self.pageSize where page.has(i) {
                body(ObjectKey(table: table, key: number << Self.pageShift | Int64(i)), page.slots[i])
            }
        }
    }

    /// Every value, page by page.
    var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        forEach { result.append($0) }
        return result
    }

    /// Removes every value of one table.
    func removeAll(table: Int32) {
        lastTable = -1
        lastPageNumber = .min
        lastPage = nil
        var removed: [Page] = []
        if table >= 0 && Int(table) < tableCount {
            let directory = directories.unsafelyUnwrapped[Int(table)]
            for n in 0..<directory.capacity {
                if let page = directory.pages.unsafelyUnwrapped[n] {
                    directory.pages.unsafelyUnwrapped[n] = nil
                    removed.append(page.takeRetainedValue())
                }
            }
        }
        for (key, page) in hashed where key.table == table {
            hashed[key] = nil
            removed.append(page)
        }
        for page in removed { count -= page.occupied }
        // The pages (and their values) go here, after the map is consistent: a value's release may use the map.
        withExtendedLifetime(removed) {}
    }

    /// Removes every value, and frees the spare pages too.
    func removeAll() {
        releaseAllPages()
        freeSpares()
        count = 0
    }

    /// Empties the directories and frees every page, after the map is consistent.
    private func releaseAllPages() {
        lastTable = -1
        lastPageNumber = .min
        lastPage = nil
        var removed: [Page] = Array(hashed.values)
        hashed = [:]
        if let directories {
            for t in 0..<tableCount {
                let directory = directories[t]
                guard let pages = directory.pages else { continue }
                for n in 0..<directory.capacity {
                    if let page = pages[n] { removed.append(page.takeRetainedValue()) }
                }
                pages.deallocate()
            }
            directories.deallocate()
        }
        directories = nil
        tableCount = 0
        withExtendedLifetime(removed) {}
    }
}
