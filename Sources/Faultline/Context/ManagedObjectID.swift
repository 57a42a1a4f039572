import Foundation

/// Identifies one object across contexts: an entity and a primary key in one store.
///
/// Temporary until the object's first save, then permanent (its `Z_PK`). Sendable: pass IDs between contexts,
/// never objects.
public struct ManagedObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The object's entity (the concrete sub-entity, not its table's root).
    public let entity: EntityDescription
    /// `Z_PK` when permanent; a negative number when temporary.
    let key: Int64
    /// The store's UUID (`Z_UUID`) for permanent IDs.
    let storeIdentifier: String?

    init(entity: EntityDescription, key: Int64, storeIdentifier: String?) {
        self.entity = entity
        self.key = key
        self.storeIdentifier = storeIdentifier
    }

    /// True until the object's first successful save.
    public var isTemporaryID: Bool { key < 0 }

    /// The row's `Z_PK`, or nil for a temporary ID.
    public var primaryKey: Int64? { key > 0 ? key : nil }

    /// `x-coredata://<store-uuid>/<Entity>/p<Z_PK>`, or `x-coredata:///<Entity>/t<number>` for a temporary ID.
    public func uriRepresentation() -> URL {
        URL(string: uriString)!
    }

    /// The URI as a string.
    public var uriString: String {
        // Entity names are identifiers; only non-ASCII ones need percent-encoding (which is slow).
        let plain = entity.name.utf8.allSatisfy { $0 < 0x80 }
        let name = plain ? entity.name : (entity.name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? entity.name)
        if key > 0 { return Self.permanentURIPrefix(store: storeIdentifier ?? "", entity: name) + String(key) }
        return "x-coredata:///\(name)/t\(-key)"
    }

    /// `x-coredata://<store-uuid>/<Entity>/p`: a permanent ID's URI up to its `Z_PK` (the entity name as given).
    static func permanentURIPrefix(store: String, entity: String) -> String {
        "x-coredata://\(store)/\(entity)/p"
    }

    /// The permanent ID that `text` (`x-coredata://<store-uuid>/<Entity>/p<Z_PK>`) names in the store
    /// `storeIdentifier` of `model`; nil when the text is malformed, temporary or names another store or model.
    init?(uriString text: String, model: ManagedObjectModel, storeIdentifier: String?) {
        var text = text, store = storeIdentifier ?? "-"
        guard let (entity, key) = text.withUTF8({ bytes in store.withUTF8 { Self.parsePermanentURI(bytes, model: model, store: $0) } })
        else { return nil }
        self.init(entity: entity, key: key, storeIdentifier: storeIdentifier)
    }

    // IDs are parsed once per lookup by URI, often in loops: bytes, without splitting into substrings.
    private static func parsePermanentURI(_ bytes: UnsafeBufferPointer<UInt8>, model: ManagedObjectModel,
                                          store: UnsafeBufferPointer<UInt8>) -> (EntityDescription, Int64)? {
        let scheme: StaticString = "x-coredata://"
        let schemeBytes = UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount)
        guard bytes.count > schemeBytes.count, memcmp(bytes.baseAddress!, schemeBytes.baseAddress!, schemeBytes.count) == 0,
              let storeEnd = bytes[schemeBytes.count...].firstIndex(of: UInt8(ascii: "/")),
              storeEnd - schemeBytes.count == store.count,
              store.isEmpty || memcmp(bytes.baseAddress! + schemeBytes.count, store.baseAddress!, store.count) == 0,
              let entityEnd = bytes[(storeEnd + 1)...].firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let nameBytes = UnsafeBufferPointer(rebasing: bytes[(storeEnd + 1)..<entityEnd])
        var name = String(decoding: nameBytes, as: UTF8.self)
        if nameBytes.contains(UInt8(ascii: "%")) {
            guard let decoded = name.removingPercentEncoding else { return nil }
            name = decoded
        }
        guard let entity = model.entity(named: name), entityEnd + 2 < bytes.count, bytes[entityEnd + 1] == UInt8(ascii: "p")
        else { return nil }
        var key: Int64 = 0
        for byte in bytes[(entityEnd + 2)...] {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = key.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1 && !overflow2 else { return nil }
            key = sum
        }
        return key > 0 ? (entity, key) : nil
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String { "<\(uriString)>" }

    /// The same object: the same key, entity and store.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs.key == rhs.key && lhs.entity.entityNumber == rhs.entity.entityNumber && lhs.storeIdentifier == rhs.storeIdentifier
    }

    /// Hashes the key and the entity (two IDs that are equal hash alike).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(entity.entityNumber)
    }

    var objectKey: ObjectKey { ObjectKey(table: Int32(entity.root.entityNumber), key: key) }
}

/// A context's and the row cache's key for an object: its table (the root's entity number) and key.
struct ObjectKey: Hashable, Sendable {
    let table: Int32
    let key: Int64

    // Row keys are looked up once or more per fetched row: a multiplicative mix instead of SipHash keeps the
    // row cache and context registry off the profile. Keys are not attacker-controlled.
    func _rawHashValue(seed: Int) -> Int {
        var h = UInt64(bitPattern: key) ^ (UInt64(UInt32(bitPattern: table)) << 48) ^ UInt64(bitPattern: Int64(seed))
        h = (h ^ (h >> 33)) &* 0xff51afd7ed558ccd
        h = (h ^ (h >> 33)) &* 0xc4ceb9fe1a85ec53
        return Int(bitPattern: UInt(h ^ (h >> 33)))
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(table)
    }
}
