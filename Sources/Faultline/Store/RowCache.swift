/// The coordinator's cache of row snapshots, shared by its contexts.
///
/// Each snapshot counts the registered objects that hold it; when the last one lets go, the snapshot is dropped.
/// Not thread-safe by itself: the coordinator's lock guards it. A class the coordinator holds in a `let`, so that
/// the per-object calls (a release for each object let go) reach its pages without retaining anything.
final class RowCache {
    struct Entry {
        var values: SlotRow
        var version: Int64
        var entityNumber: Int32
        var holders: Int32
        /// When the row was last read from or written to the store (`ProbeClock` nanoseconds), for staleness.
        var storedAt: UInt64
    }

    /// The entries' map, held by this cache (released in `deinit`) and used unretained: reached through a `let`,
    /// each per-row call retained and released it.
    private let map = Unmanaged.passRetained(PagedMap<Entry>(maxSpares: RowCache.sparePages))
    /// Emptied pages kept for the next rows, at most (`SparePages`): about 2.7 MB.
    static let sparePages = 1_024
    @inline(__always) private func entries<R>(_ body: (PagedMap<Entry>) -> R) -> R { map._withUnsafeGuaranteedRef(body) }
    /// Lookups answered from the cache, and lookups that had to go to SQLite.
    @exclusivity(unchecked) var hits = 0
    @exclusivity(unchecked) var misses = 0

    var count: Int { entries { $0.count } }

    deinit { map.release() }

    @inline(__always) func entry(for key: ObjectKey) -> Entry? { entries { $0[key] } }

    /// Stores a row, keeping the holder count of an existing entry (plus one when `addingHolder`).
    @inline(__always) func store(_ key: ObjectKey, values: SlotRow, version: Int64, entityNumber: Int32, at time: UInt64, addingHolder: Bool = false) {
        entries { entries in
            entries.update(key, default: { Entry(values: [], version: 0, entityNumber: entityNumber, holders: 0, storedAt: 0) }) { entry in
                entry.storedAt = time
                entry.values = values
                entry.version = version
                entry.entityNumber = entityNumber
                if addingHolder { entry.holders += 1 }
            }
        }
    }

    /// The snapshot for a row just read at `version`: the cached values when still current (no decoding), else
    /// `decode()`'s. The caller's object holds the snapshot afterwards (one lookup in all).
    @inline(__always) func upsertAndRetain(_ key: ObjectKey, version: Int64, entityNumber: Int32, at time: UInt64, decode: () -> SlotRow) -> SlotRow {
        entries { entries in
            entries.update(key, default: { Entry(values: [], version: -1, entityNumber: entityNumber, holders: 0, storedAt: 0) }) { entry in
                entry.storedAt = time
                // A new entry has no values yet, whatever version the row has (a damaged store's Z_OPT may be any
                // number).
                if entry.values.isEmpty || entry.version != version || entry.entityNumber != entityNumber {
                    entry.values = decode()
                    entry.version = version
                    entry.entityNumber = entityNumber
                }
                entry.holders += 1
                return entry.values
            }
        }
    }

    /// `upsertAndRetain` for a row read without the lock (`ReaderPool`): a snapshot of a newer version, stored by a
    /// save that committed after the read, stays.
    func upsertAndRetainUnlessNewer(_ key: ObjectKey, version: Int64, entityNumber: Int32, at time: UInt64, values: () -> SlotRow) -> SlotRow {
        entries { entries in
            entries.update(key, default: { Entry(values: [], version: -1, entityNumber: entityNumber, holders: 0, storedAt: 0) }) { entry in
                if entry.values.isEmpty || entry.version < version || (entry.version == version && entry.entityNumber != entityNumber) {
                    entry.values = values()
                    entry.version = version
                    entry.entityNumber = entityNumber
                    entry.storedAt = time
                }
                entry.holders += 1
                return entry.values
            }
        }
    }

    @inline(__always) func retain(_ key: ObjectKey) -> Bool {
        entries { $0.modifyIfPresent(key) { $0.holders += 1 } }
    }

    /// Lets go of one holder's hold on a snapshot, dropping it with the last (one lookup, no copy of the values).
    @inline(__always) func release(_ key: ObjectKey) {
        entries { entries in
            entries.modifyOrRemove(key) { entry in
                guard entry.holders > 1 else { return true }
                entry.holders -= 1
                return false
            }
        }
    }

    func remove(_ key: ObjectKey) { entries { $0[key] = nil } }

    func removeEverything() { entries { $0.removeAll() } }

    /// Drops every entry of one table.
    func removeAll(table: Int32) { entries { $0.removeAll(table: table) } }
}
