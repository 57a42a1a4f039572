import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-SUBENT / B5: four kinds of item as sub-entities of one abstract entity (one shared table) or as four
    /// entities (four tables); fetching one kind (a leaf), then every kind (the root, or the four entities in turn).
    static var subentities: BenchScenario {
        let sharedLeaf = "sub-entities: one kind", separateLeaf = "separate entities: one kind"
        let sharedRoot = "sub-entities: every kind (the root)", separateAll = "separate entities: every kind (four fetches)"
        let kinds = ["Book", "Film", "Song", "Game"]
        func model(shared: Bool) throws -> ManagedObjectModel {
            func own(_ kind: String) -> [PropertyDescription] {
                (0..<4).map { AttributeDescription(name: "\(kind.lowercased())\($0)", type: $0 % 2 == 0 ? .string : .integer64) }
            }
            let title = AttributeDescription(name: "title", type: .string)
            if shared {
                return try ManagedObjectModel(entities: [EntityDescription(name: "Item", isAbstract: true, properties: [title])]
                                              + kinds.map { EntityDescription(name: $0, parent: "Item", properties: own($0)) })
            }
            return try ManagedObjectModel(entities: kinds.map { EntityDescription(name: $0, properties: [title] + own($0)) })
        }
        func titles(_ context: ManagedObjectContext, _ entityName: String) throws -> Int64 {
            let request = FetchRequest<ManagedObject>(entityName: entityName)
            request.returnsObjectsAsFaults = false
            return Int64(try context.fetch(request).reduce(0) { $0 + (($1.value(forKey: "title") as? String)?.count ?? 0) })
        }
        return BenchScenario(
            id: "subentities", title: "Fetching one of four kinds of item, then every kind: sub-entities of one entity, or four entities",
            claim: "Sub-entities share their root's table, with every sibling's columns: fetching one kind reads a wider table of all kinds' rows — slower and bigger than an entity of its own.",
            theme: .schema,
            sources: [.objcio("Performance", "How to Build Efficient Data Models", "P-53", "B-SUBENT"), .apple("Creating a Managed Object Model", "Entity Inheritance", "perf-14", "B5"),
                      ClaimSource(.appleGuideClassic, "Managed Object Models", "Entity Inheritance", keys: ["W-003-3", "W-003-4"])],
            ratios: [RatioSpec(sharedLeaf, over: separateLeaf), RatioSpec(sharedRoot, over: separateAll)],
            alternatesOrder: true,
            variants: { setup in
                let perKind = setup.scale.part(8, minimum: 250)
                var variants: [BenchVariant] = []
                for isShared in [true, false] {
                    let model = try model(shared: isShared)
                    let store = try ScenarioStore.make(setup.folder, "subentities-\(isShared ? "shared" : "separate")", model: model) { context in
                        for kind in kinds {
                            let entity = model.entity(named: kind)!
                            for i in 0..<perKind {
                                let item = ManagedObject(entity: entity, insertInto: context)
                                try item.setValue("\(kind) \(i)", forKey: "title")
                                for j in 0..<4 { try item.setValue(j % 2 == 0 ? "\(kind) \(i) \(j) words" as Any : Int64(i * j), forKey: "\(kind.lowercased())\(j)") }
                            }
                        }
                    }
                    variants.append(.engine(isShared ? sharedLeaf : separateLeaf, model: model, store: store, operations: perKind) { context in
                        Bench.sink(try titles(context, "Song"))
                    })
                    variants.append(.engine(isShared ? sharedRoot : separateAll, model: model, store: store, operations: perKind * kinds.count) { context in
                        Bench.sink(isShared ? try titles(context, "Item") : try kinds.reduce(0) { $0 + (try titles(context, $1)) })
                    })
                }
                return variants
            },
            judge: { m in
                guard let a = m.counters(sharedLeaf), let b = m.counters(separateLeaf), let ratio = m.ratio(sharedLeaf, separateLeaf) else { return Verdict(held: nil, "not measured") }
                var detail = "one kind: both read \(a.rows) rows in \(a.statements) statement; the shared table takes \(BenchFormat.ratio(ratio)) the time of a table of its own"
                if let root = m.counters(sharedRoot), let all = m.counters(separateAll), let rootRatio = m.ratio(sharedRoot, separateAll) {
                    detail += "; every kind: the root reads \(root.rows) rows in \(root.statements) statement, four entities in \(all.statements), and takes \(BenchFormat.ratio(rootRatio)) their time"
                }
                return Verdict(held: a.rows == b.rows && ratio > 1.05, detail)
            })
    }

    /// B-INTWIDTH: ten Integer 16 columns against ten Integer 64 columns holding the same small values.
    static var integerWidth: BenchScenario {
        let narrow = "Integer 16", wide = "Integer 64"
        final class Sizes: @unchecked Sendable { var bytes: [String: Int] = [:] }
        let sizes = Sizes()
        return BenchScenario(
            id: "integer-width", title: "Ten Integer 16 attributes against ten Integer 64, the same values",
            claim: "Smaller integer types save space in the store and make fetching more efficient.",
            theme: .schema,
            sources: [.objcio("Performance", "How to Build Efficient Data Models", "P-57", "B-INTWIDTH")],
            ratios: [RatioSpec(narrow, over: wide)],
            alternatesOrder: true,
            variants: { setup in
                let rows = setup.scale.part(4, minimum: 500)
                return try [(narrow, AttributeType.integer16), (wide, .integer64)].map { name, type in
                    let model = try ManagedObjectModel(entities: [EntityDescription(name: "Row", properties: (0..<10).map { AttributeDescription(name: "a\($0)", type: type) })])
                    let store = try ScenarioStore.make(setup.folder, "integer-width-\(type)", model: model) { context in
                        var random = SeededGenerator(seed: 3)
                        for _ in 0..<rows {
                            let row = ManagedObject(entity: model.entity(named: "Row")!, insertInto: context)
                            for j in 0..<10 {
                                let value = Int.random(in: 0..<30_000, using: &random)
                                try row.setValue(type == .integer16 ? Int16(value) as Any : Int64(value), forKey: "a\(j)")
                            }
                        }
                    }
                    sizes.bytes[name] = StoreFiles.bytes(of: store)
                    return .engine(name, model: model, store: store, operations: rows) { context in
                        let request = FetchRequest<ManagedObject>(entityName: "Row")
                        request.returnsObjectsAsFaults = false
                        Bench.sink(Int64(try context.fetch(request).count))
                    }
                }
            },
            judge: { m in
                guard let small = sizes.bytes[narrow], let large = sizes.bytes[wide], let ratio = m.ratio(narrow, wide) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: small < large * 95 / 100 && ratio < 0.95,
                               "the file: \(BenchFormat.bytes(small)) with Integer 16, \(BenchFormat.bytes(large)) with Integer 64 (SQLite stores every integer in as few bytes as its value needs); fetching takes \(BenchFormat.ratio(ratio)) the time")
            })
    }

    /// P-54 / B7: owners and their pets, one-to-many or many-to-many: the statements to write and to read them.
    static var toManyShapes: BenchScenario {
        func name(_ manyToMany: Bool, _ step: String) -> String { "\(manyToMany ? "many-to-many" : "one-to-many"): \(step)" }
        return BenchScenario(
            id: "to-many-shapes", title: "Owners and pets, one-to-many or many-to-many: write them, read each owner's pets",
            claim: "A many-to-many relationship is stored in a join table: every link is a row of its own to write and a join to read, where one-to-many keeps a column in the destination's row.",
            theme: .schema,
            sources: [.objcio("Performance", "How to Build Efficient Data Models", "P-54"), .apple("Creating Managed Object Relationships", "Many-to-Many Relationships", "B7"),
                      ClaimSource(.studyNotes, "Basics", "Relationships", keys: ["perf-2"])],
            ratios: [RatioSpec(name(true, "insert"), over: name(false, "insert")), RatioSpec(name(true, "read"), over: name(false, "read"))],
            alternatesOrder: true,
            variants: { setup in
                let owners = setup.scale.part(40, minimum: 20), petsPerOwner = 10
                var variants: [BenchVariant] = []
                for manyToMany in [false, true] {
                    let model = try ManagedObjectModel(entities: [
                        EntityDescription(name: "Owner", properties: [AttributeDescription(name: "name", type: .string),
                                                                       RelationshipDescription(name: "pets", destination: "Pet", inverse: manyToMany ? "owners" : "owner", isToMany: true)]),
                        EntityDescription(name: "Pet", properties: [AttributeDescription(name: "name", type: .string),
                                                                     RelationshipDescription(name: manyToMany ? "owners" : "owner", destination: "Owner", inverse: "pets", isToMany: manyToMany)]),
                    ])
                    func fill(_ context: ManagedObjectContext) throws {
                        for o in 0..<owners {
                            let owner = ManagedObject(entity: model.entity(named: "Owner")!, insertInto: context)
                            try owner.setValue("owner \(o)", forKey: "name")
                            for p in 0..<petsPerOwner {
                                let pet = ManagedObject(entity: model.entity(named: "Pet")!, insertInto: context)
                                try pet.setValue("pet \(o).\(p)", forKey: "name")
                                try owner.addObject(pet, toRelationship: "pets")
                            }
                        }
                    }
                    let insertURL = setup.folder.appendingPathComponent("to-many-\(manyToMany)-insert.sqlite")
                    variants.append(BenchVariant(name(manyToMany, "insert"), operations: owners * petsPerOwner) { probes in
                        let coordinator = try ScenarioStore.open(insertURL, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return { try context.performAndWait { try fill(context); try context.save() } }
                    })
                    let store = try ScenarioStore.make(setup.folder, "to-many-\(manyToMany)", model: model, fill)
                    variants.append(.engine(name(manyToMany, "read"), model: model, store: store, operations: owners) { context in
                        var count = 0
                        for owner in try context.fetch(FetchRequest<ManagedObject>(entityName: "Owner")) {
                            count += (owner.value(forKey: "pets") as? [ManagedObject])?.count ?? 0
                        }
                        Bench.sink(Int64(count))
                    })
                }
                return variants
            },
            judge: { m in
                guard let i1 = m.counters(name(false, "insert")), let i2 = m.counters(name(true, "insert")), let r1 = m.counters(name(false, "read")),
                      let r2 = m.counters(name(true, "read")), let insertRatio = m.ratio(name(true, "insert"), name(false, "insert")),
                      let readRatio = m.ratio(name(true, "read"), name(false, "read")) else { return Verdict(held: nil, "not measured") }
                let links = m[name(false, "insert")]?.operations ?? 0
                let held = i2.statements >= i1.statements + links && insertRatio > 1.05
                return Verdict(held: held, "writing \(links) links: \(i1.statements) statements one-to-many, \(i2.statements) many-to-many (\(BenchFormat.ratio(insertRatio)) the time); "
                               + "reading each owner's pets: \(r1.statements) and \(r2.statements) statements (\(BenchFormat.ratio(readRatio)) the time)")
            })
    }

    /// Kodeco's DogWalk (perf-10, perf-12): N walks appended to one dog, one at a time — to an ordered relationship by
    /// copying its members and setting them back, or with the relationship's accessor; to an unordered one with the
    /// accessor (a set: each add checks membership).
    static var toManyAppends: BenchScenario {
        let copy = "ordered: copy the members, append, set them back", accessor = "ordered: the accessor (addObject(_:toRelationship:))",
            unordered = "unordered: the accessor (addObject(_:toRelationship:))"
        return BenchScenario(
            id: "to-many-appends", title: "N walks appended to one dog, one at a time: copying the ordered set, its accessor, or an unordered set's",
            claim: "Appending to an ordered relationship by copying its ordered set, appending and setting the copy back costs the whole set at every append — quadratic in all; the generated accessor appends in place. A to-many is a set: each add checks membership, in constant time, so large appends stay linear.",
            theme: .schema,
            sources: [ClaimSource(.kodeco, "The Core Data Stack", "DogWalk: ordered walks", keys: ["perf-12"]), ClaimSource(.kodeco, "The Core Data Stack", "DogWalk: to-many sets", keys: ["perf-10"])],
            ratios: [RatioSpec(copy, over: accessor), RatioSpec(unordered, over: accessor)],
            alternatesOrder: true,
            variants: { setup in
                let walks = min(2_000, setup.scale.part(100, minimum: 200))
                return try [(copy, true, true), (accessor, true, false), (unordered, false, false)].map { name, ordered, copying in
                    let model = try ManagedObjectModel(entities: [
                        EntityDescription(name: "Dog", properties: [AttributeDescription(name: "name", type: .string),
                                                                     RelationshipDescription(name: "walks", destination: "Walk", inverse: "dog", isToMany: true, isOrdered: ordered)]),
                        EntityDescription(name: "Walk", properties: [AttributeDescription(name: "date", type: .date),
                                                                      RelationshipDescription(name: "dog", destination: "Dog", inverse: "walks")]),
                    ])
                    let url = setup.folder.appendingPathComponent("to-many-appends-\(ordered)-\(copying).sqlite")
                    return BenchVariant(name, operations: walks) { probes in
                        let coordinator = try ScenarioStore.open(url, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        // The dog and its walks are made outside the clock; the appends are timed, in memory.
                        let (dog, list) = try context.performAndWait {
                            let dog = ManagedObject(entity: model.entity(named: "Dog")!, insertInto: context)
                            try dog.setValue("Fido", forKey: "name")
                            let list = try (0..<walks).map { i -> ManagedObject in
                                let walk = ManagedObject(entity: model.entity(named: "Walk")!, insertInto: context)
                                try walk.setValue(Date(timeIntervalSinceReferenceDate: Double(i) * 3_600), forKey: "date")
                                return walk
                            }
                            return (dog, list)
                        }
                        return {
                            try context.performAndWait {
                                for walk in list {
                                    if copying {
                                        try dog.setValue(dog.objects(forRelationship: "walks") + [walk], forKey: "walks")
                                    } else {
                                        try dog.addObject(walk, toRelationship: "walks")
                                    }
                                }
                                Bench.sink(Int64(dog.count(forRelationship: "walks")))
                            }
                        }
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(copy), let b = m.counters(accessor), let copying = m.ratio(copy, accessor), let set = m.ratio(unordered, accessor),
                      let walks = m[copy]?.operations else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.statements == 0 && b.statements == 0 && copying > 2,
                               "\(walks) appends in memory (\(a.statements) statements): copying the ordered set each time takes \(BenchFormat.ratio(copying)) the accessor's time; the unordered set's accessor \(BenchFormat.ratio(set))")
            })
    }

    /// P-21 / B-ORDERED: playlists of songs, ordered relationship or unordered with a position attribute.
    static var orderedRelationships: BenchScenario {
        func name(_ ordered: Bool, _ step: String) -> String { "\(ordered ? "ordered" : "unordered + position"): \(step)" }
        return BenchScenario(
            id: "ordered-relationships", title: "Playlists of songs: an ordered relationship, or an unordered one sorted by a position",
            claim: "An ordered relationship is slower where objects are inserted or updated, because Core Data must maintain and persist the order; reading its members in order is faster than fetching them and sorting.",
            theme: .schema,
            sources: [.objcio("Performance", "Avoiding Fetch Requests", "P-21", "B-ORDERED")],
            ratios: [RatioSpec(name(true, "insert"), over: name(false, "insert")), RatioSpec(name(true, "add a song first"), over: name(false, "add a song first")),
                     RatioSpec(name(true, "read in order"), over: name(false, "read in order"))],
            alternatesOrder: true,
            variants: { setup in
                let playlists = setup.scale.part(80, minimum: 20), songsPerPlaylist = 10
                var variants: [BenchVariant] = []
                for ordered in [true, false] {
                    let model = try ManagedObjectModel(entities: [
                        EntityDescription(name: "Playlist", properties: [AttributeDescription(name: "name", type: .string),
                                                                          RelationshipDescription(name: "songs", destination: "Song", inverse: "playlist", isToMany: true, isOrdered: ordered)]),
                        EntityDescription(name: "Song", properties: [AttributeDescription(name: "title", type: .string),
                                                                      AttributeDescription(name: "position", type: .integer32, isOptional: false, defaultValue: Int32(0)),
                                                                      RelationshipDescription(name: "playlist", destination: "Playlist", inverse: "songs")]),
                    ])
                    func fill(_ context: ManagedObjectContext) throws {
                        for p in 0..<playlists {
                            let playlist = ManagedObject(entity: model.entity(named: "Playlist")!, insertInto: context)
                            try playlist.setValue("playlist \(p)", forKey: "name")
                            for s in 0..<songsPerPlaylist {
                                let song = ManagedObject(entity: model.entity(named: "Song")!, insertInto: context)
                                try song.setValue("song \(p).\(s)", forKey: "title")
                                if !ordered { try song.setValue(Int32(songsPerPlaylist - s), forKey: "position") }
                                try playlist.addObject(song, toRelationship: "songs")
                            }
                        }
                    }
                    let insertURL = setup.folder.appendingPathComponent("ordered-\(ordered)-insert.sqlite")
                    variants.append(BenchVariant(name(ordered, "insert"), operations: playlists * songsPerPlaylist) { probes in
                        let coordinator = try ScenarioStore.open(insertURL, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        return { try context.performAndWait { try fill(context); try context.save() } }
                    })
                    let store = try ScenarioStore.make(setup.folder, "ordered-\(ordered)", model: model, fill)
                    // A new song first in every playlist, on a copy of the filled store whose playlists and songs are
                    // read outside the clock: the ordered relationship reads its members' order keys and gives the new
                    // song one below the first (the gaps of 1024 spare the others a rewrite); the unordered one writes
                    // the new song with a position below the others'.
                    let frontURL = setup.folder.appendingPathComponent("ordered-\(ordered)-front.sqlite")
                    variants.append(BenchVariant(name(ordered, "add a song first"), operations: playlists) { probes in
                        let coordinator = try ScenarioStore.open(frontURL, from: store, model: model, probes: probes)
                        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
                        let lists = try context.performAndWait {
                            let lists = try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist"))
                            for list in lists { for song in list.value(forKey: "songs") as? [ManagedObject] ?? [] { _ = song.value(forKey: "position") } }
                            return lists
                        }
                        return {
                            try context.performAndWait {
                                for playlist in lists {
                                    let song = ManagedObject(entity: model.entity(named: "Song")!, insertInto: context)
                                    try song.setValue("new song", forKey: "title")
                                    if ordered {
                                        try playlist.addObject(song, toRelationship: "songs", at: 0)
                                    } else {
                                        let members = playlist.value(forKey: "songs") as? [ManagedObject] ?? []
                                        let lowest = members.compactMap { $0.value(forKey: "position") as? Int32 }.min() ?? 0
                                        try song.setValue(lowest - 1, forKey: "position")
                                        try playlist.addObject(song, toRelationship: "songs")
                                    }
                                }
                                try context.save()
                            }
                        }
                    })
                    variants.append(.engine(name(ordered, "read in order"), model: model, store: store, operations: playlists) { context in
                        var first = 0
                        for playlist in try context.fetch(FetchRequest<ManagedObject>(entityName: "Playlist")) {
                            let songs = playlist.value(forKey: "songs") as? [ManagedObject] ?? []
                            let inOrder = ordered ? songs : songs.sorted { ($0.value(forKey: "position") as? Int32 ?? 0) < ($1.value(forKey: "position") as? Int32 ?? 0) }
                            first += (inOrder.first?.value(forKey: "title") as? String)?.count ?? 0
                        }
                        Bench.sink(Int64(first))
                    })
                }
                return variants
            },
            judge: { m in
                guard let i1 = m.counters(name(true, "insert")), let i2 = m.counters(name(false, "insert")),
                      let insertRatio = m.ratio(name(true, "insert"), name(false, "insert")), let readRatio = m.ratio(name(true, "read in order"), name(false, "read in order")) else {
                    return Verdict(held: nil, "not measured")
                }
                guard let f1 = m.counters(name(true, "add a song first")), let f2 = m.counters(name(false, "add a song first")),
                      let frontRatio = m.ratio(name(true, "add a song first"), name(false, "add a song first")) else {
                    return Verdict(held: nil, "not measured")
                }
                // The claim is about maintaining the order: new lists cost the same (the order key rides in each INSERT);
                // a song put first in existing lists is where the ordered relationship writes more.
                return Verdict(held: f1.statements > f2.statements && frontRatio > 1.05 && readRatio < 0.95,
                               "new playlists: \(i1.statements) statements ordered, \(i2.statements) unordered (\(BenchFormat.ratio(insertRatio)) the time); a song first in each playlist: \(f1.statements) statements ordered, \(f2.statements) unordered (\(BenchFormat.ratio(frontRatio)) the time); reading in order: \(BenchFormat.ratio(readRatio)) the time of sorting by position")
            })
    }

    /// P-42 / B-DENORM: each region's number of moods — counting the relationship, a count request each, or a
    /// stored count kept up to date.
    static var denormalizedCount: BenchScenario {
        let relationship = "moods.count (relationship faults)", countRequest = "a count request per region", stored = "numberOfMoods (stored)"
        return BenchScenario(
            id: "denormalized-count", title: "Each region's number of moods: the relationship, a count request, a stored count",
            claim: "A list showing each region's number of moods should read a denormalized count attribute (one statement), not count each region's relationship (a statement per region, and every mood's ID).",
            theme: .nPlusOne,
            sources: [.objcio("Performance", "How to Build Efficient Data Models", "P-42", "P-43", "B-DENORM")],
            ratios: [RatioSpec(stored, over: relationship), RatioSpec(countRequest, over: relationship)],
            alternatesOrder: true,
            variants: { setup in
                let regions = setup.scale.part(100, minimum: 20), moodsPerRegion = 20
                let model = try ManagedObjectModel(entities: [
                    EntityDescription(name: "Region", properties: [AttributeDescription(name: "name", type: .string),
                                                                    AttributeDescription(name: "numberOfMoods", type: .integer64, isOptional: false, defaultValue: Int64(0)),
                                                                    RelationshipDescription(name: "moods", destination: "Mood", inverse: "region", isToMany: true)]),
                    EntityDescription(name: "Mood", properties: [AttributeDescription(name: "colors", type: .string),
                                                                  RelationshipDescription(name: "region", destination: "Region", inverse: "moods")]),
                ])
                let store = try ScenarioStore.make(setup.folder, "denormalized-count", model: model) { context in
                    for r in 0..<regions {
                        let region = ManagedObject(entity: model.entity(named: "Region")!, insertInto: context)
                        try region.setValue("region \(r)", forKey: "name")
                        try region.setValue(Int64(moodsPerRegion), forKey: "numberOfMoods")
                        for m in 0..<moodsPerRegion {
                            let mood = ManagedObject(entity: model.entity(named: "Mood")!, insertInto: context)
                            try mood.setValue("mood \(r).\(m)", forKey: "colors")
                            try region.addObject(mood, toRelationship: "moods")
                        }
                    }
                }
                return [
                    .engine(relationship, model: model, store: store, operations: regions) { context in
                        Bench.sink(Int64(try context.fetch(FetchRequest<ManagedObject>(entityName: "Region")).reduce(0) { $0 + (($1.value(forKey: "moods") as? [ManagedObject])?.count ?? 0) }))
                    },
                    .engine(countRequest, model: model, store: store, operations: regions) { context in
                        var total = 0
                        for region in try context.fetch(FetchRequest<ManagedObject>(entityName: "Region")) {
                            total += try context.count(for: try Bench.request("Mood", "region == %@", region))
                        }
                        Bench.sink(Int64(total))
                    },
                    .engine(stored, model: model, store: store, operations: regions) { context in
                        Bench.sink(try context.fetch(FetchRequest<ManagedObject>(entityName: "Region")).reduce(0) { $0 + ($1.value(forKey: "numberOfMoods") as? Int64 ?? 0) })
                    },
                ]
            },
            judge: { m in
                guard let a = m.counters(relationship), let b = m.counters(countRequest), let c = m.counters(stored),
                      let ratio = m.ratio(stored, relationship), let regions = m[stored]?.operations else { return Verdict(held: nil, "not measured") }
                return Verdict(held: c.statements == 1 && a.statements == regions + 1 && ratio < 1,
                               "statements for \(regions) regions: the relationship \(a.statements) (\(a.rows) rows), a count request each \(b.statements), the stored count \(c.statements); the stored count takes \(BenchFormat.ratio(ratio)) the relationship's time")
            })
    }
}
