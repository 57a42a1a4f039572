import Faultline
import Foundation

/// Proves the index a scan or sort finding suggests: re-plans the finding's fetch against a store with the index
/// created on a scratch copy (`ManagedObjectContext.explain`), and replaces the suggestion with what was proven.
public struct IndexProver {
    let context: ManagedObjectContext
    let storePath: String

    /// Uses a coordinator that has the store open (read only).
    public init(coordinator: PersistentStoreCoordinator, store: URL) {
        context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        storePath = store.path
    }

    /// Opens the store (read only in effect: the index is tried on a copy).
    public init(model: ManagedObjectModel, store: URL) throws {
        guard FileManager.default.fileExists(atPath: store.path) else { throw ReportError("no store at \(store.path)") }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: store, options: .readOnly)
        context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        storePath = store.path
    }

    /// The coordinator of the store (for planning a log's statements).
    public var coordinator: PersistentStoreCoordinator { context.coordinator }

    /// The store's own redundant indexes (by their columns) and those none of `plans` used on the tables they read
    /// (`StoreIndexReview`); indexes `already` names are left to those findings. A store whose indexes cannot be
    /// read is an error (the report does not pass it over in silence).
    public func storeIndexFindings(plans: [String: [String]], already: [Finding]) throws -> [Finding] {
        StoreIndexReview.findings(try context.coordinator.storeIndexes(), plans: plans, store: URL(fileURLWithPath: storePath).lastPathComponent, already: already)
    }

    /// `findings` with each scan's and sort's suggested index proven: from a trace, by running its fetch again on a
    /// scratch copy, with and without the index, counting the rows it examines; from a Core Data log (`fromLog`), by
    /// planning its statement's SQL. A finding the store shows to be no problem — its table too small, or its scan
    /// returning most of what it reads — is dropped.
    public func prove(_ findings: [Finding], fromLog: Bool = false) -> [Finding] {
        let name = URL(fileURLWithPath: storePath).lastPathComponent
        return findings.compactMap { finding in
            guard finding.kind == .fullScan || finding.kind == .tempBTree else { return finding }
            let shape = finding.fetch
            guard fromLog ? finding.sql != nil : shape.map({ context.model.entity(named: $0.entity) != nil }) == true else { return finding }
            var proven = finding
            do {
                let explanation: FetchExplanation
                if fromLog, let sql = finding.sql {
                    explanation = try context.coordinator.explain(sql: sql)
                } else {
                    let shape = shape!
                    let predicate = try shape.predicate.map { try ObjectPredicate(parsing: $0) }
                    let sort = try shape.sort.map { try FetchSortDescriptor(parsing: $0) }
                    let request = FetchRequest<ManagedObject>(entityName: shape.entity, predicate: predicate, sortDescriptors: sort)
                    explanation = try context.performAndWait { try context.explain(request) }
                }
                if let suggestion = explanation.suggestions.first {
                    proven.fix = "\(suggestion.sql) — proven on a scratch copy of \(name): \(suggestion.reason); the plan becomes \(suggestion.planWithIndex.steps.map(\.detail).joined(separator: "; ")). Declare it in the model (Indexed, or a fetch index)."
                } else if let rows = explanation.tableRows, rows < FetchExplanation.smallTableRows {
                    return nil
                } else if let measured = explanation.measurement, finding.kind == .fullScan, measured.share >= FetchExplanation.unselectiveShare {
                    return nil
                } else if let measured = explanation.measurement, finding.kind == .tempBTree, measured.returned < FetchExplanation.sortedRows {
                    return nil
                } else if explanation.plan.fullScans.isEmpty && explanation.plan.entityWalks.isEmpty && !explanation.plan.sortsInTemporaryBTree {
                    proven.fix += " (on \(name) the plan is already clean: the store has the index)"
                } else {
                    proven.fix += " (not proven: no single index made it examine half as many rows on a scratch copy of \(name))"
                }
            } catch {
                proven.fix += " (not proven: \(error))"
            }
            return proven
        }
    }
}
