import Faultline
import Foundation

/// `faultline bench --model PATH`: generic access patterns on synthetic data for a user's model — fetch all of each
/// entity, fetch by each indexed attribute, traverse each relationship with and without prefetching, insert and
/// save a batch. With `--store`, the same patterns run on a scratch copy of a real store's data instead (the model
/// version that fits the store, or the model the store caches); the store itself is not opened.
public struct UserModelSuite {
    /// The model's path, or the store's when the model is the one it caches.
    public let path: String
    public let model: ManagedObjectModel
    /// The real store whose data the scenarios use, if any.
    public let storePath: String?

    public init(path: String?, store: String? = nil) throws {
        guard let name = path ?? store else { throw BenchError("give a model, a store, or both") }
        self.path = name
        storePath = store
        guard let store else {
            model = try ManagedObjectModel(loadingContentsOf: URL(fileURLWithPath: name))
            return
        }
        let storeURL = URL(fileURLWithPath: store)
        guard FileManager.default.fileExists(atPath: store) else { throw BenchError("no store at '\(store)'") }
        if let path {
            let url = URL(fileURLWithPath: path)
            if ["xcdatamodeld", "momd"].contains(url.pathExtension) {
                model = try PersistentStoreCoordinator.open(storeURL, withVersionOf: url, options: .readOnly).coordinator.managedObjectModel
            } else {
                model = try ManagedObjectModel(loadingContentsOf: url)
            }
        } else {
            guard let cached = try ManagedObjectModel.cachedInStore(at: storeURL) else {
                throw BenchError("'\(store)' carries no model: its Z_MODELCACHE is absent or empty; give --model")
            }
            model = cached
        }
    }

    /// The run's store: a scratch copy of the real store (with its `-wal`), or synthetic data for the model.
    private func store(_ setup: ScenarioSetup) throws -> URL {
        try setup.data.store("model") { url in
            if let storePath {
                for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: storePath + suffix) {
                    try FileManager.default.copyItem(atPath: storePath + suffix, toPath: url.path + suffix)
                }
            } else {
                try SyntheticData(model: model).generate(count: setup.scale.rows, into: url)
            }
        }
    }

    private var concrete: [EntityDescription] { SyntheticData(model: model).concreteEntities }

    public func scenarios() throws -> [BenchScenario] {
        let model = self.model
        let entities = concrete
        let store = self.store
        let name = URL(fileURLWithPath: storePath ?? path).lastPathComponent
        var scenarios: [BenchScenario] = []

        scenarios.append(BenchScenario(
            id: "model-fetch-all", title: "Fetch every object of each entity (\(name))",
            claim: "Fetching an entity's objects fully materialized costs one statement per fetch.",
            theme: .yourModel, sources: [ClaimSource(.faultline, "your model", "a fetch of every object")], variants: { setup in
                let url = try store(setup)
                return entities.map { entity in
                    .engine("fetch all \(entity.name)", model: model, store: url) { context in
                        let request = FetchRequest<ManagedObject>(entityName: entity.name)
                        request.returnsObjectsAsFaults = false
                        request.includesSubentities = false
                        Bench.sink(Int64(try context.fetch(request).count))
                    }
                }
            }, judge: { m in
                let extra = m.results.filter { ($0.counters?.statements ?? 0) > 1 }.map(\.name)
                return Verdict(held: extra.isEmpty, extra.isEmpty ? "one statement per fetch" : "more than one statement: \(extra.joined(separator: ", "))")
            }))

        let indexed = entities.flatMap { entity in
            entity.attributes.filter { $0.isIndexed && !$0.isTransient && $0.type != .transformable && $0.type != .binary }.map { (entity, $0) }
        }
        scenarios.append(BenchScenario(
            id: "model-fetch-indexed", title: "Fetch by each indexed attribute (\(name))",
            claim: "A fetch by an indexed attribute searches its index instead of scanning the table.",
            theme: .yourModel, sources: [ClaimSource.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-12", "P-13", "P-14")],
            skipReason: indexed.isEmpty ? "the model has no indexed attributes" : nil,
            variants: { setup in
                let url = try store(setup)
                let sample = try BenchStore.coldContext(model, at: url, probes: .disabled)
                return try indexed.map { entity, attribute in
                    // Values that exist: those of the first objects.
                    let values: [Any] = try sample.performAndWait {
                        let request = FetchRequest<ManagedObject>(entityName: entity.name)
                        request.fetchLimit = 20
                        request.returnsObjectsAsFaults = false
                        return try sample.fetch(request).compactMap { $0.value(for: attribute) }
                    }
                    return .engine("\(entity.name).\(attribute.name)", model: model, store: url, operations: max(1, values.count)) { context in
                        var found = 0
                        for value in values { found += try context.fetchObjectIDs(try Bench.request(entity.name, "%K == %@", attribute.name, value)).count }
                        Bench.sink(Int64(found))
                    }
                }
            }, judge: { m in
                let scans = m.results.filter { ($0.counters?.fullScanStatements ?? 0) > 0 }.map(\.name)
                return Verdict(held: scans.isEmpty, scans.isEmpty ? "every indexed fetch used its index" : "full scans: \(scans.joined(separator: ", "))")
            }))

        let relationships = entities.flatMap { entity in entity.relationships.filter { !$0.isTransient }.map { (entity, $0) } }
        scenarios.append(BenchScenario(
            id: "model-traverse", title: "Traverse each relationship, with and without prefetching (\(name))",
            claim: "Touching a relationship of every fetched object fires one fault per object; prefetching the key path needs a constant number of statements.",
            theme: .yourModel, sources: [ClaimSource.objcio("Performance", "Optimizing Fetch Requests", "P-32")],
            skipReason: relationships.isEmpty ? "the model has no relationships" : nil,
            variants: { setup in
                let url = try store(setup)
                return relationships.flatMap { entity, relationship in
                    [false, true].map { prefetching in
                        BenchVariant.engine("\(entity.name).\(relationship.name)\(prefetching ? ", prefetched" : "")", model: model, store: url) { context in
                            let request = FetchRequest<ManagedObject>(entityName: entity.name)
                            request.returnsObjectsAsFaults = false
                            request.includesSubentities = false
                            if prefetching { request.relationshipKeyPathsForPrefetching = [relationship.name] }
                            var touched = 0
                            for object in try context.fetch(request) {
                                if relationship.isToMany {
                                    for member in object.objects(forRelationship: relationship.name) { touched += member.isFault ? 0 : 1; _ = member.entity.attributes.first.map(member.value(for:)) }
                                } else if let destination = object.value(for: relationship) as? ManagedObject {
                                    _ = destination.entity.attributes.first.map(destination.value(for:))
                                    touched += 1
                                }
                            }
                            Bench.sink(Int64(touched))
                        }
                    }
                }
            }, judge: { m in
                let heavy = m.results.filter { $0.name.hasSuffix(", prefetched") && ($0.counters?.statements ?? 0) > 4 }.map(\.name)
                return Verdict(held: heavy.isEmpty, heavy.isEmpty ? "every prefetched traversal took at most 4 statements" : "prefetching still took more than 4 statements: \(heavy.joined(separator: ", "))")
            }))

        scenarios.append(BenchScenario(
            id: "model-insert", title: "Insert and save a batch of each entity (\(name))",
            claim: "Inserting a batch and saving it once writes it in one transaction.",
            theme: .yourModel, sources: [ClaimSource.objcio("Performance", "Inserting and Changing Objects", "P-35")], variants: { setup in
                let template = try store(setup)
                let batch = max(1, SyntheticData(model: model).perEntity(setup.scale.rows) / 10)
                return entities.map { entity in
                    let copy = setup.folder.appendingPathComponent("insert-\(entity.name).sqlite")
                    return BenchVariant("insert \(entity.name)", operations: batch) { probes in
                        let context = try BenchStore.copiedContext(model, of: template, at: copy, probes: probes)
                        let data = SyntheticData(model: model)
                        // Up to 200 stored objects of each entity (untimed) are the new objects' possible destinations.
                        var builder = SyntheticData.GraphBuilder(data: data, context: context)
                        builder.serialBase = 1_000_000
                        try context.performAndWait {
                            for other in entities {
                                let request = FetchRequest<ManagedObject>(entityName: other.name)
                                request.includesSubentities = false
                                request.returnsObjectsAsFaults = false
                                request.fetchLimit = 200
                                builder.adopt(try context.fetch(request))
                            }
                        }
                        return {
                            try context.performAndWait {
                                var random = SeededGenerator(seed: 7)
                                let start = builder.made.count
                                for _ in 0..<batch { builder.make(entity, random: &random) }
                                data.linkAll(from: start, builder: &builder, random: &random)
                                try context.save()
                            }
                        }
                    }
                }
            }, judge: { m in
                let many = m.results.filter { ($0.counters?.saves ?? 0) != 1 }.map(\.name)
                return Verdict(held: many.isEmpty, many.isEmpty ? "one save per batch" : "not one save: \(many.joined(separator: ", "))")
            }))
        return scenarios
    }
}
