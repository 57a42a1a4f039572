import Faultline
import Foundation

/// Colours as three bytes each (the objc.io book's custom transformer for Moody's colours).
struct ThreeByteColorsTransformer: AttributeValueTransformer {
    static let name = "FaultlineBenchThreeByteColors"

    func encode(_ value: Any) throws -> Data {
        guard let colors = value as? [[Double]] else { throw CocoaError(.coderInvalidValue) }
        var data = Data(capacity: colors.count * 3)
        for color in colors { for component in color.prefix(3) { data.append(UInt8(max(0, min(255, (component * 255).rounded())))) } }
        return data
    }

    func decode(_ data: Data) throws -> Any {
        stride(from: 0, to: data.count - data.count % 3, by: 3).map { i in
            (0..<3).map { Double(data[data.startIndex + i + $0]) / 255 }
        }
    }
}

extension ScenarioCatalogue {
    /// B-TRANSFORM: a mood's five colours as a keyed archive (the default transformer) or three bytes each.
    static var transformableEncoding: BenchScenario {
        let archive = "keyed archive (the default transformer)", custom = "custom transformer, 3 bytes a colour"
        final class Sizes: @unchecked Sendable { var bytes: [String: Int] = [:] }
        let sizes = Sizes()
        return BenchScenario(
            id: "transformable-encoding", title: "Five colours per mood: a keyed archive or a custom 3-bytes-a-colour transformer",
            claim: "Transformable values stored as keyed archives waste space and time: a custom encoding of Moody's colours takes 3 bytes a colour, and is faster to decode when the objects are read.",
            theme: .transformable,
            sources: [.objcio("Data Types", "Custom Data Types", "P-60", "B-TRANSFORM")],
            ratios: [RatioSpec(custom, over: archive)],
            alternatesOrder: true,
            variants: { setup in
                ValueTransformerRegistry.register(ThreeByteColorsTransformer(), name: ThreeByteColorsTransformer.name)
                let moods = setup.scale.part(40, minimum: 500)
                return try [(archive, nil as String?), (custom, ThreeByteColorsTransformer.name)].map { name, transformer in
                    let model = try ManagedObjectModel(entities: [EntityDescription(name: "Mood", properties: [
                        AttributeDescription(name: "date", type: .date),
                        AttributeDescription(name: "colors", type: .transformable, valueTransformerName: transformer),
                    ])])
                    let store = try ScenarioStore.make(setup.folder, "transformable-\(transformer == nil ? "archive" : "custom")", model: model) { context in
                        for i in 0..<moods {
                            let mood = ManagedObject(entity: model.entity(named: "Mood")!, insertInto: context)
                            try mood.setValue(Date(timeIntervalSince1970: Double(i) * 3_600), forKey: "date")
                            try mood.setValue((0..<5).map { c in [Double((i + c) % 256) / 255, Double((i * 3 + c) % 256) / 255, Double((i * 7 + c) % 256) / 255] }, forKey: "colors")
                        }
                    }
                    sizes.bytes[name] = StoreFiles.bytes(of: store)
                    return .engine(name, model: model, store: store, operations: moods) { context in
                        var count = 0
                        for mood in try context.fetch(FetchRequest<ManagedObject>(entityName: "Mood")) { count += (mood.value(forKey: "colors") as? [[Double]])?.count ?? 0 }
                        Bench.sink(Int64(count))
                    }
                }
            },
            judge: { m in
                guard let a = sizes.bytes[archive], let b = sizes.bytes[custom], let ratio = m.ratio(custom, archive) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: b < a && ratio < 1,
                               "the store: \(BenchFormat.bytes(a)) with keyed archives, \(BenchFormat.bytes(b)) with 3 bytes a colour; reading every mood's colours takes \(BenchFormat.ratio(ratio)) the time")
            })
    }

    /// P-61: colours that are rarely read, as a transformable attribute or as bytes a custom accessor decodes on
    /// first use and keeps.
    static var lazyTransformable: BenchScenario {
        let transformable = "transformable", lazy = "bytes + lazy custom accessor"
        func name(_ kind: String, _ reads: String) -> String { "\(kind): \(reads)" }
        let datesOnly = "dates only", twice = "colours read twice"
        return BenchScenario(
            id: "transformable-lazy", title: "Moods whose colours are rarely read: a transformable, or bytes decoded by a lazy custom accessor",
            claim: "A transformable is decoded when its object's fault is fulfilled; a transient attribute with a custom accessor defers the decoding until first use, worthwhile when the value is rarely read and costly to decode.",
            theme: .transformable,
            sources: [.objcio("Data Types", "Custom Data Types", "P-61")],
            ratios: [RatioSpec(name(lazy, datesOnly), over: name(transformable, datesOnly)), RatioSpec(name(lazy, twice), over: name(transformable, twice))],
            alternatesOrder: true,
            variants: { setup in
                let moods = setup.scale.part(40, minimum: 500)
                func colors(_ i: Int) -> [[Double]] {
                    (0..<5).map { c in [Double((i + c) % 256) / 255, Double((i * 3 + c) % 256) / 255, Double((i * 7 + c) % 256) / 255] }
                }
                let archive = ValueTransformerRegistry.transformer(named: nil)
                var variants: [BenchVariant] = []
                for kind in [transformable, lazy] {
                    let model = try ManagedObjectModel(entities: [EntityDescription(name: "Mood", properties: [
                        AttributeDescription(name: "date", type: .date),
                        kind == lazy ? AttributeDescription(name: "colorData", type: .binary)
                                     : AttributeDescription(name: "colors", type: .transformable),
                    ])])
                    if kind == lazy { try model.register(LazyColorsMood.self, forEntityName: "Mood") }
                    let store = try ScenarioStore.make(setup.folder, "transformable-lazy-\(kind == lazy)", model: model) { context in
                        for i in 0..<moods {
                            let mood = ManagedObject(entity: model.entity(named: "Mood")!, insertInto: context)
                            try mood.setValue(Date(timeIntervalSince1970: Double(i) * 3_600), forKey: "date")
                            // The same keyed archive either way: only when it is decoded differs.
                            if kind == lazy { try mood.setValue(try archive.encode(colors(i)), forKey: "colorData") }
                            else { try mood.setValue(colors(i), forKey: "colors") }
                        }
                    }
                    for reads in [datesOnly, twice] {
                        variants.append(.engine(name(kind, reads), model: model, store: store, operations: moods) { context in
                            let request = FetchRequest<ManagedObject>(entityName: "Mood")
                            request.returnsObjectsAsFaults = false
                            var count = 0
                            for mood in try context.fetch(request) {
                                count += (mood.value(forKey: "date") as? Date) == nil ? 0 : 1
                                guard reads == twice else { continue }
                                for _ in 0..<2 {
                                    if let lazyMood = mood as? LazyColorsMood { count += lazyMood.colors.count }
                                    else { count += (mood.value(forKey: "colors") as? [[Double]])?.count ?? 0 }
                                }
                            }
                            Bench.sink(Int64(count))
                        })
                    }
                }
                return variants
            },
            judge: { m in
                guard let deferred = m.ratio(name(lazy, datesOnly), name(transformable, datesOnly)),
                      let used = m.ratio(name(lazy, twice), name(transformable, twice)) else { return Verdict(held: nil, "not measured") }
                // Held when deferring saves at least a tenth of the fetch that never reads the colours.
                return Verdict(held: deferred < 0.9,
                               "reading dates only, the lazy accessor takes \(BenchFormat.ratio(deferred)) the transformable's time; reading the colours twice, \(BenchFormat.ratio(used)) "
                               + "(Faultline decodes a transformable when it is read, on every read, never at fulfilment: nothing is left to defer, and a second read decodes again)")
            })
    }

    /// P-56: a mood's location as a transformable (a keyed archive of the coordinates) or as two doubles.
    static var locationColumns: BenchScenario {
        let archived = "transformable (keyed archive)", doubles = "two doubles (latitude, longitude)"
        final class Sizes: @unchecked Sendable { var bytes: [String: Int] = [:] }
        let sizes = Sizes()
        return BenchScenario(
            id: "location-columns", title: "A location per mood: a transformable archive, or two double columns",
            claim: "Storing a location as a transformable wastes space: two doubles, latitude and longitude, hold it — and read faster.",
            theme: .transformable,
            sources: [.objcio("Relationships", nil, "P-56")],
            ratios: [RatioSpec(doubles, over: archived)],
            alternatesOrder: true,
            variants: { setup in
                let moods = setup.scale.part(40, minimum: 500)
                func coordinates(_ i: Int) -> (Double, Double) { (Double(i % 1_800) / 10 - 90, Double(i * 7 % 3_600) / 10 - 180) }
                return try [archived, doubles].map { name in
                    let split = name == doubles
                    let model = try ManagedObjectModel(entities: [EntityDescription(name: "Mood", properties: [AttributeDescription(name: "date", type: .date)]
                        + (split ? [AttributeDescription(name: "latitude", type: .double), AttributeDescription(name: "longitude", type: .double)]
                                 : [AttributeDescription(name: "location", type: .transformable)]))])
                    let store = try ScenarioStore.make(setup.folder, "location-\(split ? "doubles" : "archive")", model: model) { context in
                        for i in 0..<moods {
                            let mood = ManagedObject(entity: model.entity(named: "Mood")!, insertInto: context)
                            try mood.setValue(Date(timeIntervalSince1970: Double(i) * 3_600), forKey: "date")
                            let (latitude, longitude) = coordinates(i)
                            if split {
                                try mood.setValue(latitude, forKey: "latitude")
                                try mood.setValue(longitude, forKey: "longitude")
                            } else {
                                try mood.setValue([latitude, longitude], forKey: "location")
                            }
                        }
                    }
                    sizes.bytes[name] = StoreFiles.bytes(of: store)
                    return .engine(name, model: model, store: store, operations: moods) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "Mood")
                        request.returnsObjectsAsFaults = false
                        var sum = 0.0
                        for mood in try context.fetch(request) {
                            if split { sum += (mood.value(forKey: "latitude") as? Double ?? 0) + (mood.value(forKey: "longitude") as? Double ?? 0) }
                            else { sum += (mood.value(forKey: "location") as? [Double])?.reduce(0, +) ?? 0 }
                        }
                        Bench.sink(Int64(sum))
                    }
                }
            },
            judge: { m in
                guard let a = sizes.bytes[archived], let b = sizes.bytes[doubles], let ratio = m.ratio(doubles, archived) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: b < a && ratio < 1,
                               "the store: \(BenchFormat.bytes(a)) with archived locations, \(BenchFormat.bytes(b)) with two doubles; reading every location takes \(BenchFormat.ratio(ratio)) the time")
            })
    }

    /// P-55: moving pets between owners, with the relationship's inverse in the model and without it.
    static var inverseRelationships: BenchScenario {
        let withInverse = "with an inverse (Pet.owner)", without = "without an inverse"
        return BenchScenario(
            id: "inverse", title: "Moving N pets to other owners: Owner.pets with an inverse, and without",
            claim: "Dropping a relationship's inverse saves the work of keeping it up to date — probably a premature optimization: measure before giving up what the inverse keeps consistent.",
            theme: .schema,
            sources: [.objcio("Performance", "How to Build Efficient Data Models", "P-55"), ClaimSource(.studyNotes, "Basics", "Relationships", keys: ["W-004-1"])],
            ratios: [RatioSpec(without, over: withInverse)],
            alternatesOrder: true,
            variants: { setup in
                let owners = 20, pets = setup.scale.part(20, minimum: 400)
                return try [(withInverse, true), (without, false)].map { name, inverse in
                    let model = try ManagedObjectModel(entities: [
                        EntityDescription(name: "Owner", properties: [AttributeDescription(name: "name", type: .string),
                                                                       RelationshipDescription(name: "pets", destination: "Pet", inverse: inverse ? "owner" : nil, isToMany: true)]),
                        EntityDescription(name: "Pet", properties: [AttributeDescription(name: "name", type: .string)]
                                          + (inverse ? [RelationshipDescription(name: "owner", destination: "Owner", inverse: "pets")] : [])),
                    ])
                    let template = try ScenarioStore.make(setup.folder, "inverse-\(inverse)", model: model) { context in
                        let people = try (0..<owners).map { o -> ManagedObject in
                            let owner = ManagedObject(entity: model.entity(named: "Owner")!, insertInto: context)
                            try owner.setValue("owner \(o)", forKey: "name")
                            return owner
                        }
                        for p in 0..<pets {
                            let pet = ManagedObject(entity: model.entity(named: "Pet")!, insertInto: context)
                            try pet.setValue("pet \(p)", forKey: "name")
                            try people[p % owners].addObject(pet, toRelationship: "pets")
                        }
                    }
                    let url = setup.folder.appendingPathComponent("inverse-\(inverse)-run.sqlite")
                    return BenchVariant(name, operations: pets) { probes in
                        let coordinator = try ScenarioStore.open(url, from: template, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let people = try context.performAndWait { () -> [ManagedObject] in
                            let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Owner", sortDescriptors: [FetchSortDescriptor(keyPath: "name")]))
                            for owner in all { _ = owner.value(forKey: "pets") }
                            return all
                        }
                        return {
                            try context.performAndWait {
                                // Every pet moves to the next owner.
                                let moves = people.map { ($0, ($0.value(forKey: "pets") as? [ManagedObject]) ?? []) }
                                for (i, (owner, pets)) in moves.enumerated() {
                                    let next = people[(i + 1) % people.count]
                                    for pet in pets {
                                        try owner.removeObject(pet, fromRelationship: "pets")
                                        try next.addObject(pet, toRelationship: "pets")
                                    }
                                }
                                try context.save()
                            }
                        }
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(withInverse), let b = m.counters(without), let ratio = m.ratio(without, withInverse) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: ratio < 1, "statements: \(a.statements) with the inverse, \(b.statements) without; without it the moves and the save take \(BenchFormat.ratio(ratio)) the time")
            })
    }

    /// perf-17: opening a store of N rows and of ten times as many.
    static var storeOpen: BenchScenario {
        func name(_ rows: Int) -> String { "open a store of \(rows) rows" }
        return BenchScenario(
            id: "store-open", title: "Adding a store of N rows and of 10 × N rows to a coordinator",
            claim: "Adding the store can take an unknown time, so do it off the main queue: without a migration it reads the schema and the metadata, not the rows, and takes about as long at ten times the rows — a migration on opening reads them all (see `migration`).",
            theme: .startup,
            sources: [.apple("Integrating Core Data at iOS Startup", nil, "perf-17"), ClaimSource(.kodeco, "The Core Data Stack", "The Persistent Store Coordinator", keys: ["perf-8"]),
                      ClaimSource(.appleGuideClassic, "Core Data Basics", nil, keys: ["perf-8"])],
            ratios: [],
            variants: { setup in
                let model = try RowWorkload.model()
                let small = setup.scale.part(20, minimum: 100), large = small * 10
                return try [small, large].map { rows in
                    let store = try setup.data.rows(rows)
                    return BenchVariant(name(rows), operations: 1) { probes in
                        { 
                            let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
                            try coordinator.addPersistentStore(at: store)
                            Bench.sink(Int64(coordinator.storeIdentifier?.count ?? 0))
                        }
                    }
                }
            },
            judge: { m in
                let small = m.results.first?.name ?? "", large = m.results.last?.name ?? ""
                guard let a = m.counters(small), let b = m.counters(large), let ratio = m.ratio(large, small) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.statements == b.statements && ratio < 2,
                               "\(a.statements) statements at either size; ten times the rows take \(BenchFormat.ratio(ratio)) the time to open")
            })
    }
}

/// A mood whose colours are stored as bytes and decoded by its accessor on first use, then kept until the object
/// turns back into a fault (the objc.io book's lazy transient accessor).
final class LazyColorsMood: ManagedObject {
    private var decoded: [[Double]]?

    var colors: [[Double]] {
        if let decoded { return decoded }
        let data = value(forKey: "colorData") as? Data ?? Data()
        let colors = (try? ValueTransformerRegistry.transformer(named: nil).decode(data)) as? [[Double]] ?? []
        decoded = colors
        return colors
    }

    override func didTurnIntoFault() { decoded = nil }
}
