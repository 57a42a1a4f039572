import Foundation
import Synchronization

/// Connects contexts to a store: serializes access to SQLite and keeps the row cache the contexts share.
///
/// Thread-safe: any context on any queue may call it.
public final class PersistentStoreCoordinator: @unchecked Sendable {
    /// The model every context of this coordinator uses.
    public let managedObjectModel: ManagedObjectModel
    private let lock = NSRecursiveLock()
    private var store: SQLiteStore?
    /// The store connection's statement probe (nil with probes off), kept at hand for the per-fetch totals.
    private var statementProbe: ConnectionProbe?
    private let rowCache = RowCache()
    /// The added store's identity — its identifier, path and type — for what needs only that, without the lock.
    private let identity = Mutex<StoreIdentity?>(nil)
    /// The added store as Core Data's object (`persistentStores`); guarded by the lock.
    var persistentStoreObject: PersistentStore?
    /// Guards the compiled-filter caches and their counters, apart from the lock on the store: a fetch compiles or
    /// finds its SQL without waiting for a save.
    private let cacheLock = NSLock()
    /// Reader connections for fetches that find the coordinator busy (a WAL store file only); made with the first
    /// store that can have them, and pointed at each store added after it (`ReaderPool.retarget`).
    private let readers = AtomicLazyReference<ReaderPool>()
    /// The reader pool, if the store has one (tests).
    var readerPool: ReaderPool? { readers.load() }
    /// The most reader connections a coordinator opens, whatever it is asked for.
    public static let maximumReaderConnections = 64
    /// Reader connections a coordinator opens beside its store's own, at most (Core Data's connection pool): a WAL
    /// store file only; 0 makes every read wait its turn on the store's connection.
    public static let defaultReaderConnections = 4
    private var filterCache: [FetchFilterKey: FetchFilter] = [:]
    private var templateCache: [FetchFilterShapeKey: FetchFilterTemplate] = [:]
    private var filterCompilations = 0
    private var inMemorySorts = 0

    /// Where this coordinator's probe events go (the environment's settings unless given).
    public let probes: Probes
    /// Root contexts that merge each other's saves (`automaticallyMergesChangesFromParent`).
    let autoMergers = AutoMergers()

    /// Creates a coordinator for `model`; add a store before using contexts. `probes` defaults to what
    /// `FAULTLINE_SQLDEBUG`, `FAULTLINE_TRACE` and the launch arguments ask for.
    public init(managedObjectModel: ManagedObjectModel, probes: Probes = .shared) {
        self.managedObjectModel = managedObjectModel
        self.probes = probes
    }

    /// Opens the SQLite store at `url`, creating it when absent (unless `options` has `.readOnly`). Fails with a
    /// `StoreError` when the file is not a store, is damaged, or was made for another model.
    public func addPersistentStore(at url: URL, options: PersistentStoreOptions = []) throws {
        try addPersistentStore(type: .sqlite, at: url, options: options)
    }

    /// Opens a store of `type`: an SQLite file at `url` (created when absent unless `options` has `.readOnly`), or
    /// an in-memory store (`url` is not used). `pragmas` run after Faultline's own (WAL, `synchronous=NORMAL`), so
    /// that they win. A WAL store file gets up to `readerConnections` pooled readers, none while probes are on
    /// (docs/container.md). The coordinator holds one store: adding one when it has one is an error.
    public func addPersistentStore(type: PersistentStoreType, at url: URL?, options: PersistentStoreOptions = [],
                                   pragmas: [StorePragma] = [], readerConnections: Int = defaultReaderConnections) throws {
        guard type == .sqlite || type == .inMemory else {
            throw StoreError.invalidConfiguration("the store type '\(type)' is not one Faultline opens (SQLite, InMemory)")
        }
        if withLock({ store != nil }) {
            throw StoreError.invalidConfiguration("the coordinator already has a store (\(storePath ?? SQLiteStore.inMemoryPath)); Faultline's coordinator holds one")
        }
        let inMemory = type == .inMemory
        guard inMemory || url != nil else { throw StoreError.invalidConfiguration("an SQLite store needs a URL") }
        let path = inMemory ? SQLiteStore.inMemoryPath : url.map(\.path) ?? ""
        let opened: SQLiteStore
        do {
            opened = try SQLiteStore(path: path, model: managedObjectModel, readOnly: options.contains(.readOnly), inMemory: inMemory,
                                     pragmas: pragmas, probes: probes)
        } catch StoreError.modelMismatch(let path, let differences)
                    where options.contains(.migratesAutomatically) && options.contains(.infersMappingAutomatically) && !options.contains(.readOnly) {
            // Core Data's lightweight migration on open: the model's bundle holds the store's version.
            guard let bundle = managedObjectModel.bundle, let version = managedObjectModel.versionName else {
                throw StoreError.modelMismatch(path: path, differences: differences + ["(no migration: the model was not loaded from a model bundle, which would hold the store's version)"])
            }
            try Self.migrateStore(at: URL(fileURLWithPath: path), toVersionOf: bundle, version: version, probes: probes)
            opened = try SQLiteStore(path: path, model: managedObjectModel, readOnly: false, pragmas: pragmas, probes: probes)
        }
        if options.contains(.persistentHistoryTracking) && !options.contains(.readOnly) { try opened.startHistoryTracking() }
        try withLock {
            guard store == nil else { throw StoreError.invalidConfiguration("the coordinator already has a store; Faultline's coordinator holds one") }
            store = opened
            statementProbe = opened.connection.probe
            persistentStoreObject = PersistentStore(type: type, url: inMemory ? nil : url, identifier: opened.identifier,
                                                    options: options, coordinator: self)
        }
        installed(opened, readerConnections: readerConnections, options: options)
    }

    /// Points what is read without the lock at a store just installed under it (nil: removed): its identity, and
    /// the reader pool. With probes on, a fetch counts the statements it ran on the store's connection, so the pool
    /// stays off.
    func installed(_ opened: SQLiteStore?, readerConnections: Int, options: PersistentStoreOptions) {
        identity.withLock { $0 = opened.map(StoreIdentity.init) }
        RemoteChangeObservers.observe(opened.flatMap { options.contains(.postsRemoteChangeNotifications) ? RemoteChangeObservers.key(path: $0.filePath, coordinator: self) : nil },
                                      by: self)
        let pooled = opened.flatMap { opened in
            readerConnections > 0 && !probes.isEnabled && !opened.isInMemory && !options.contains(.readOnly) && opened.isWriteAheadLogged ? opened : nil
        }
        if let pool = readers.load() {
            pool.retarget(pooled)
        } else if let pooled {
            _ = readers.storeIfNil(ReaderPool(store: pooled, maximum: min(readerConnections, Self.maximumReaderConnections)))
        }
    }

    /// Core Data's `NSPersistentHistoryChangeRequest.deleteHistory(before:)`: removes the transactions recorded
    /// before `date`, and their changes; returns how many transactions went.
    @discardableResult
    public func deleteHistory(before date: Date) throws -> Int {
        try withLock { try requireStore().deleteHistory(before: date) }
    }

    /// Removes the transactions numbered below `number`, and their changes; returns how many went.
    func deleteHistory(beforeTransaction number: Int64) throws -> Int {
        try withLock { try requireStore().deleteHistory(beforeTransaction: number) }
    }

    /// Running totals of the statement probe: statements, seconds in SQLite, rows (zeros when probes are off).
    func probeTotals() -> ProbeTotals {
        withLock { probeTotalsLocked() }
    }

    /// `probeTotals()` for a caller that holds the lock.
    func probeTotalsLocked() -> ProbeTotals {
        statementProbe?.totals ?? ProbeTotals()
    }

    /// The linked SQLite library's version.
    public static var sqliteVersion: String { SQLiteConnection.libraryVersion }

    /// The store's UUID, or nil before a store is added.
    public var storeIdentifier: String? { identity.withLock { $0?.identifier } }

    /// The store file's path, or nil before a store is added and for an in-memory store.
    public var storePath: String? { identity.withLock { $0?.path } }

    /// The type of the store, or nil before a store is added.
    public var storeType: PersistentStoreType? { identity.withLock { $0.map { $0.path == nil ? .inMemory : .sqlite } } }

    /// Counters since the coordinator was created: exact, for tests and reports.
    public var statistics: Statistics {
        let (sorts, compilations) = withCacheLock { (inMemorySorts, filterCompilations) }
        return withLock {
            Statistics(statementsExecuted: store?.connection.statementCount ?? 0,
                       rowCacheHits: rowCache.hits, rowCacheMisses: rowCache.misses, rowCacheCount: rowCache.count,
                       inMemorySorts: sorts, predicateCompilations: compilations,
                       pooledReads: readers.load()?.reads.load(ordering: .relaxed) ?? 0)
        }
    }

    /// Exact counters of a coordinator's work.
    public struct Statistics: Sendable, Equatable {
        /// SQL statements run (each execution of a prepared statement, transactions included).
        public var statementsExecuted: Int
        /// Faults fulfilled from the row cache.
        public var rowCacheHits: Int
        /// Faults that had to read SQLite.
        public var rowCacheMisses: Int
        /// Snapshots in the row cache now.
        public var rowCacheCount: Int
        /// Fetches whose order SQLite could not give (localized sorts), sorted in memory instead.
        public var inMemorySorts: Int
        /// Predicates and orders compiled to SQL (repeated fetches of one request compile once).
        public var predicateCompilations: Int
        /// Fetches that read on a pooled reader connection because the coordinator was busy (`ReaderPool`).
        public var pooledReads: Int = 0
    }

    @inline(__always) private func withCacheLock<T>(_ body: () throws -> T) rethrows -> T {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        return try body()
    }

    @inline(__always) func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Puts `new` (nil: none) in place of the store under the lock, as Core Data's `remove(_:)` and
    /// `migratePersistentStore` do: the row cache is emptied, the old store's connection is closed once nothing
    /// holds it. The caller holds the lock, and calls `installed` after.
    func exchangeStoreLocked(_ new: SQLiteStore?, object: PersistentStore?) {
        store = new
        statementProbe = new?.connection.probe
        persistentStoreObject = object
        rowCache.removeEverything()
    }

    /// The store, for a caller holding the lock (nil before one is added and after it is removed).
    var storeLocked: SQLiteStore? { store }

    func requireStore() throws -> SQLiteStore {
        guard let store else { throw StoreError.noStore }
        return store
    }

    // MARK: Reading

    /// A row handed to a context: its entity, key and version, and `snapshot`, which puts the row in the row
    /// cache (decoding it only when the cached copy is missing or stale) and returns its values, held by the
    /// caller's object from then on. A handler that already holds a current snapshot need not call it.
    typealias RowHandler = (_ entity: EntityDescription, _ key: Int64, _ version: Int64, _ snapshot: () -> SlotRow) throws -> Void

    /// Takes the lock, unless it is busy and a pooled reader connection is free: then returns that connection,
    /// and the caller reads on it without the lock. Without a pool, always takes the lock.
    @inline(__always) private func lockOrCheckOutReader() -> (ReaderPool, ReaderPool.Reader)? {
        guard let pool = readers.load() else {
            lock.lock()
            return nil
        }
        if lock.try() { return nil }
        if let reader = pool.checkout() { return (pool, reader) }
        lock.lock()
        return nil
    }

    /// Runs a full-row fetch of `entity` and calls `handler` per row, under the lock. When another thread holds
    /// the lock and a pooled reader is free, the rows are read and decoded on the reader meanwhile, and handed over
    /// under the lock once it is free.
    func fetchRows(entity: EntityDescription, includesSubentities: Bool, keys: [Int64]?, filter: FetchFilter?,
                   limit: Int, offset: Int, handler: RowHandler) throws {
        if let (pool, reader) = lockOrCheckOutReader() {
            defer { pool.checkin(reader) }
            return try fetchRows(on: reader, of: pool, entity: entity, includesSubentities: includesSubentities, keys: keys,
                                 filter: filter, limit: limit, offset: offset, handler: handler)
        }
        defer { lock.unlock() }
        do {
            let store = try requireStore()
            store.purpose(.fetch)
            let fetch = FullRowFetch(store: store, entity: entity, includesSubentities: includesSubentities, keys: keys, coordinator: self)
            let root = fetch.root, readAt = ProbeClock.now()
            // The rows' values are decoded into shared blocks (one allocation for many rows).
            var writer = SlotRowWriter()
            let timing = statementProbe?.splitsFetchTime == true ? statementProbe : nil
            // A single-entity table's entity and plan, held here once rather than copied out for each row.
            let single = fetch.single, singlePlan = fetch.singlePlan
            for chunk in fetch.chunks {
                let query = fetch.query(chunk, filter: filter, limit: limit, offset: offset)
                let statement = try store.statement(query.sql)
                defer { statement.reset() }
                query.bind(statement)
                while try statement.step() {
                    let rowEntity: EntityDescription, plan: EntityPlan, key: Int64, version: Int64
                    if let single, let singlePlan {
                        (key, version) = try fetch.keyAndVersion(statement, plan: singlePlan)
                        rowEntity = single
                        plan = singlePlan
                    } else {
                        (rowEntity, plan, key, version) = try fetch.row(statement)
                    }
                    try handler(rowEntity, key, version) {
                        let start = timing != nil ? ProbeClock.now() : 0
                        let row = rowCache.upsertAndRetain(ObjectKey(table: root, key: key), version: version, entityNumber: Int32(rowEntity.entityNumber), at: readAt) {
                            plan.decode(statement, into: &writer)
                        }
                        if let timing { timing.rowCacheTime(start, ProbeClock.now()) }
                        return row
                    }
                }
            }
        }
    }

    /// What a full-row fetch of an entity reads with, on any connection: its table's SELECT, the entity restriction,
    /// the key chunks, and per row the row's entity, plan, key and version.
    private struct FullRowFetch {
        let store: SQLiteStore
        let entity: EntityDescription
        let tablePlan: TablePlan
        let table: String
        let conditions: [String], bounds: [Int64]
        let chunks: [[Int64]?]
        let root: Int32
        /// A single-entity table needs no Z_ENT lookup per row.
        let single: EntityDescription?
        let singlePlan: EntityPlan?

        init(store: SQLiteStore, entity: EntityDescription, includesSubentities: Bool, keys: [Int64]?, coordinator: PersistentStoreCoordinator) {
            self.store = store
            self.entity = entity
            tablePlan = store.tablePlan(for: entity)
            table = tablePlan.table.name
            (conditions, bounds) = coordinator.entityConditions(store.plan(for: entity), includesSubentities: includesSubentities)
            chunks = keys.map { KeyList.chunks($0).map(Array.init) } ?? [nil]
            root = Int32(entity.root.entityNumber)
            single = tablePlan.isSingleEntity ? entity.root : nil
            singlePlan = single.map { store.plan(for: $0) }
        }

        func query(_ chunk: [Int64]?, filter: FetchFilter?, limit: Int, offset: Int) -> SelectQuery {
            SelectQuery(select: tablePlan.selectSQL, conditions: conditions, bounds: bounds, keys: chunk, filter: filter, limit: limit, offset: offset)
        }

        /// The current row of a single-entity table, read with `plan` (`singlePlan`): its key and version, checked as
        /// `row(_:)` checks them.
        @inline(__always) func keyAndVersion(_ statement: Statement, plan: EntityPlan) throws -> (key: Int64, version: Int64) {
            let key = try statement.storedKey(at: TablePlan.keyColumn, table: table, column: "Z_PK", row: StoredKeyRule.row(statement.int64(at: TablePlan.keyColumn)))
            let version = try statement.storedVersion(at: TablePlan.versionColumn, table: table, row: StoredKeyRule.row(key))
            try plan.checkForeignKeys(statement, table: table, key: key)
            return (key, version)
        }

        /// The current row: its entity (`single`'s, else its `Z_ENT`'s) and plan, its key and version, each checked
        /// against Core Data's rules (`StoredKeyRule`).
        @inline(__always) func row(_ statement: Statement) throws -> (entity: EntityDescription, plan: EntityPlan, key: Int64, version: Int64) {
            let key = try statement.storedKey(at: TablePlan.keyColumn, table: table, column: "Z_PK", row: StoredKeyRule.row(statement.int64(at: TablePlan.keyColumn)))
            let rowEntity: EntityDescription
            let plan: EntityPlan
            if let single, let singlePlan {
                rowEntity = single
                plan = singlePlan
            } else {
                rowEntity = try statement.storedEntity(at: TablePlan.entityColumn, of: entity.root, table: table, column: "Z_ENT", row: StoredKeyRule.row(key))
                plan = store.plan(for: rowEntity)
            }
            let version = try statement.storedVersion(at: TablePlan.versionColumn, table: table, row: StoredKeyRule.row(key))
            try plan.checkForeignKeys(statement, table: table, key: key)
            return (rowEntity, plan, key, version)
        }
    }

    /// `fetchRows` on a pooled reader: every row read and decoded without the lock, then handed over under it. A
    /// row the cache holds in a newer version (a save committed meanwhile) keeps the cache's values.
    private func fetchRows(on reader: ReaderPool.Reader, of pool: ReaderPool, entity: EntityDescription, includesSubentities: Bool,
                           keys: [Int64]?, filter: FetchFilter?, limit: Int, offset: Int, handler: RowHandler) throws {
        pool.reads.add(1, ordering: .relaxed)
        pool.readWillBegin?()
        let store = reader.store, connection = reader.connection
        let fetch = FullRowFetch(store: store, entity: entity, includesSubentities: includesSubentities, keys: keys, coordinator: self)
        let root = fetch.root, readAt = ProbeClock.now()
        var rows: [(entity: EntityDescription, key: Int64, version: Int64, values: SlotRow)] = []
        var writer = SlotRowWriter()
        for chunk in fetch.chunks {
            let query = fetch.query(chunk, filter: filter, limit: limit, offset: offset)
            let statement = try store.wrap { try connection.cachedStatement(query.sql) }
            defer { statement.reset() }
            query.bind(statement)
            while try store.wrap({ try statement.step() }) {
                let (rowEntity, plan, key, version) = try fetch.row(statement)
                rows.append((rowEntity, key, version, plan.decode(statement, into: &writer)))
            }
        }
        try withLock {
            for row in rows {
                try handler(row.entity, row.key, row.version) {
                    rowCache.upsertAndRetainUnlessNewer(ObjectKey(table: root, key: row.key), version: row.version,
                                                        entityNumber: Int32(row.entity.entityNumber), at: readAt) { row.values }
                }
            }
        }
    }

    /// Runs a read that touches no row cache — keys, counts, dictionary rows — on a pooled reader when the
    /// coordinator is busy (without the lock: nothing is handed over), else under the lock on the store's
    /// connection. `body` prepares its statements with the function it is given.
    private func readWithoutCache<T>(_ purpose: StatementPurpose, _ body: (SQLiteStore, (String) throws -> Statement) throws -> T) throws -> T {
        if let (pool, reader) = lockOrCheckOutReader() {
            defer { pool.checkin(reader) }
            pool.reads.add(1, ordering: .relaxed)
            pool.readWillBegin?()
            let store = reader.store
            return try body(store) { sql in try store.wrap { try reader.connection.cachedStatement(sql) } }
        }
        defer { lock.unlock() }
        let store = try requireStore()
        store.purpose(purpose)
        return try body(store) { try store.statement($0) }
    }

    /// The (entity, key) of each row `filter` selects, in order, without reading the rows' values
    /// (`SELECT t0.Z_ENT, t0.Z_PK …`): IDs-only fetches and the first query of a batched fetch.
    func fetchKeys(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter?, limit: Int, offset: Int,
                   purpose: StatementPurpose = .fetch) throws -> [(EntityDescription, Int64)] {
        try readWithoutCache(purpose) { store, prepare in
            let single = entity.root.subentities.isEmpty
            let (conditions, bounds) = entityConditions(store.plan(for: entity), includesSubentities: includesSubentities)
            let query = SelectQuery(select: "SELECT \(single ? "0" : "t0.Z_ENT"), t0.Z_PK FROM \(entity.table.name) t0", conditions: conditions,
                                    bounds: bounds, keys: nil, filter: filter, limit: limit, offset: offset)
            let statement = try prepare(query.sql)
            defer { statement.reset() }
            query.bind(statement)
            var keys: [(EntityDescription, Int64)] = []
            let table = entity.table.name
            while try store.wrap({ try statement.step() }) {
                let key = try statement.storedKey(at: 1, table: table, column: "Z_PK", row: StoredKeyRule.row(statement.int64(at: 1)))
                let rowEntity = single ? entity.root : try statement.storedEntity(at: 0, of: entity.root, table: table, column: "Z_ENT", row: StoredKeyRule.row(key))
                keys.append((rowEntity, key))
            }
            return keys
        }
    }

    /// Runs a SELECT the fetch layer built and returns its rows' slots one row after another, `columns` a row
    /// (dictionary fetches): one array, not one a row.
    func queryRows(_ sql: String, bindings: [Slot], columns: Int) throws -> [Slot] {
        try readWithoutCache(.fetch) { store, prepare in
            let statement = try prepare(sql)
            defer { statement.reset() }
            for (i, value) in bindings.enumerated() { statement.bind(value, at: Int32(i + 1)) }
            var slots: [Slot] = []
            while try store.wrap({ try statement.step() }) {
                for column in 0..<Int32(columns) { slots.append(statement.slot(at: column)) }
            }
            return slots
        }
    }

    /// The number of rows of `entity` that `filter` selects; reads no row. On a pooled reader, without the lock,
    /// when the coordinator is busy.
    func countRows(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter?) throws -> Int {
        try readWithoutCache(.fetch) { store, prepare in
            let (conditions, bounds) = entityConditions(store.plan(for: entity), includesSubentities: includesSubentities)
            var unordered = filter
            unordered?.orderBy = []
            let query = SelectQuery(select: "SELECT COUNT(*) FROM \(entity.table.name) t0", conditions: conditions, bounds: bounds,
                                    keys: nil, filter: unordered, limit: 0, offset: 0)
            let statement = try prepare(query.sql)
            defer { statement.reset() }
            query.bind(statement)
            _ = try store.wrap { try statement.step() }
            return Int(statement.int64(at: 0))
        }
    }

    /// What a fetched results controller's section cache checks the rows against: how many rows the filter selects,
    /// and the totals of their versions (`Z_OPT`, which every update raises) and keys (a row deleted and another
    /// inserted changes it). One statement, no row read into memory.
    func fingerprintRows(entity: EntityDescription, includesSubentities: Bool, filter: FetchFilter?) throws -> [Double] {
        try readWithoutCache(.fetch) { store, prepare in
            let (conditions, bounds) = entityConditions(store.plan(for: entity), includesSubentities: includesSubentities)
            var unordered = filter
            unordered?.orderBy = []
            let query = SelectQuery(select: "SELECT COUNT(*), TOTAL(t0.Z_OPT), TOTAL(t0.Z_PK) FROM \(entity.table.name) t0", conditions: conditions,
                                    bounds: bounds, keys: nil, filter: unordered, limit: 0, offset: 0)
            let statement = try prepare(query.sql)
            defer { statement.reset() }
            query.bind(statement)
            _ = try store.wrap { try statement.step() }
            return [Double(statement.int64(at: 0)), statement.double(at: 1), statement.double(at: 2)]
        }
    }

    /// The entity restriction of a fetch: (conditions, their bound entity numbers).
    func entityConditions(_ plan: EntityPlan, includesSubentities: Bool) -> ([String], [Int64]) {
        guard let filter = includesSubentities ? plan.filterWithSubentities : plan.filterWithoutSubentities else { return ([], []) }
        return ([filter.sql], filter.low == filter.high ? [filter.low] : [filter.low, filter.high])
    }

    /// The compiled SQL for a fetch request's predicate and order, compiled once per shape (`PredicateShape`: the
    /// predicate with its constants' values left out), or, for the predicates whose SQL depends on more, once per
    /// distinct request. Each cache keeps its last 256. `shape` is the caller's for scanning the predicate.
    func fetchFilter(for entity: EntityDescription, predicate: ObjectPredicate?, sortDescriptors: [FetchSortDescriptor],
                     shape: PredicateShape) throws -> FetchFilter {
        guard shape.scan(entity: entity.entityNumber, predicate: predicate, sortDescriptors: sortDescriptors) else {
            return try fetchFilter(for: entity, predicate: predicate, sortDescriptors: sortDescriptors)
        }
        let key = shape.key
        if let template = withCacheLock({ templateCache[key] }) {
            shape.text = template.text.map(Unmanaged.passUnretained)
            return try template.filter(constants: shape.constants)
        }
        let (filter, parameters) = try FetchFilter.compileWithParameters(predicate: predicate, sortDescriptors: sortDescriptors,
                                                                       entity: entity, storeIdentifier: storeIdentifier)
        let template = FetchFilterTemplate(filter, parameters: parameters, constants: shape.constants,
                                           textOf: probes.recordsFetchesByShape ? predicate : nil)
        shape.text = template?.text.map(Unmanaged.passUnretained)
        withCacheLock {
            filterCompilations += 1
            if let template {
                if templateCache.count >= 256 { templateCache.removeAll(keepingCapacity: true) }
                templateCache[key.owned()] = template
            }
        }
        return filter
    }

    /// The compiled SQL for a fetch request's predicate and order, compiled once per distinct request (the cache
    /// keeps the last 256).
    func fetchFilter(for entity: EntityDescription, predicate: ObjectPredicate?, sortDescriptors: [FetchSortDescriptor]) throws -> FetchFilter {
        let key = FetchFilterKey(entity: entity.entityNumber, predicate: predicate, sortDescriptors: sortDescriptors)
        if let cached = withCacheLock({ filterCache[key] }) { return cached }
        let filter = try FetchFilter.compile(predicate: predicate, sortDescriptors: sortDescriptors, entity: entity, storeIdentifier: storeIdentifier)
        withCacheLock {
            filterCompilations += 1
            if filterCache.count >= 256 { filterCache.removeAll(keepingCapacity: true) }
            filterCache[key] = filter
        }
        return filter
    }

    /// Counts a sort done in memory (localized comparison), for statistics.
    func noteInMemorySort() {
        withCacheLock { inMemorySorts += 1 }
    }

    /// The snapshot of one row for fault fulfilment: from the row cache when present (no SQL) and not older than
    /// `maxAge` nanoseconds (nil: any age), else one SELECT. The caller's object holds the snapshot afterwards.
    func snapshotForFault(entity: EntityDescription, key: Int64, retain: Bool, maxAge: UInt64? = nil) throws -> (values: SlotRow, version: Int64, entity: EntityDescription)? {
        try withLock {
            let objectKey = ObjectKey(table: Int32(entity.root.entityNumber), key: key)
            if let cached = rowCache.entry(for: objectKey), let cachedEntity = entity.model.entity(number: Int(cached.entityNumber)),
               maxAge.map({ ProbeClock.now() &- cached.storedAt <= $0 }) ?? true {
                guard cachedEntity.isKind(of: entity) else {
                    throw StoreError.entityMismatch(table: entity.table.name, key: key, rowEntity: cachedEntity, expected: entity)
                }
                rowCache.hits += 1
                if retain { _ = rowCache.retain(objectKey) }
                return (cached.values, cached.version, cachedEntity)
            }
            rowCache.misses += 1
            guard let row = try readRow(entity: entity, key: key) else { return nil }
            if retain { _ = rowCache.retain(objectKey) }
            return row
        }
    }

    /// Reads one row of `entity` (or a sub-entity) from SQLite, bypassing the row cache (and refreshing it); a row of
    /// another entity is refused.
    func readRow(entity: EntityDescription, key: Int64) throws -> (values: SlotRow, version: Int64, entity: EntityDescription)? {
        try withLock {
            let store = try requireStore()
            store.purpose(.fault)
            let tablePlan = store.tablePlan(for: entity)
            let statement = try store.statement(tablePlan.selectByKeySQL)
            defer { statement.reset() }
            statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            let table = tablePlan.table.name
            let rowEntity = tablePlan.isSingleEntity ? entity.root
                : try statement.storedEntity(at: TablePlan.entityColumn, of: entity.root, table: table, column: "Z_ENT", row: StoredKeyRule.row(key))
            // A row of a sub-entity fits an object of its parent (inherited properties come first); another does not.
            guard rowEntity.isKind(of: entity) else { throw StoreError.entityMismatch(table: table, key: key, rowEntity: rowEntity, expected: entity) }
            let plan = store.plan(for: rowEntity)
            let version = try statement.storedVersion(at: TablePlan.versionColumn, table: table, row: StoredKeyRule.row(key))
            try plan.checkForeignKeys(statement, table: table, key: key)
            let values = plan.decode(statement)
            rowCache.store(ObjectKey(table: Int32(entity.root.entityNumber), key: key), values: values, version: version,
                           entityNumber: Int32(rowEntity.entityNumber), at: ProbeClock.now())
            return (values, version, rowEntity)
        }
    }

    /// The destination rows of a to-many relationship of the object `key`: (entity, key) pairs, in order for
    /// ordered relationships.
    func relationshipKeys(_ relationship: RelationshipDescription, of key: Int64) throws -> [(EntityDescription, Int64)] {
        try readWithoutCache(.relationshipFault) { store, prepare in
            let destination = relationship.destination!
            let single = destination.root.subentities.isEmpty
            let sql = RelationshipSQL.select(relationship, singleEntity: single)
            let statement = try prepare(sql)
            defer { statement.reset() }
            statement.bind(key, at: 1)
            var result: [(EntityDescription, Int64)] = []
            // A single-entity destination's keys come from the join table itself, else from the destination's Z_PK.
            let join = single ? relationship.joinTable : nil
            let (table, column) = join.map { ($0.name, $0.destinationColumn) } ?? (destination.table.name, "Z_PK")
            let source = key
            while try store.wrap({ try statement.step() }) {
                let key = try statement.storedKey(at: 1, table: table, column: column,
                                                  row: join.map { "the row with \($0.sourceColumn) \(source)" } ?? StoredKeyRule.row(statement.int64(at: 1)))
                let entity = single ? destination
                    : try statement.storedEntity(at: 0, of: destination.root, table: destination.table.name, column: "Z_ENT", row: StoredKeyRule.row(key))
                result.append((entity, key))
            }
            return result
        }
    }

    /// Refreshes a row's cached snapshot for an object that already holds one (called under the lock, from a
    /// fetch handler): takes the new snapshot, then drops the extra hold.
    @discardableResult
    func refreshCachedRow(root: Int32, key: Int64, _ snapshot: () -> SlotRow) -> SlotRow {
        let values = snapshot()
        rowCache.release(ObjectKey(table: root, key: key))
        return values
    }

    /// The members of a join-table relationship for several sources at once: (source key, destination entity,
    /// destination key), in each source's order.
    func relationshipKeys(_ relationship: RelationshipDescription, ofSources sources: [Int64]) throws -> [(Int64, EntityDescription, Int64)] {
        guard let join = relationship.joinTable, !sources.isEmpty else { return [] }
        return try readWithoutCache(.fetch) { store, prepare in
            let destination = relationship.destination!
            let single = destination.root.subentities.isEmpty
            let list = KeyList.condition("j.\(join.sourceColumn)", count: sources.count)
            let order = " ORDER BY j.\(join.sourceColumn)" + (join.orderColumn.map { ", j.\($0)" } ?? "") + ", j.\(join.destinationColumn)"
            let sql = single
                ? "SELECT j.\(join.sourceColumn), 0, j.\(join.destinationColumn) FROM \(join.name) j WHERE \(list)\(order)"
                : "SELECT j.\(join.sourceColumn), t0.Z_ENT, t0.Z_PK FROM \(destination.table.name) t0 JOIN \(join.name) j ON t0.Z_PK = j.\(join.destinationColumn) WHERE \(list)\(order)"
            let statement = try prepare(sql)
            defer { statement.reset() }
            for (i, value) in KeyList.bindings(sources).enumerated() { statement.bind(value, at: Int32(i + 1)) }
            var rows: [(Int64, EntityDescription, Int64)] = []
            while try store.wrap({ try statement.step() }) {
                let source = statement.int64(at: 0)
                let key = try statement.storedKey(at: 2, table: single ? join.name : destination.table.name, column: single ? join.destinationColumn : "Z_PK",
                                                  row: single ? "the row with \(join.sourceColumn) \(source)" : StoredKeyRule.row(statement.int64(at: 2)))
                let entity = single ? destination
                    : try statement.storedEntity(at: 1, of: destination.root, table: destination.table.name, column: "Z_ENT", row: StoredKeyRule.row(key))
                rows.append((source, entity, key))
            }
            return rows
        }
    }

    /// Drops a row's snapshot whoever holds it (under the lock): the row changed behind the cache's back.
    func rowCacheRemove(_ key: ObjectKey) { rowCache.remove(key) }

    /// Drops the snapshots of objects another writer changed (takes the lock): their rows are read again.
    func forgetCachedRows(of changed: [ManagedObjectID]) {
        guard !changed.isEmpty else { return }
        withLock { for id in changed { rowCache.remove(id.objectKey) } }
    }

    /// A cached row, if any (under the lock).
    func cachedRow(_ key: ObjectKey) -> (values: SlotRow, version: Int64)? {
        rowCache.entry(for: key).map { ($0.values, $0.version) }
    }


    /// Drops every cached row (under the lock).
    func rowCacheRemoveAll() { rowCache.removeEverything() }

    /// Drops every cached row of a root entity's table (under the lock).
    func rowCacheRemoveTable(_ root: EntityDescription) { rowCache.removeAll(table: Int32(root.entityNumber)) }

    /// Marks snapshots as no longer held by one object each.
    func releaseSnapshots(_ keys: [ObjectKey]) {
        guard !keys.isEmpty else { return }
        withLock { for key in keys { rowCache.release(key) } }
    }

    /// Snapshots in the row cache; the caller holds the lock.
    var rowCacheCountLocked: Int { rowCache.count }

    /// One object's hold on its snapshot let go (each object's release calls this: no closure, nothing retained).
    func releaseSnapshot(_ key: ObjectKey) {
        lock.lock()
        rowCache.release(key)
        lock.unlock()
    }

    // MARK: Writing

    /// Writes a context's changes in one transaction (after allocating keys in one of its own) and updates the
    /// row cache. Nothing is written when it throws.
    /// Gives `objects` (inserted, without keys) their permanent keys now, in the store's key-allocation
    /// transaction (`obtainPermanentIDs(for:)`).
    func allocateKeys(for objects: [ManagedObject]) throws {
        try withLock {
            let store = try requireStore()
            try store.allocateKeys(for: objects)
        }
    }

    func save(_ changes: SaveChanges) throws {
        try withLock {
            let store = try requireStore()
            // Rows the store's triggers recomputed leave the row cache once this ends (after a failed write too:
            // their snapshots are then only dropped, never wrong).
            defer { dropRowsDerivedValuesChanged(store) }
            store.purpose(.save)
            try store.write(changes)
            let now = ProbeClock.now()
            // The new committed state of each written object becomes its row's snapshot; inserted objects
            // hold theirs from now on (updated ones already did).
            for object in changes.inserted {
                let snapshot = object.commitValues()
                let key = ObjectKey(table: Int32(object.entity.root.entityNumber), key: object.pendingKey)
                rowCache.store(key, values: snapshot, version: object.pendingVersion, entityNumber: Int32(object.entity.entityNumber), at: now, addingHolder: true)
            }
            for object in changes.updated {
                let snapshot = object.commitValues()
                rowCache.store(object.objectKeyForCache, values: snapshot, version: object.pendingVersion, entityNumber: Int32(object.entity.entityNumber), at: now)
            }
            for object in changes.deleted {
                rowCache.remove(ObjectKey(table: Int32(object.entity.root.entityNumber), key: object.key))
            }
        }
        noteStoreChanged()
    }

    /// Drops the snapshots of rows whose derived attributes the store's triggers recomputed in the last write (their
    /// objects see the new values when refreshed, as in Core Data); all of them when too many changed to list.
    /// The caller holds the lock.
    func dropRowsDerivedValuesChanged(_ store: SQLiteStore) {
        let (rows, overflowed) = store.connection.derivedValueChanges.drain()
        if overflowed { rowCache.removeEverything(); return }
        guard !rows.isEmpty else { return }
        var roots: [String: Int32] = [:]
        for entity in managedObjectModel.entities where entity.superentity == nil { roots[entity.table.name.uppercased()] = Int32(entity.entityNumber) }
        for row in rows {
            guard let table = roots[row.table.uppercased()] else { rowCache.removeEverything(); return }
            rowCache.remove(ObjectKey(table: table, key: row.key))
        }
    }

}
