import Faultline
import Foundation

/// A store made for one scenario: created afresh in the run's folder, filled by `fill` in one context, saved.
enum ScenarioStore {
    /// A variant run's store at `url`: a copy of `template`, or with none a new, empty store (an older file there
    /// removed), opened with `probes` and `pragmas`.
    static func open(_ url: URL, from template: URL? = nil, model: ManagedObjectModel, probes: Probes,
                     pragmas: [StorePragma] = []) throws -> PersistentStoreCoordinator {
        if let template { try DataSets.copy(template, to: url) } else { RowWorkload.removeStore(at: url) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: probes)
        try coordinator.addPersistentStore(type: .sqlite, at: url, pragmas: pragmas)
        return coordinator
    }

    static func make(_ folder: URL, _ name: String, model: ManagedObjectModel, _ fill: (ManagedObjectContext) throws -> Void) throws -> URL {
        let url = folder.appendingPathComponent(name + ".sqlite")
        let coordinator = try open(url, model: model, probes: .disabled)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            try fill(context)
            try context.save()
        }
        try coordinator.vacuum(.incremental(pages: 0))  // a checkpoint: the file holds every row
        return url
    }
}
