import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-CIDX, the book's own example: cities sorted capitals first, each group by population, under five index
    /// sets — and the price of the redundant pair on inserts.
    static var capitalsIndex: BenchScenario {
        let sets: [(name: String, single: Set<String>, compound: Bool)] = [
            ("no index", [], false), ("index on isCapital", ["isCapital"], false), ("index on population", ["population"], false),
            ("compound (isCapital, population)", [], true), ("compound + index on isCapital", ["isCapital"], true),
        ]
        let compound = sets[3].name, redundant = sets[4].name
        func read(_ set: String) -> String { "\(set): sorted read" }
        func insert(_ set: String) -> String { "\(set): insert" }
        return BenchScenario(
            id: "capitals-index", title: "Capitals first, then by population: five index sets, and what the redundant pair costs inserts",
            claim: "A compound index (isCapital, population) serves a sort on both, in its order; a plain index on isCapital helps only a little; a single isCapital index beside the compound one makes reads no faster (SQLite uses one index per fetch) and writes slower.",
            theme: .indexes, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests › Indexes", "P-34", "B-CIDX")],
            ratios: [RatioSpec(read(compound), over: read("no index")), RatioSpec(read(redundant), over: read(compound)),
                     RatioSpec(insert(redundant), over: insert(compound))],
            alternatesOrder: true,
            variants: { setup in
                let count = setup.scale.part(4, minimum: 1_000), inserts = setup.scale.part(20, minimum: 200)
                var variants: [BenchVariant] = []
                for (i, set) in sets.enumerated() {
                    let model = try ManagedObjectModel(entities: [EntityDescription(name: "City", properties: [
                        AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                        AttributeDescription(name: "population", type: .integer64, isOptional: false, defaultValue: Int64(0), isIndexed: set.single.contains("population")),
                        AttributeDescription(name: "isCapital", type: .boolean, isOptional: false, defaultValue: false, isIndexed: set.single.contains("isCapital")),
                    ], compoundIndexes: set.compound ? [["isCapital", "population"]] : [])])
                    let entity = model.entity(named: "City")!
                    func fill(_ context: ManagedObjectContext, _ n: Int, from start: Int) throws {
                        var random = SeededGenerator(seed: UInt64(9_001 + start))
                        for k in start..<(start + n) {
                            let city = ManagedObject(entity: entity, insertInto: context)
                            try city.setValue("city \(k)", forKey: "name")
                            try city.setValue(CityWorkload.population(&random), forKey: "population")
                            try city.setValue(k % 25 == 0, forKey: "isCapital")
                        }
                    }
                    let store = try ScenarioStore.make(setup.folder, "capitals-\(i)", model: model) { try fill($0, count, from: 0) }
                    variants.append(.engine(read(set.name), model: model, store: store, operations: 50) { context in
                        var found = 0
                        for _ in 0..<50 {
                            let request = FetchRequest<ManagedObject>(entityName: "City", sortDescriptors: [
                                FetchSortDescriptor(keyPath: "isCapital", ascending: false), FetchSortDescriptor(keyPath: "population", ascending: false)])
                            request.fetchLimit = 20
                            request.includesPropertyValues = false
                            found += try context.fetchObjectIDs(request).count
                        }
                        Bench.sink(Int64(found))
                    })
                    if set.compound {
                        let url = setup.folder.appendingPathComponent("capitals-\(i)-insert.sqlite")
                        variants.append(BenchVariant(insert(set.name), operations: inserts) { probes in
                            let context = try BenchStore.copiedContext(model, of: store, at: url, probes: probes)
                            return { try context.performAndWait { try fill(context, inserts, from: count); try context.save() } }
                        })
                    }
                }
                return variants
            },
            judge: { m in
                guard let best = m.median(read(compound)), let pair = m.median(read(redundant)), let none = m.median(read("no index")),
                      let capital = m.median(read("index on isCapital")), let population = m.median(read("index on population")),
                      let writes = m.ratio(insert(redundant), insert(compound)) else { return Verdict(held: nil, "not measured") }
                let others = [none, capital, population]
                func sorts(_ name: String) -> Bool {
                    (m[read(name)]?.queryPlans ?? [:]).contains { sql, details in sql.contains("ORDER BY") && details.contains { $0.contains("TEMP B-TREE") } }
                }
                let held = best <= others.min()! * 1.1 && pair >= best * 0.9 && writes > 1 && !sorts(compound)
                return Verdict(held: held,
                               "sorted reads against no index: isCapital index \(BenchFormat.ratio(capital / none)), population index \(BenchFormat.ratio(population / none)), compound \(BenchFormat.ratio(best / none)) (temp B-tree: \(sorts(compound) ? "yes" : "no")), compound + isCapital \(BenchFormat.ratio(pair / none)); inserts with the redundant pair take \(BenchFormat.ratio(writes)) the compound alone's time")
            })
    }
}
