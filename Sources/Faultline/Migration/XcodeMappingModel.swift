import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

extension MappingModel {
    /// Reads Xcode's mapping model source (`.xcmappingmodel`, its `xcmapping.xml`): the entity mappings with their
    /// source and destination entities and policy classes, and each property mapping's value expression (archived
    /// inside the XML; the same expressions are read as from a compiled `.cdm`, see `init(compiledMappingModelAt:)`).
    /// A property whose expression Xcode generates (`$source.<name>`) and did not store reads the source property of
    /// the same name, when there is one.
    public init(xcodeMappingModelAt url: URL) throws {
        let file = url.pathExtension == "xcmappingmodel" ? url.appendingPathComponent("xcmapping.xml") : url
        let data: Data
        do { data = try InputFile.read(file.path) } catch { throw MigrationError(problem: "mapping model '\(url.path)': \(error)") }
        do {
            try XcodeModelPreflight.check(data, allowingExternalDoctype: true)
        } catch {
            throw MigrationError(problem: "mapping model '\(url.lastPathComponent)': \(error.problem)")
        }
        let reader = XcodeMappingReader()
        let parser = XMLParser(data: data)
        parser.delegate = reader
        guard parser.parse(), reader.open.isEmpty else {
            let problem = reader.open.last.map { "the file ends inside <\($0)>" } ?? parser.parserError.map { "\($0.localizedDescription)" } ?? "?"
            throw MigrationError(problem: "mapping model '\(url.lastPathComponent)': not well-formed XML at line \(parser.lineNumber): \(problem)")
        }
        let objects = reader.objects
        var mappings: [(number: Int, mapping: EntityMapping)] = []
        for object in objects.values where object.type == "XDDEVENTITYMAPPING" {
            guard let destination = object.attributes["destinationname"] else { continue }
            let source = object.attributes["sourcename"]
            let policy = object.attributes["migrationpolicyclassname"].map { String($0.split(separator: ".").last ?? Substring($0)) }
            func sourceProperty(_ reference: String) throws -> (name: String, source: String?)? {
                guard let mapping = objects[reference], let name = mapping.attributes["name"] else { return nil }
                guard let encoded = mapping.attributes["valueexpressiondata"] else {
                    // Nothing stored: Xcode's generated `$source.<name>`, or nothing when the mapping generates none.
                    let generated = (mapping.attributes["autogenerateexpression"] ?? object.attributes["autogenerateexpression"]) == "1"
                    return (name, source != nil && generated ? name : nil)
                }
                guard let bytes = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
                    throw MigrationError(entity: destination, property: name, problem: "its value expression is not base64")
                }
                let archive: KeyedArchive
                do { archive = try KeyedArchive(bytes) } catch let error as CoreDataFormatError {
                    throw MigrationError(entity: destination, property: name, problem: "its value expression cannot be read: \(error.problem)")
                }
                if let root = try archive.resolve(archive.root), let key = try Self.sourceKeyPath(root, archive: archive) { return (name, key) }
                if policy != nil { return (name, nil) }
                throw MigrationError(entity: destination, property: name,
                                     problem: "mapping \(object.attributes["name"] ?? destination) computes it with an expression Faultline does not evaluate ($source.<property> and the destinationInstances… functions are); move it into a policy")
            }
            var attributes: [AttributeMapping] = []
            for reference in object.relationships["attributemappings"] ?? [] {
                guard let (name, from) = try sourceProperty(reference) else { continue }
                attributes.append(AttributeMapping(destination: name, source: from, conversion: .none))
            }
            var relationships: [RelationshipMapping] = []
            for reference in object.relationships["relationshipmappings"] ?? [] {
                guard let (name, from) = try sourceProperty(reference) else { continue }
                relationships.append(RelationshipMapping(destination: name, source: from))
            }
            var entityMapping = EntityMapping(source: source, destination: destination,
                                              attributes: attributes.sorted { $0.destination < $1.destination },
                                              relationships: relationships.sorted { $0.destination < $1.destination })
            entityMapping.name = source.map { "\($0)To\(destination)" } ?? destination
            entityMapping.policyClassName = policy
            mappings.append((Int(object.attributes["mappingnumber"] ?? "") ?? Int.max, entityMapping))
        }
        self.init(entityMappings: mappings.sorted { $0.number < $1.number }.map(\.mapping), removedEntities: [])
    }
}

/// The objects of an `xcmapping.xml` (`<object type="…" id="…">` with `<attribute name="…">` values and
/// `<relationship name="…" idrefs="…">` references).
private final class XcodeMappingReader: NSObject, XMLParserDelegate {
    struct Object {
        var type: String
        var attributes: [String: String] = [:]
        var relationships: [String: [String]] = [:]
    }
    var objects: [String: Object] = [:]
    /// Elements opened and not yet closed (a file cut short leaves some).
    private(set) var open: [String] = []
    private var current: (id: String, object: Object)?
    private var attributeName: String?
    private var text = ""

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        open.append(element)
        switch element {
        case "object":
            if let id = attributes["id"], let type = attributes["type"] { current = (id, Object(type: type)) }
        case "attribute" where current != nil:
            attributeName = attributes["name"]
            text = ""
        case "relationship" where current != nil:
            if let name = attributes["name"] { current?.object.relationships[name] = (attributes["idrefs"] ?? "").split(separator: " ").map(String.init) }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if attributeName != nil { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        if !open.isEmpty { open.removeLast() }
        switch element {
        case "attribute":
            if let name = attributeName { current?.object.attributes[name] = text.trimmingCharacters(in: .whitespacesAndNewlines) }
            attributeName = nil
        case "object":
            if let (id, object) = current { objects[id] = object }
            current = nil
        default:
            break
        }
    }
}
