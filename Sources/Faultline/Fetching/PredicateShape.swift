import Foundation

/// What a fetch's SQL depends on, apart from its constants' values: the entity, the predicate's structure (key
/// paths, operators, options), the kind of each constant (nil, a string, an object ID of which entity, a collection
/// of how many …) and the sort descriptors. Fetches of one shape share their compiled SQL
/// (`FetchFilterTemplate`); the constants, listed in the order the predicate is written, give the bound values.
///
/// A context keeps one and scans each fetch's predicate into it, reusing its storage (a fetch by object ID scans
/// in about 1,000 instructions, without allocating).
///
/// Used on its context's queue only, so exclusivity is not checked at run time.
final class PredicateShape {
    /// The shape, encoded.
    @exclusivity(unchecked) private var bytes = RecordedBytes(capacity: 128)
    /// The predicate's constants, in the order the predicate is written.
    @exclusivity(unchecked) private(set) var constants: [PredicateValue] = []
    /// With a trace that records fetches by their shape: each constant, recorded for the trace as the scan meets
    /// it (the scan has the constant's parts in hand; recording them later would copy them out again).
    private let recordsConstants: Bool
    @exclusivity(unchecked) private var constantRecording = PredicateRecording(capacity: 64)
    /// Scans so far: a traced fetch that made exactly one knows that `text` and its recorded constants are its own.
    @exclusivity(unchecked) private(set) var scans: UInt = 0
    /// The shape's predicate text, set when the scanned fetch used a template that keeps one (its coordinator's
    /// trace records fetches by their shape). Not retained: it is read only by the traced fetch that made this scan,
    /// which holds the coordinator's lock, so no other fetch can drop the template meanwhile.
    @exclusivity(unchecked) var text: Unmanaged<PredicateTextShape>?

    init(recordsConstants: Bool = false) {
        self.recordsConstants = recordsConstants
    }

    deinit { bytes.deallocate() }

    /// The constants as the trace records them (`PredicateRecording.record(_:constants:)`), each ended by its
    /// token; empty unless made with `recordsConstants`. Valid until the next scan.
    var recordedConstants: UnsafeRawBufferPointer {
        constantRecording.bytes.slice(0, constantRecording.bytes.count)
    }

    /// Scans a fetch; false when its SQL depends on more than its shape (a `SUBQUERY`, or a `CAST` in the
    /// predicate) or it cannot be compiled, so that it is compiled as it is.
    func scan(entity: Int, predicate: ObjectPredicate?, sortDescriptors: [FetchSortDescriptor]) -> Bool {
        bytes.count = 0
        // (One or two constants: cheaper than `removeAll(keepingCapacity:)`, which is generic.)
        while constants.popLast() != nil {}
        scans &+= 1
        text = nil
        constantRecording.bytes.count = 0
        integer(entity)
        if let predicate {
            append(1)
            guard scan(predicate) else { return false }
        } else {
            append(0)
        }
        integer(sortDescriptors.count)
        for descriptor in sortDescriptors {
            name(descriptor.keyPath)
            append(descriptor.ascending ? 1 : 0)
            switch descriptor.comparison {
            case .binary: append(0)
            case .caseInsensitive: append(1)
            case .localized: append(2)
            }
        }
        return true
    }

    /// The shape as a cache key, valid until the next scan (`FetchFilterShapeKey.owned()` keeps it).
    var key: FetchFilterShapeKey { FetchFilterShapeKey(viewing: bytes.slice(0, bytes.count)) }

    private func scan(_ predicate: ObjectPredicate) -> Bool {
        switch predicate {
        case .constant(let value):
            append(value ? 2 : 3)
            return true
        case .comparison(let c):
            append(4)
            return scan(c)
        case .and(let items):
            append(5)
            return scan(items)
        case .or(let items):
            append(6)
            return scan(items)
        case .not(let inner):
            append(7)
            return scan(inner)
        }
    }

    private func scan(_ items: [ObjectPredicate]) -> Bool {
        integer(items.count)
        for item in items {
            guard scan(item) else { return false }
        }
        return true
    }

    private func scan(_ c: Comparison) -> Bool {
        switch c.op {
        case .equal: append(0)
        case .notEqual: append(1)
        case .lessThan: append(2)
        case .lessThanOrEqual: append(3)
        case .greaterThan: append(4)
        case .greaterThanOrEqual: append(5)
        case .beginsWith: append(6)
        case .endsWith: append(7)
        case .contains: append(8)
        case .like: append(9)
        case .matches: append(10)
        case .in: append(11)
        case .between: append(12)
        case .custom: return false
        }
        switch c.quantifier {
        case .direct: append(0)
        case .any: append(1)
        case .all: append(2)
        case .none: append(3)
        }
        append(UInt8(truncatingIfNeeded: c.options.rawValue))
        return scan(c.left) && scan(c.right)
    }

    private func scan(_ e: ObjectExpression) -> Bool {
        switch e {
        case .constant(let value):
            append(10)
            if case .objectID(let id) = value {
                // The common constant (`SELF == %@`), its ID copied out of the value once for both uses.
                append(8)
                integer(id.entity.entityNumber)
                if recordsConstants {
                    constantRecording.emit(objectID: id)
                    constantRecording.endConstant()
                }
            } else {
                kind(of: value)
                if recordsConstants { constantRecording.recordConstant(value) }
            }
            constants.append(value)
            return true
        case .evaluatedObject:
            append(11)
            return true
        case .keyPath(let base, let components):
            append(12)
            if let base {
                append(1)
                guard scan(base) else { return false }
            } else {
                append(0)
            }
            integer(components.count)
            for component in components { name(component) }
            return true
        case .variable(let name):
            append(13)
            self.name(name)
            return true
        case .aggregate(let items):
            append(14)
            integer(items.count)
            for item in items {
                guard scan(item) else { return false }
            }
            return true
        case .function(let name, let args):
            guard name != "CAST" else { return false }
            append(15)
            self.name(name)
            integer(args.count)
            for arg in args {
                guard scan(arg) else { return false }
            }
            return true
        case .subquery, .predicate, .placeholder:
            return false
        }
    }

    /// What the SQL depends on in a constant: its type; an object ID's entity (an ID of an unrelated entity
    /// matches nothing); a collection's length and its elements' kinds.
    private func kind(of value: PredicateValue) {
        switch value {
        case .null: append(0)
        case .bool: append(1)
        case .integer: append(2)
        case .double: append(3)
        case .string: append(4)
        case .date: append(5)
        case .data: append(6)
        case .uuid: append(7)
        case .objectID(let id):
            append(8)
            integer(id.entity.entityNumber)
        case .array(let items):
            append(9)
            integer(items.count)
            for item in items { kind(of: item) }
        }
    }

    @inline(__always) private func append(_ byte: UInt8) {
        bytes.reserve(1)
        bytes.base.storeBytes(of: byte, toByteOffset: bytes.count, as: UInt8.self)
        bytes.count &+= 1
    }

    private func integer(_ n: Int) {
        bytes.reserve(4)
        bytes.base.storeBytes(of: UInt32(truncatingIfNeeded: n).littleEndian, toByteOffset: bytes.count, as: UInt32.self)
        bytes.count &+= 4
    }

    private func name(_ s: String) {
        let utf8 = s.utf8
        integer(utf8.count)
        bytes.reserve(utf8.count)
        let copied = utf8.withContiguousStorageIfAvailable { source -> Bool in
            if let start = source.baseAddress { (bytes.base + bytes.count).copyMemory(from: start, byteCount: source.count) }
            return true
        }
        if copied == nil {
            for (i, byte) in utf8.enumerated() { bytes.base.storeBytes(of: byte, toByteOffset: bytes.count + i, as: UInt8.self) }
        }
        bytes.count &+= utf8.count
    }
}

/// A predicate shape as a cache key: its bytes, hashed once. A key made by `PredicateShape.key` views the
/// scan's storage (for a lookup); `owned()` copies the bytes (for the cache).
struct FetchFilterShapeKey: Hashable {
    private let bytes: UnsafeRawBufferPointer
    private let hash: UInt64
    /// Keeps `bytes` alive in an owned key.
    private let owner: OwnedBytes?

    init(viewing bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        // FNV-1a: shapes are a few dozen bytes and not attacker-chosen.
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash = h
        owner = nil
    }

    private init(_ owner: OwnedBytes, hash: UInt64) {
        self.owner = owner
        bytes = UnsafeRawBufferPointer(start: owner.base, count: owner.count)
        self.hash = hash
    }

    /// The key with bytes of its own.
    func owned() -> FetchFilterShapeKey { FetchFilterShapeKey(OwnedBytes(copying: bytes), hash: hash) }

    static func == (a: FetchFilterShapeKey, b: FetchFilterShapeKey) -> Bool {
        a.hash == b.hash && a.bytes.count == b.bytes.count
            && (a.bytes.count == 0 || memcmp(a.bytes.baseAddress!, b.bytes.baseAddress!, a.bytes.count) == 0)
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    private final class OwnedBytes {
        let base: UnsafeMutableRawPointer
        let count: Int

        init(copying bytes: UnsafeRawBufferPointer) {
            count = bytes.count
            base = .allocate(byteCount: max(count, 1), alignment: 8)
            if let start = bytes.baseAddress { base.copyMemory(from: start, byteCount: count) }
        }

        deinit { base.deallocate() }
    }
}
