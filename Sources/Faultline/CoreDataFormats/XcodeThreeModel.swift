import Foundation

/// Reads a model Xcode saved before Xcode 4: an `.xcdatamodel` folder holding an `elements` keyed archive (and a
/// `layout` one, the diagram only) instead of a `contents` XML file (docs/store-format.md, "Models saved before
/// Xcode 4").
///
/// The archive is a UML model: the root `XDPMModel`'s package maps entity names to `XDPMEntity` objects, whose owned
/// attributes are `XDPMAttribute`s and `XDPMRelationship`s; Core Data's settings are stereotype values, each the
/// `_default` of a property of a stereotype object (`XD_PPSK_isOptional`, `XD_PRK_destination`, …). They are read
/// into the XML reader's attribute names, so that both formats build a model by the same rules.
struct XcodeThreeModelReader {
    let archive: KeyedArchive
    let source: String?

    /// Xcode's attribute type numbers (those of a compiled model).
    static let attributeTypes: [Int64: AttributeType] = [
        0: .undefined, 100: .integer16, 200: .integer32, 300: .integer64, 400: .decimal, 500: .double, 600: .float,
        700: .string, 800: .boolean, 900: .date, 1000: .binary, 1100: .uuid, 1200: .uri, 1800: .transformable, 2000: .objectID,
    ]
    static let deleteRules: [Int64: String] = [0: "No Action", 1: "Nullify", 2: "Cascade", 3: "Deny"]

    /// The model's entities and its version identifier (`_modelVersionIdentifier`), if any.
    func read(warnings: inout [ModelError]) throws -> (entities: [EntityDescription], versionIdentifier: String?) {
        guard let root = try archive.resolve(archive.root), try archive.className(of: root) == "XDPMModel" else {
            throw CoreDataFormatError("the archive's root is not an XDPMModel")
        }
        guard let package = try archive.field("_xd_rootPackage", of: root),
              let classes = try archive.field("XDBucketForClassesstorage", of: package) else {
            throw CoreDataFormatError("the model has no package of entities (_xd_rootPackage)")
        }
        let xml = XcodeModelReader(source: source)
        var entities: [EntityDescription] = []
        for (key, object) in try archive.entries(of: classes) {
            guard try archive.className(of: object) == "XDPMEntity" else { continue }
            let name = try archive.string(key) ?? name(of: object)
            entities.append(try entity(object, name: name, reader: xml))
        }
        warnings += xml.warnings
        return (entities.sorted { $0.name < $1.name }, try archive.string(root["_modelVersionIdentifier"]))
    }

    private func entity(_ object: PropertyListValue, name: String, reader: XcodeModelReader) throws -> EntityDescription {
        let settings = try stereotypeValues(of: object, entity: name)
        var properties: [PropertyDescription] = []
        if let owned = try archive.field("XDBucketForOwnedAttributesstorage", of: object) {
            for (key, property) in try archive.entries(of: owned) {
                let propertyName = try archive.string(key) ?? self.name(of: property)
                let values = try stereotypeValues(of: property, entity: name)
                let made: PropertyDescription
                switch try archive.className(of: property) {
                case "XDPMAttribute":
                    made = try reader.makeAttribute(try attributeSettings(propertyName, values, entity: name, warnings: &reader.warnings), entity: name)
                case "XDPMRelationship":
                    made = try reader.makeRelationship(try relationshipSettings(propertyName, values, entity: name), entity: name)
                case let other:
                    // Fetched properties are recorded nowhere yet, as in Xcode's XML.
                    reader.warnings.append(ModelError(source: source, entity: name, property: propertyName,
                                                      problem: "\(other ?? "an object of no class") is not read (only attributes and relationships are)"))
                    continue
                }
                made.userInfo = try userInfo(values["XD_PPSK_userInfo"])
                properties.append(made)
            }
        }
        let description = EntityDescription(
            name: name, parent: try parent(of: object, entity: name),
            isAbstract: try flag(settings["XD_PSK_isAbstract"]) ?? (object["_isAbstract"]?.boolean ?? false),
            properties: properties.sorted { $0.name < $1.name },
            compoundIndexes: try compoundIndexes(settings["XDPMCompoundIndexes"], entity: name),
            versionHashModifier: try text(settings["XD_PSK_versionHashModifier"]),
            representedClassName: try text(settings["XD_PSK_entityClassName"]),
            userInfo: try userInfo(settings["XD_PSK_userInfo"]))
        description.renamingIdentifier = try text(settings["XD_PSK_elementID"])
        return description
    }

    /// Every stereotype's values, by the stereotype property's name (the names do not repeat across stereotypes).
    private func stereotypeValues(of object: PropertyListValue, entity: String) throws -> [String: PropertyListValue] {
        var values: [String: PropertyListValue] = [:]
        guard let stereotypes = try archive.field("XDBucketForStereotypesstorage", of: object) else { return values }
        for (_, stereotype) in try archive.entries(of: stereotypes) {
            guard let owned = try archive.field("XDBucketForOwnedAttributesstorage", of: stereotype) else { continue }
            for (key, property) in try archive.entries(of: owned) {
                guard let name = try archive.string(key), let value = try archive.field("_default", of: property) else { continue }
                if value.string == "$null" { continue }
                values[name] = value
            }
        }
        return values
    }

    private func name(of object: PropertyListValue) throws -> String {
        guard let name = try archive.string(object["_name"]), !name.isEmpty else { throw CoreDataFormatError("an element has no _name") }
        return name
    }

    private func text(_ value: PropertyListValue?) throws -> String? {
        guard let value else { return nil }
        return try archive.string(value)
    }

    private func flag(_ value: PropertyListValue?) throws -> Bool? { value?.boolean }

    private func userInfo(_ value: PropertyListValue?) throws -> [String: String] {
        guard let value else { return [:] }
        var result: [String: String] = [:]
        for (key, entry) in try archive.entries(of: value) {
            guard let k = try archive.string(key) else { continue }
            result[k] = try archive.string(entry) ?? entry.integer.map(String.init) ?? entry.boolean.map { $0 ? "YES" : "NO" } ?? ""
        }
        return result
    }

    /// The parent from the entity's generalization (`_general`, the parent entity), if any.
    private func parent(of object: PropertyListValue, entity: String) throws -> String? {
        guard let generalizations = try archive.field("XDBucketForGeneralizationsstorage", of: object) else { return nil }
        let all = try archive.elements(of: generalizations)
        guard let first = all.first else { return nil }
        guard all.count == 1, let general = try archive.field("_general", of: first), try archive.className(of: general) == "XDPMEntity" else {
            throw CoreDataFormatError("entity '\(entity)' has a generalization Faultline cannot read (one XDPMEntity in _general was expected)")
        }
        return try name(of: general)
    }

    private func compoundIndexes(_ value: PropertyListValue?, entity: String) throws -> [[String]] {
        guard let value else { return [] }
        return try archive.elements(of: value).map { index in
            try archive.elements(of: index).map { element in
                if let text = try archive.string(element) { return text }
                return try name(of: element)
            }
        }.filter { !$0.isEmpty }
    }

    private func yes(_ value: PropertyListValue?) -> String? { value?.boolean.map { $0 ? "YES" : "NO" } }

    /// An attribute's settings under the names of Xcode's XML (`attributeType`, `optional`, `defaultValueString`, …).
    private func attributeSettings(_ name: String, _ v: [String: PropertyListValue], entity: String, warnings: inout [ModelError]) throws -> [String: String] {
        let code = v["XD_PAttK_attributeType"]?.integer ?? 0
        guard let type = Self.attributeTypes[code] else {
            throw ModelError(source: source, entity: entity, property: name, problem: "attribute type \(code), which Faultline does not know")
        }
        var a = ["name": name, "attributeType": type.rawValue]
        a["optional"] = yes(v["XD_PPSK_isOptional"])
        a["transient"] = yes(v["XD_PPSK_isTransient"])
        a["indexed"] = yes(v["XD_PPSK_isIndexed"])
        a["allowsExternalBinaryDataStorage"] = yes(v["XD_PAttK_allowsExternalBinaryDataStorage"])
        a["defaultValueString"] = try text(v["XD_PAttK_defaultValueAsString"])
        if type == .date, let text = a["defaultValueString"], ISO8601.parse(text) == nil {
            // Xcode 3 kept what was typed; what momc made of a date default that is not a date is not known.
            warnings.append(ModelError(source: source, entity: entity, property: name,
                                       problem: "Date default value '\(text)' of an Xcode 3 model is not a date; the attribute is read with no default"))
            a["defaultValueString"] = nil
        }
        if type != .date {
            a["minValueString"] = try text(v["XD_PAttK_minValueString"])
            a["maxValueString"] = try text(v["XD_PAttK_maxValueString"])
        }
        a["regularExpressionString"] = try text(v["XD_PAttK_regularExpressionString"])
        a["valueTransformerName"] = try text(v["XD_PAttK_valueTransformerName"])
        a["versionHashModifier"] = try text(v["XD_PPSK_versionHashModifier"])
        a["elementID"] = try text(v["XD_PPSK_elementID"])
        return a.filter { !$0.value.isEmpty || $0.key == "defaultValueString" }
    }

    /// A relationship's settings under the names of Xcode's XML; its destination and inverse are archived as the
    /// objects themselves.
    private func relationshipSettings(_ name: String, _ v: [String: PropertyListValue], entity: String) throws -> [String: String] {
        var a = ["name": name]
        if let destination = v["XD_PRK_destination"] { a["destinationEntity"] = try archive.string(destination) ?? self.name(of: destination) }
        if let inverse = v["XD_PRK_inverseRelationship"] { a["inverseName"] = try archive.string(inverse) ?? self.name(of: inverse) }
        let maxCount = v["XD_PRK_maxCount"]?.integer
        let toMany = v["XD_PRK_isToMany"]?.boolean ?? (maxCount.map { $0 != 1 } ?? false)
        a["toMany"] = toMany ? "YES" : "NO"
        a["ordered"] = yes(v["XD_PRK_ordered"])
        a["optional"] = yes(v["XD_PPSK_isOptional"])
        a["transient"] = yes(v["XD_PPSK_isTransient"])
        // Counts as written (Apple's Recipes model has min 1 on optional to-ones, and its hashes include it); an
        // unbounded maximum is archived as 0 or -1.
        if let min = v["XD_PRK_minCount"]?.integer, min > 0 { a["minCount"] = String(min) }
        if let max = maxCount, max > 0 { a["maxCount"] = String(max) }
        let rule = v["XD_PRK_deleteRule"]?.integer ?? 1
        guard let ruleName = Self.deleteRules[rule] else {
            throw ModelError(source: source, entity: entity, property: name, problem: "delete rule \(rule), which Faultline does not know")
        }
        a["deletionRule"] = ruleName
        a["versionHashModifier"] = try text(v["XD_PPSK_versionHashModifier"])
        a["elementID"] = try text(v["XD_PPSK_elementID"])
        return a
    }
}

extension ManagedObjectModel {
    /// Builds a model from the `elements` keyed archive of an `.xcdatamodel` Xcode 3 saved.
    public convenience init(xcodeThreeElements data: Data, source: String? = nil) throws {
        var warnings: [ModelError] = []
        let read: (entities: [EntityDescription], versionIdentifier: String?)
        do {
            read = try XcodeThreeModelReader(archive: try KeyedArchive(data), source: source).read(warnings: &warnings)
        } catch let error as CoreDataFormatError {
            throw ModelError(source: source, problem: "not an Xcode 3 model's elements archive: \(error.problem)")
        }
        try self.init(entities: read.entities, source: source)
        self.warnings = warnings + self.warnings
        if let identifier = read.versionIdentifier, !identifier.isEmpty { versionIdentifiers = [identifier] }
    }
}
