import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-WIDE: a list showing each person's name and pet's name, from one wide entity or from two entities.
    static var wideOrSplit: BenchScenario {
        let wide = "one wide entity", split = "person and pet (the pet faulted)", prefetched = "person and pet, the pet prefetched"
        return BenchScenario(
            id: "wide-or-split", title: "A person's name and their pet's name: one wide entity, or two entities",
            claim: "Data a screen always shows together belongs in one entity: split across two, each object costs a fault (or a prefetch) and a second object's overhead.",
            theme: .schema,
            sources: [.objcio("Performance", "How to Build Efficient Data Models", "P-39", "P-40", "P-41", "B-WIDE")],
            ratios: [RatioSpec(split, over: wide), RatioSpec(prefetched, over: wide)],
            alternatesOrder: true,
            variants: { setup in
                let people = setup.scale.part(20, minimum: 500)
                let wideModel = try ManagedObjectModel(entities: [EntityDescription(name: "PersonWithPet", properties: [
                    AttributeDescription(name: "name", type: .string), AttributeDescription(name: "age", type: .integer32),
                    AttributeDescription(name: "petName", type: .string), AttributeDescription(name: "petSpecies", type: .string),
                ])])
                let splitModel = try ManagedObjectModel(entities: [
                    EntityDescription(name: "Person", properties: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "age", type: .integer32),
                                                                    RelationshipDescription(name: "pet", destination: "Pet", inverse: "owner")]),
                    EntityDescription(name: "Pet", properties: [AttributeDescription(name: "name", type: .string), AttributeDescription(name: "species", type: .string),
                                                                 RelationshipDescription(name: "owner", destination: "Person", inverse: "pet")]),
                ])
                let wideStore = try ScenarioStore.make(setup.folder, "wide", model: wideModel) { context in
                    for i in 0..<people {
                        let person = ManagedObject(entity: wideModel.entity(named: "PersonWithPet")!, insertInto: context)
                        try person.setValue("person \(i)", forKey: "name")
                        try person.setValue(Int32(i % 90), forKey: "age")
                        try person.setValue("pet \(i)", forKey: "petName")
                        try person.setValue(i % 2 == 0 ? "dog" : "cat", forKey: "petSpecies")
                    }
                }
                let splitStore = try ScenarioStore.make(setup.folder, "split", model: splitModel) { context in
                    for i in 0..<people {
                        let person = ManagedObject(entity: splitModel.entity(named: "Person")!, insertInto: context)
                        try person.setValue("person \(i)", forKey: "name")
                        try person.setValue(Int32(i % 90), forKey: "age")
                        let pet = ManagedObject(entity: splitModel.entity(named: "Pet")!, insertInto: context)
                        try pet.setValue("pet \(i)", forKey: "name")
                        try pet.setValue(i % 2 == 0 ? "dog" : "cat", forKey: "species")
                        try person.setValue(pet, forKey: "pet")
                    }
                }
                func list(_ context: ManagedObjectContext, prefetching: Bool) throws {
                    let request = FetchRequest<ManagedObject>(entityName: "Person")
                    if prefetching { request.relationshipKeyPathsForPrefetching = ["pet"] }
                    var length = 0
                    for person in try context.fetch(request) {
                        length += (person.value(forKey: "name") as? String)?.count ?? 0
                        length += ((person.value(forKey: "pet") as? ManagedObject)?.value(forKey: "name") as? String)?.count ?? 0
                    }
                    Bench.sink(Int64(length))
                }
                return [
                    .engine(wide, model: wideModel, store: wideStore, operations: people) { context in
                        var length = 0
                        for person in try context.fetch(FetchRequest<ManagedObject>(entityName: "PersonWithPet")) {
                            length += ((person.value(forKey: "name") as? String)?.count ?? 0) + ((person.value(forKey: "petName") as? String)?.count ?? 0)
                        }
                        Bench.sink(Int64(length))
                    },
                    .engine(split, model: splitModel, store: splitStore, operations: people) { try list($0, prefetching: false) },
                    .engine(prefetched, model: splitModel, store: splitStore, operations: people) { try list($0, prefetching: true) },
                ]
            },
            judge: { m in
                guard let a = m.counters(wide), let b = m.counters(split), let c = m.counters(prefetched),
                      let splitRatio = m.ratio(split, wide), let prefetchRatio = m.ratio(prefetched, wide) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: splitRatio > 1 && prefetchRatio > 1,
                               "statements: one entity \(a.statements), two entities \(b.statements) (\(b.cacheMisses) pet faults), prefetched \(c.statements); two entities take \(BenchFormat.ratio(splitRatio)) the time, prefetched \(BenchFormat.ratio(prefetchRatio))")
            })
    }

    /// perf-15: an attribute optional (nil where unknown) or mandatory with a default of 0, filtered with `!=`.
    static var optionalOrDefault: BenchScenario {
        let optional = "optional (nil where unknown)", mandatory = "mandatory, default 0"
        final class Outcomes: @unchecked Sendable { var inMemory: [String: Int] = [:] }
        let outcomes = Outcomes()
        return BenchScenario(
            id: "optional-or-default", title: "A rating optional, or mandatory with a default of 0: `rating != 5` in the store and in memory",
            claim: "Prefer mandatory attributes with a default to optional ones: SQL's NULL matches no comparison, so `rating != 5` leaves out every unrated review — which NSPredicate's in-memory evaluation in Core Data would keep; with a default of 0 there is one answer everywhere.",
            theme: .schema,
            sources: [.apple("Performance", nil, "perf-15"), ClaimSource(.appleGuideClassic, "Managed Object Models", "Attributes", keys: ["perf-9"]),
                      ClaimSource(.studyNotes, "Basics", "Attributes", keys: ["perf-5"])],
            ratios: [RatioSpec(mandatory, over: optional)],
            variants: { setup in
                let rows = setup.scale.part(4, minimum: 500)
                return try [(optional, true), (mandatory, false)].map { name, isOptional in
                    let model = try ManagedObjectModel(entities: [EntityDescription(name: "Review", properties: [
                        AttributeDescription(name: "text", type: .string),
                        AttributeDescription(name: "rating", type: .integer16, isOptional: isOptional, defaultValue: isOptional ? nil : Int16(0)),
                    ])])
                    let store = try ScenarioStore.make(setup.folder, "optional-\(isOptional)", model: model) { context in
                        for i in 0..<rows {
                            let review = ManagedObject(entity: model.entity(named: "Review")!, insertInto: context)
                            try review.setValue("review \(i)", forKey: "text")
                            // Half the reviews have no rating yet.
                            if i % 2 == 0 { try review.setValue(Int16(i % 5 + 1), forKey: "rating") }
                        }
                    }
                    return .engine(name, model: model, store: store, operations: rows) { context in
                        let predicate = try ObjectPredicate(parsing: "rating != 5")
                        let stored = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review", predicate: predicate))
                        // The same predicate in memory, on every review.
                        let all = try context.fetch(FetchRequest<ManagedObject>(entityName: "Review"))
                        outcomes.inMemory[name] = all.filter { (try? predicate.matches($0)) == true }.count
                        Bench.sink(Int64(stored.count))
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(optional), let b = m.counters(mandatory), let memoryA = outcomes.inMemory[optional], let memoryB = outcomes.inMemory[mandatory],
                      let rows = m[optional]?.operations else { return Verdict(held: nil, "not measured") }
                let storeA = a.fetchedObjects - rows, storeB = b.fetchedObjects - rows
                // Held: optional, two answers (the store leaves the unrated out, memory keeps them, as in Core Data);
                // mandatory with a default, one answer.
                return Verdict(held: storeA < storeB && memoryA > storeA && storeB == memoryB,
                               "`rating != 5` over \(rows) reviews, half unrated: optional — the store returns \(storeA), the unrated left out, and the in-memory evaluation \(memoryA), the unrated kept (as Core Data's NSPredicate: docs/predicates.md); mandatory with a default of 0 — \(storeB) in the store and \(memoryB) in memory")
            })
    }
}

extension ScenarioCatalogue {
    /// W-003-6: the same inserts saved with the model's validation rules and without them.
    static var validationCost: BenchScenario {
        let plain = "no validation rules", validated = "bounds, a length and a pattern on each object"
        let unbounded = "clubs of 10 runs, no count bounds", bounded = "clubs of 10 runs, the to-many's count bounded (1…20)"
        return BenchScenario(
            id: "validation-cost", title: "Saving N objects with validation rules (bounds, length, pattern) and without",
            claim: "Validation runs at every save on every changed object: rules on attributes — numeric bounds, lengths, patterns — add to each save's time, in proportion to the objects saved.",
            theme: .conflicts,
            sources: [ClaimSource(.appleGuideClassic, "Managed Object Models", "Programmatic Models", keys: ["W-003-6"]), .apple("Object Validation", nil, "V-01"),
                      ClaimSource(.studyNotes, "Understanding", "Validation", keys: ["W-004-9"])],
            ratios: [RatioSpec(validated, over: plain), RatioSpec(bounded, over: unbounded)],
            alternatesOrder: true,
            variants: { setup in
                let rows = setup.scale.part(10, minimum: 200)
                return try [(plain, false), (validated, true)].map { name, rules in
                    let model = try ManagedObjectModel(entities: [EntityDescription(name: "Run", properties: [
                        AttributeDescription(name: "distance", type: .double, isOptional: false, defaultValue: 0.0, minValue: rules ? 0 : nil, maxValue: rules ? 1_000 : nil),
                        AttributeDescription(name: "note", type: .string, isOptional: false, defaultValue: "", minValue: rules ? 1 : nil, maxValue: rules ? 64 : nil,
                                             regularExpression: rules ? "[a-z ]+[0-9]+" : nil),
                    ])])
                    let url = setup.folder.appendingPathComponent("validation-\(rules).sqlite")
                    return BenchVariant(name, operations: rows) { probes in
                        let coordinator = try ScenarioStore.open(url, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        try context.performAndWait {
                            for i in 0..<rows {
                                let run = ManagedObject(entity: model.entity(named: "Run")!, insertInto: context)
                                try run.setValue(Double(i % 42), forKey: "distance")
                                try run.setValue("morning run \(i)", forKey: "note")
                            }
                        }
                        return { try context.performAndWait { try context.save() } }
                    }
                } + [(unbounded, false), (bounded, true)].map { name, bounds in
                    // W-004-9: a to-many with count bounds, checked for each club the save changes.
                    let model = try ManagedObjectModel(entities: [
                        EntityDescription(name: "Club", properties: [
                            AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                            RelationshipDescription(name: "runs", destination: "Run", inverse: "club", isToMany: true, minCount: bounds ? 1 : 0, maxCount: bounds ? 20 : 0),
                        ]),
                        EntityDescription(name: "Run", properties: [
                            AttributeDescription(name: "distance", type: .double, isOptional: false, defaultValue: 0.0),
                            RelationshipDescription(name: "club", destination: "Club", inverse: "runs"),
                        ]),
                    ])
                    let url = setup.folder.appendingPathComponent("validation-clubs-\(bounds).sqlite")
                    return BenchVariant(name, operations: rows) { probes in
                        let coordinator = try ScenarioStore.open(url, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        try context.performAndWait {
                            var club: ManagedObject?
                            for i in 0..<rows {
                                if i % 10 == 0 {
                                    club = ManagedObject(entity: model.entity(named: "Club")!, insertInto: context)
                                    try club!.setValue("club \(i / 10)", forKey: "name")
                                }
                                let run = ManagedObject(entity: model.entity(named: "Run")!, insertInto: context)
                                try run.setValue(Double(i % 42), forKey: "distance")
                                try run.setValue(club, forKey: "club")
                            }
                        }
                        return { try context.performAndWait { try context.save() } }
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(plain), let b = m.counters(validated), let ratio = m.ratio(validated, plain) else { return Verdict(held: nil, "not measured") }
                var detail = "the same \(a.statements) statements; the save with validation rules takes \(BenchFormat.ratio(ratio)) the time of the save without"
                var held = a.statements == b.statements && ratio > 1.05
                if let c = m.counters(unbounded), let d = m.counters(bounded), let clubs = m.ratio(bounded, unbounded) {
                    detail += "; a to-many's count bounds, checked for each club saved: the same \(c.statements) statements, \(BenchFormat.ratio(clubs)) the time"
                    held = held && c.statements == d.statements
                }
                return Verdict(held: held, detail)
            })
    }

    /// perf-3: reading attributes through typed keys, and through key-value coding's string keys.
    static var accessors: BenchScenario {
        let typed = "typed keys (object[Attribute])", kvc = "string keys (value(forKey:))"
        let custom = "custom accessors (primitiveValue(forKey:))", ivars = "instance variables (set in awakeFromFetch)"
        return BenchScenario(
            id: "accessors", title: "Reading ten attributes of N objects: typed keys, string keys, custom accessors, instance variables",
            claim: "Core Data's own storage is fastest read through its accessors: key-value coding by string keys costs a lookup of the key each time, a custom accessor over the primitive value costs as much, and custom instance variables are no faster than the managed storage.",
            theme: .overheads,
            sources: [.apple("Performance", "NSManagedObject Storage Mechanism", "perf-3"), ClaimSource(.studyNotes, "Understanding", "Accessors", keys: ["W-004-16"])],
            ratios: [RatioSpec(kvc, over: typed), RatioSpec(custom, over: typed), RatioSpec(ivars, over: typed)],
            alternatesOrder: true,
            variants: { setup in
                let model = try RowWorkload.model()
                let rows = min(20_000, setup.scale.part(10, minimum: 200))
                let store = try setup.data.rows(rows)
                let names = (0..<10).map { "a\($0)" }
                // The same rows read by subclasses: one with Core Data's custom-accessor pattern, one keeping its
                // own copies of the values in instance variables.
                let accessorModel = try RowWorkload.model()
                try accessorModel.register(AccessorRow.self, forEntityName: "Row")
                let ivarModel = try RowWorkload.model()
                try ivarModel.register(InstanceVariableRow.self, forEntityName: "Row")
                func load(_ context: ManagedObjectContext) throws -> [ManagedObject] {
                    let request = FetchRequest<ManagedObject>(entityName: "Row")
                    request.returnsObjectsAsFaults = false
                    return try context.fetch(request)
                }
                return [
                    .engine(typed, model: model, store: store, operations: rows * 10, prime: load) { _, objects in
                        var sum: Int64 = 0
                        for object in objects { for key in RowWorkload.keys { sum &+= object[key] } }
                        Bench.sink(sum)
                    },
                    .engine(kvc, model: model, store: store, operations: rows * 10, prime: load) { _, objects in
                        var sum: Int64 = 0
                        for object in objects { for name in names { sum &+= object.value(forKey: name) as? Int64 ?? 0 } }
                        Bench.sink(sum)
                    },
                    .engine(custom, model: accessorModel, store: store, operations: rows * 10, prime: { try load($0).map { $0 as! AccessorRow } }) { _, objects in
                        var sum: Int64 = 0
                        for object in objects { sum &+= object.sum }
                        Bench.sink(sum)
                    },
                    .engine(ivars, model: ivarModel, store: store, operations: rows * 10, prime: { try load($0).map { $0 as! InstanceVariableRow } }) { _, objects in
                        var sum: Int64 = 0
                        for object in objects { sum &+= object.sum }
                        Bench.sink(sum)
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(typed), let b = m.counters(kvc), let ratio = m.ratio(kvc, typed),
                      let customRatio = m.ratio(custom, typed), let ivarRatio = m.ratio(ivars, typed) else { return Verdict(held: nil, "not measured") }
                let held = a.statements == 0 && b.statements == 0 && ratio > 1.1 && customRatio > 1.1 && ivarRatio >= 0.9
                return Verdict(held: held,
                               "no statements either way (the objects were loaded before); against typed keys, string keys take \(BenchFormat.ratio(ratio)), custom accessors \(BenchFormat.ratio(customRatio)), instance variables \(BenchFormat.ratio(ivarRatio)) the time")
            })
    }

    /// B-SMALL: K lookups in a small set, by a fetch each or among the objects loaded once, at three sizes.
    static var smallSet: BenchScenario {
        let sizes = [50, 500, 5_000], lookups = 20
        func name(_ size: Int, _ inMemory: Bool) -> String { "\(size) objects: \(inMemory ? "load once, filter in memory" : "a fetch each")" }
        return BenchScenario(
            id: "small-set", title: "\(lookups) lookups in a set of 50, 500 or 5,000 objects: a fetch each, or load once and filter in memory",
            claim: "For a small set — a few hundred objects — load everything once and filter and sort in memory: it beats a fetch per question, up to a size where the fetches win.",
            theme: .avoidingFetches,
            sources: [.objcio("Performance", "Avoiding Fetch Requests", "P-24", "B-SMALL", "B-SMALLSET"), .apple("Performance", "Fetching Managed Objects", "perf-4")],
            ratios: sizes.map { RatioSpec(name($0, true), over: name($0, false)) },
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                var variants: [BenchVariant] = []
                for size in sizes {
                    let store = try setup.data.cities(size, indexedPopulation: true, residents: false)
                    let bounds = (0..<lookups).map { Int64(10_000 + $0 * 9_973) }
                    variants.append(.engine(name(size, false), model: model, store: store, operations: lookups) { context in
                        var found = 0
                        for low in bounds { found += try context.fetch(try Bench.request("City", "population BETWEEN {%@, %@}", low, low + 20_000)).count }
                        Bench.sink(Int64(found))
                    })
                    variants.append(.engine(name(size, true), model: model, store: store, operations: lookups) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "City")
                        request.returnsObjectsAsFaults = false
                        let all = try context.fetch(request)
                        var found = 0
                        for low in bounds { found += all.filter { ($0[CityWorkload.population] >= low) && ($0[CityWorkload.population] <= low + 20_000) }.count }
                        Bench.sink(Int64(found))
                    })
                }
                return variants
            },
            judge: { m in
                var parts: [String] = [], wins: [Bool] = []
                for size in sizes {
                    guard let ratio = m.ratio(name(size, true), name(size, false)) else { return Verdict(held: nil, "not measured") }
                    parts.append("\(size): \(BenchFormat.ratio(ratio))")
                    wins.append(ratio < 1)
                }
                let crossover = sizes.indices.first { !wins[$0] }.map { "the fetches win from \(sizes[$0]) objects" } ?? "memory wins at every size measured"
                return Verdict(held: wins[0] && wins[1], "loading once and filtering in memory against a fetch each, by size — " + parts.joined(separator: ", ") + "; " + crossover)
            })
    }
}

/// A row read through custom accessors in Core Data's pattern: each property reads the primitive value by its key.
final class AccessorRow: ManagedObject {
    var a0: Int64 { primitiveValue(forKey: "a0") as? Int64 ?? 0 }
    var a1: Int64 { primitiveValue(forKey: "a1") as? Int64 ?? 0 }
    var a2: Int64 { primitiveValue(forKey: "a2") as? Int64 ?? 0 }
    var a3: Int64 { primitiveValue(forKey: "a3") as? Int64 ?? 0 }
    var a4: Int64 { primitiveValue(forKey: "a4") as? Int64 ?? 0 }
    var a5: Int64 { primitiveValue(forKey: "a5") as? Int64 ?? 0 }
    var a6: Int64 { primitiveValue(forKey: "a6") as? Int64 ?? 0 }
    var a7: Int64 { primitiveValue(forKey: "a7") as? Int64 ?? 0 }
    var a8: Int64 { primitiveValue(forKey: "a8") as? Int64 ?? 0 }
    var a9: Int64 { primitiveValue(forKey: "a9") as? Int64 ?? 0 }
    var sum: Int64 { a0 &+ a1 &+ a2 &+ a3 &+ a4 &+ a5 &+ a6 &+ a7 &+ a8 &+ a9 }
}

/// A row that keeps its own copies of its values in instance variables, filled when it is fetched (the "other
/// storage mechanism" the guide compares with Core Data's).
final class InstanceVariableRow: ManagedObject {
    private(set) var a0: Int64 = 0, a1: Int64 = 0, a2: Int64 = 0, a3: Int64 = 0, a4: Int64 = 0
    private(set) var a5: Int64 = 0, a6: Int64 = 0, a7: Int64 = 0, a8: Int64 = 0, a9: Int64 = 0

    override func awakeFromFetch() {
        let keys = RowWorkload.keys
        a0 = self[keys[0]]; a1 = self[keys[1]]; a2 = self[keys[2]]; a3 = self[keys[3]]; a4 = self[keys[4]]
        a5 = self[keys[5]]; a6 = self[keys[6]]; a7 = self[keys[7]]; a8 = self[keys[8]]; a9 = self[keys[9]]
    }

    var sum: Int64 { a0 &+ a1 &+ a2 &+ a3 &+ a4 &+ a5 &+ a6 &+ a7 &+ a8 &+ a9 }
}
