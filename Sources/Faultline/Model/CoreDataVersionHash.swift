import Foundation

/// Core Data's version hashes, computed as Core Data computes them (docs/store-format.md, Version hashes): SHA-256
/// over each property's name, flags and kind, each entity's name, parent and properties. A store records its
/// entities' hashes in `NSStoreModelVersionHashes`; the version whose hashes they are is the one that wrote it.
///
/// Not in the model, so not fed in: a property's read-only flag. A derived attribute is hashed by the rule the
/// reference marks likely (its expression's text).
extension PropertyDescription {
    /// The property's Core Data version hash (32 bytes).
    public var coreDataVersionHash: Data {
        if let attribute = self as? AttributeDescription, let derivation = attribute.derivationExpression {
            return Data(SHA256.hash(Array((Self.canonicalDerivation(derivation) + (attribute.derivationFilter ?? "")).utf8)))
        }
        if let attribute = self as? AttributeDescription, attribute.type == .composite {
            var input: [UInt8] = []
            for element in attribute.elements.filter({ !$0.isTransient }).sorted(by: { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }) {
                input += Array(element.coreDataVersionHash)
            }
            return Data(SHA256.hash(input))
        }
        var input = baseHash
        if let attribute = self as? AttributeDescription {
            appendLittleEndian(UInt32(attribute.type.coreDataCode), to: &input)
            if attribute.allowsExternalBinaryDataStorage { input.append(1) }
            if attribute.preservesValueInHistoryOnDeletion { input.append(1) }
        } else if let relationship = self as? RelationshipDescription {
            input += Array(relationship.destinationName.utf8)
            if let inverse = relationship.inverseName, inverse != relationship.name { input += Array(inverse.utf8) }
            appendLittleEndian(UInt32(truncatingIfNeeded: relationship.archivedMaxCount ?? relationship.maxCount), to: &input)
            appendLittleEndian(UInt32(truncatingIfNeeded: relationship.minCount), to: &input)
            if relationship.isOrdered { input += [1, 0] }
        }
        return Data(SHA256.hash(input))
    }

    /// A derivation expression as Core Data prints it, which its hash is made of: Xcode keeps what the user typed
    /// (`pages.@count`), a compiled model the parsed expression (`count:(pages)`, verified on a real store). A key
    /// path ending in a collection operator is turned into the function form; other text is taken as it is.
    static func canonicalDerivation(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let at = parts.firstIndex(where: { $0.hasPrefix("@") }), at > 0 else { return trimmed }
        let names = ["count": "count", "sum": "sum", "avg": "average", "min": "min", "max": "max"]
        guard let function = names[parts[at].dropFirst().lowercased()],
              parts[..<at].allSatisfy({ !$0.isEmpty && !$0.contains("(") && !$0.contains(" ") }) else { return trimmed }
        let path = (parts[..<at] + parts[(at + 1)...]).joined(separator: ".")
        return "\(function):(\(path))"
    }

    /// SHA-256 of the name, the flag word (bit 0 optional, bit 1 transient) and the version hash modifier.
    private var baseHash: [UInt8] {
        var input = Array(name.utf8)
        appendLittleEndian(UInt16((isOptional ? 1 : 0) | (isTransient ? 2 : 0)), to: &input)
        if let versionHashModifier { input += Array(versionHashModifier.utf8) }
        return SHA256.hash(input)
    }
}

extension EntityDescription {
    /// The entity's Core Data version hash (32 bytes): name, abstract flag, parent's hash, the hashes of its stored
    /// properties (inherited ones too) in the order of their names' UTF-16 units, its version hash modifier and its
    /// uniqueness constraints.
    public var coreDataVersionHash: Data {
        var input = Array(name.utf8)
        input.append(isAbstract ? 1 : 0)
        if let superentity { input += Array(superentity.coreDataVersionHash) }
        let hashed = properties.filter { !$0.isTransient && !(($0 as? AttributeDescription)?.isCompositeElement ?? false) }.sorted { $0.name.utf16.lexicographicallyPrecedes($1.name.utf16) }
        for property in hashed { input += Array(property.coreDataVersionHash) }
        if let versionHashModifier { input += Array(versionHashModifier.utf8) }
        for constraint in uniquenessConstraints.map({ $0.joined(separator: ".") }).sorted(by: { $0.utf16.lexicographicallyPrecedes($1.utf16) }) {
            input += Array(constraint.utf8)
        }
        return Data(SHA256.hash(input))
    }
}

extension EntityDescription {
    /// The properties whose Core Data hash rests on a rule not verified on a real store, each with why: a derived
    /// attribute whose expression is not of the form verified (`function:(key.path)`) or that has a filtering
    /// predicate. `faultline info` names them when a store's hashes are not the model's.
    public var coreDataHashCaveats: [String] {
        properties.compactMap { property in
            guard property.entity === self, let attribute = property as? AttributeDescription, let expression = attribute.derivationExpression else { return nil }
            let canonical = PropertyDescription.canonicalDerivation(expression)
            let verified = canonical.range(of: #"^[a-z]+:\([A-Za-z_][A-Za-z0-9_.]*\)$"#, options: .regularExpression) != nil
            if attribute.derivationFilter != nil { return "\(name).\(attribute.name): a derived attribute with a filtering predicate" }
            if !verified { return "\(name).\(attribute.name): a derived attribute's expression '\(canonical)'" }
            return nil
        }
    }
}

extension ManagedObjectModel {
    /// Every entity's Core Data version hash by name, as a store's `NSStoreModelVersionHashes` holds them.
    public var coreDataVersionHashes: [String: Data] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0.coreDataVersionHash) })
    }
}

extension AttributeType {
    /// Core Data's number for the type (`NSAttributeType`), as its version hashes feed it.
    var coreDataCode: Int {
        switch self {
        case .undefined: return 0
        case .integer16: return 100
        case .integer32: return 200
        case .integer64: return 300
        case .decimal: return 400
        case .double: return 500
        case .float: return 600
        case .string: return 700
        case .boolean: return 800
        case .date: return 900
        case .binary: return 1000
        case .uuid: return 1100
        case .uri: return 1200
        case .transformable: return 1800
        case .objectID: return 2000
        case .composite: return 2100
        }
    }
}

private func appendLittleEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
}
