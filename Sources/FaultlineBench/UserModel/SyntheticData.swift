import Faultline
import Foundation

/// Seeded synthetic objects for any model: every concrete entity gets its share of `count` objects; attributes get
/// values of their type within their rules (optionality, min/max values and lengths, regular expressions,
/// defaults, uniqueness constraints); relationships link random destinations within their counts (one-to-one
/// pairs in order, so that few links are stolen from an earlier owner).
public struct SyntheticData {
    public let model: ManagedObjectModel

    public init(model: ManagedObjectModel) { self.model = model }

    /// Entities that can have objects of their own.
    public var concreteEntities: [EntityDescription] { model.entities.filter { !$0.isAbstract } }

    /// Objects per concrete entity for a total of `count`.
    public func perEntity(_ count: Int) -> Int { max(1, count / max(1, concreteEntities.count)) }

    /// Creates the store at `url` with `count` objects in all (plus any that required relationships need); returns
    /// how many objects each entity got.
    @discardableResult
    public func generate(count: Int, into url: URL, seed: UInt64 = 1) throws -> [String: Int] {
        let context = try BenchStore.coldContext(model, at: url, probes: .disabled)
        var random = SeededGenerator(seed: seed)
        let each = perEntity(count)
        return try context.performAndWait {
            var builder = GraphBuilder(data: self, context: context)
            for entity in concreteEntities {
                for _ in 0..<each { builder.make(entity, random: &random) }
            }
            // Objects made to satisfy a required relationship join the queue, so their own get linked too.
            linkAll(from: 0, builder: &builder, random: &random)
            do { try context.save() } catch {
                let text = "\(error)"
                throw BenchError("the synthetic data for \(model.source ?? "the model") does not save: \(text.count > 600 ? text.prefix(600) + "…" : text)")
            }
            return builder.made.reduce(into: [:]) { $0[$1.entity.name, default: 0] += 1 }
        }
    }

    /// Links the relationships of the builder's objects from `start` on, and of any it makes for them: required
    /// relationships first, so that optional links do not use up the destinations they need.
    func linkAll(from start: Int, builder: inout GraphBuilder, random: inout SeededGenerator) {
        builder.extraLimit = builder.extra + max(100, builder.made.count - start)
        for required in [true, false] {
            var next = start
            while next < builder.made.count {
                link(builder.made[next], required: required, builder: &builder, random: &random)
                next += 1
            }
        }
    }

    /// The objects made so far, by entity, and a serial that keeps constrained values unique across a hierarchy.
    struct GraphBuilder {
        let data: SyntheticData
        let context: ManagedObjectContext
        var made: [ManagedObject] = []
        var byEntity: [String: [ManagedObject]] = [:]
        /// Added to the serial of each object made (values under uniqueness constraints derive from it).
        var serialBase = 0
        /// Objects made for required relationships, and how many may be.
        var extra = 0
        var extraLimit = 0
        /// Destinations by entity name, valid while `version` has not moved.
        var cache: [String: (version: Int, objects: [ManagedObject])] = [:]
        var version = 0

        init(data: SyntheticData, context: ManagedObjectContext) {
            self.data = data
            self.context = context
        }

        /// Objects already in the store, as possible destinations (their own relationships are left alone).
        mutating func adopt(_ objects: [ManagedObject]) {
            for object in objects { byEntity[object.entity.name, default: []].append(object) }
            version += 1
        }

        @discardableResult
        mutating func make(_ entity: EntityDescription, random: inout SeededGenerator) -> ManagedObject {
            let object = ManagedObject(entity: entity, insertInto: context)
            data.fill(object, index: serialBase + made.count, random: &random)
            made.append(object)
            byEntity[entity.name, default: []].append(object)
            version += 1
            return object
        }

        /// Existing objects a relationship can point to.
        mutating func destinations(of relationship: RelationshipDescription) -> [ManagedObject] {
            let name = relationship.destination.name
            if let cached = cache[name], cached.version == version { return cached.objects }
            let objects = relationship.destination.selfAndDescendants.filter { !$0.isAbstract }.flatMap { byEntity[$0.name] ?? [] }
            cache[name] = (version, objects)
            return objects
        }

        /// Cursors of `nextFree`, by relationship.
        var cursors: [ObjectIdentifier: Int] = [:]

        /// The next destination that `free` accepts, scanning from where the last search for this relationship
        /// stopped (taken objects stay taken, so the scans add up to one pass).
        mutating func nextFree(_ relationship: RelationshipDescription, _ free: (ManagedObject) -> Bool) -> ManagedObject? {
            let all = destinations(of: relationship)
            guard !all.isEmpty else { return nil }
            let key = ObjectIdentifier(relationship)
            let start = cursors[key] ?? 0
            for step in 0..<all.count {
                let index = (start + step) % all.count
                if free(all[index]) {
                    cursors[key] = index + 1
                    return all[index]
                }
            }
            return nil
        }

        /// A new destination object, for a required relationship that has no free one (at most as many as there
        /// were objects to begin with, so that a cycle of required relationships cannot run away).
        mutating func makeDestination(for relationship: RelationshipDescription, random: inout SeededGenerator) -> ManagedObject? {
            guard extra < extraLimit, let entity = relationship.destination.selfAndDescendants.first(where: { !$0.isAbstract }) else { return nil }
            extra += 1
            return make(entity, random: &random)
        }
    }

    /// Sets every stored, non-derived attribute.
    func fill(_ object: ManagedObject, index: Int, random: inout SeededGenerator) {
        let unique = Set(object.entity.uniquenessConstraints.joined())
        for attribute in object.entity.attributes where !attribute.isTransient && attribute.derivationExpression == nil {
            if attribute.isOptional && !unique.contains(attribute.name) && Int.random(in: 0..<10, using: &random) == 0 { continue }
            for candidate in values(for: attribute, index: index, unique: unique.contains(attribute.name), random: &random) {
                if (try? object.setValue(candidate, for: attribute)) != nil { break }
            }
        }
    }

    /// Candidate values for an attribute, best first (the first one the attribute accepts is kept).
    func values(for attribute: AttributeDescription, index: Int, unique: Bool, random: inout SeededGenerator) -> [Any] {
        let low = attribute.minValue, high = attribute.maxValue
        var candidates: [Any] = []
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            let range = attribute.type.integerRange ?? Int64(Int16.min)...Int64(Int16.max)
            let lower = max(range.lowerBound, low.map { Int64($0.rounded(.up)) } ?? 0)
            let upper = min(range.upperBound, high.map { Int64($0.rounded(.down)) } ?? lower + 1_000)
            if lower <= upper {
                candidates.append(unique ? lower + Int64(index) : Int64.random(in: lower...upper, using: &random))
            }
        case .double, .float, .decimal:
            let lower = low ?? 0, upper = max(lower, high ?? lower + 1_000)
            let value = unique ? lower + Double(index) : (Double.random(in: lower...upper, using: &random) * 100).rounded() / 100
            candidates.append(attribute.type == .decimal ? Decimal(value) as Any : value as Any)
        case .boolean:
            candidates.append(Bool.random(using: &random))
        case .date:
            let lower = low ?? 6e8, upper = max(lower, high ?? lower + 6.3e7)
            candidates.append(Date(timeIntervalSinceReferenceDate: unique ? lower + Double(index) : Double.random(in: lower...upper, using: &random)))
        case .string:
            let minimum = Int(low ?? 0), maximum = high.map { Int($0) } ?? 40
            var texts = ["\(attribute.name) \(index)", "\(attribute.name)\(index)", "abc", "a", String(index), ""]
            if minimum > 0 { texts.append(String(repeating: "a", count: minimum)) }
            texts = texts.filter { $0.count >= minimum && $0.count <= maximum }
            if let pattern = attribute.regularExpression, let regex = try? NSRegularExpression(pattern: pattern) {
                texts = texts.filter { regex.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil }
            }
            candidates += texts
        case .binary:
            let length = min(64, max(Int(low ?? 16), 1))
            candidates.append(Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case .uuid:
            candidates.append(UUID(uuid: (UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index >> 16),
                                          0x40, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8.random(in: 0...255, using: &random))))
        case .uri:
            candidates.append(URL(string: "https://example.com/\(attribute.name)/\(index)")!)
        case .transformable:
            candidates.append("\(attribute.name) \(index)")
        case .undefined, .objectID, .composite:
            break // a composite's elements are attributes of their own
        }
        if let value = attribute.defaultValue { candidates.append(value) }
        return candidates
    }

    /// Links `object`'s required or optional relationships (those its inverses have not filled already), within
    /// their counts.
    func link(_ object: ManagedObject, required: Bool, builder: inout GraphBuilder, random: inout SeededGenerator) {
        for relationship in object.entity.relationships where !relationship.isTransient {
            guard required == (!relationship.isOptional || relationship.minCount > 0) else { continue }
            let exclusive = relationship.inverse.map { !$0.isToMany } ?? false
            // With a to-one inverse, a destination that already has an owner would be taken from it. (An object may
            // point to itself: a chain of required self-references then ends.)
            func free(_ candidate: ManagedObject) -> Bool {
                guard exclusive, let inverse = relationship.inverse else { return true }
                return candidate.value(for: inverse) == nil
            }
            if relationship.isToMany {
                let present = object.count(forRelationship: relationship.name)
                guard present == 0 else { continue }
                if !required && Int.random(in: 0..<10, using: &random) == 0 { continue }
                let upper = relationship.maxCount > 0 ? relationship.maxCount : 5
                let lower = min(upper, max(relationship.minCount, 1))
                // Exclusive destinations are a shared pool: a required relationship takes only its minimum.
                let wanted = required && exclusive ? lower : Int.random(in: lower...max(lower, min(upper, 5)), using: &random)
                let all = builder.destinations(of: relationship)
                var candidates: [ManagedObject] = []
                for _ in 0..<(all.isEmpty ? 0 : wanted * 4) where candidates.count < wanted {
                    let candidate = all.randomElement(using: &random)!
                    if free(candidate) && !candidates.contains(where: { $0 === candidate }) { candidates.append(candidate) }
                }
                // A required relationship gets its minimum: free destinations found by scanning, else new ones.
                while required && candidates.count < lower {
                    let taken = candidates
                    if let next = builder.nextFree(relationship, { candidate in free(candidate) && !taken.contains { $0 === candidate } }) {
                        candidates.append(next)
                    } else if let made = builder.makeDestination(for: relationship, random: &random) {
                        candidates.append(made)
                    } else {
                        break
                    }
                }
                for destination in candidates { try? object.addObject(destination, toRelationship: relationship.name) }
            } else {
                guard object.value(for: relationship) == nil else { continue }
                if !required && Int.random(in: 0..<10, using: &random) == 0 { continue }
                let all = builder.destinations(of: relationship)
                var destination: ManagedObject?
                if exclusive, !all.isEmpty {
                    // One-to-one: a few random tries for a free object, then (when required) a scan.
                    for _ in 0..<20 {
                        let candidate = all.randomElement(using: &random)!
                        if free(candidate) { destination = candidate; break }
                    }
                    if destination == nil && required { destination = builder.nextFree(relationship, free) }
                } else if required, let inverse = relationship.inverse, inverse.isToMany, !inverse.isOptional || inverse.minCount > 0 {
                    // Both sides required (an order's customer, a customer's orders): destinations without members
                    // first, so that each gets one.
                    destination = builder.nextFree(relationship) { $0.count(forRelationship: inverse.name) == 0 } ?? all.randomElement(using: &random)
                } else {
                    destination = all.randomElement(using: &random)
                }
                if destination == nil && required { destination = builder.makeDestination(for: relationship, random: &random) }
                if let destination { try? object.setValue(destination, for: relationship) }
            }
        }
    }
}
