/// The coordinator's cache of row snapshots, shared by its contexts.
///
/// Each snapshot counts the registered objects that hold it; when the last one lets go, the snapshot is dropped.
/// Not thread-safe by itself: the coordinator's lock guards it.
struct RowCache {
    struct Entry {
        var values: [Slot]
        var version: Int64
        var entityNumber: Int32
        var holders: Int32
    }

    private(set) var entries: [ObjectKey: Entry] = [:]
    /// Lookups answered from the cache, and lookups that had to go to SQLite.
    var hits = 0
    var misses = 0

    var count: Int { entries.count }

    @inline(__always) func entry(for key: ObjectKey) -> Entry? { entries[key] }

    /// Stores a row read from SQLite, keeping the holder count of an existing entry.
    /// Stores a row, keeping the holder count of an existing entry (plus one when `addingHolder`).
    @inline(__always) mutating func store(_ key: ObjectKey, values: [Slot], version: Int64, entityNumber: Int32, addingHolder: Bool = false) {
        Self.overwrite(&entries[key, default: Entry(values: [], version: 0, entityNumber: entityNumber, holders: 0)],
                       values: values, version: version, entityNumber: entityNumber, addingHolder: addingHolder)
    }

    @inline(__always) private static func overwrite(_ entry: inout Entry, values: [Slot], version: Int64, entityNumber: Int32, addingHolder: Bool) {
        entry.values = values
        entry.version = version
        entry.entityNumber = entityNumber
        if addingHolder { entry.holders += 1 }
    }

    /// The snapshot for a row just read at `version`: the cached values when still current (no decoding), else
    /// `decode()`'s. The caller's object holds the snapshot afterwards (one probe of the table in all).
    @inline(__always) mutating func upsertAndRetain(_ key: ObjectKey, version: Int64, entityNumber: Int32, decode: () -> [Slot]) -> [Slot] {
        Self.upsert(&entries[key, default: Entry(values: [], version: -1, entityNumber: entityNumber, holders: 0)],
                    version: version, entityNumber: entityNumber, decode: decode)
    }

    @inline(__always) private static func upsert(_ entry: inout Entry, version: Int64, entityNumber: Int32, decode: () -> [Slot]) -> [Slot] {
        if entry.version != version || entry.entityNumber != entityNumber {
            entry.values = decode()
            entry.version = version
            entry.entityNumber = entityNumber
        }
        entry.holders += 1
        return entry.values
    }

    @inline(__always) mutating func retain(_ key: ObjectKey) -> Bool {
        guard entries[key] != nil else { return false }
        entries[key]!.holders += 1
        return true
    }

    mutating func release(_ key: ObjectKey) {
        guard let holders = entries[key]?.holders else { return }
        if holders <= 1 { entries[key] = nil } else { entries[key]!.holders = holders - 1 }
    }

    mutating func remove(_ key: ObjectKey) { entries[key] = nil }

    mutating func reserveCapacity(_ capacity: Int) { entries.reserveCapacity(capacity) }

    mutating func removeAll() { entries.removeAll() }
}
