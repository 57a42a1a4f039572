import Faultline
import Foundation

/// A store made for one scenario: created afresh in the run's folder, filled by `fill` in one context, saved.
enum ScenarioStore {
    static func make(_ folder: URL, _ name: String, model: ManagedObjectModel, _ fill: (ManagedObjectContext) throws -> Void) throws -> URL {
        let url = folder.appendingPathComponent(name + ".sqlite")
        RowWorkload.removeStore(at: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            try fill(context)
            try context.save()
        }
        try coordinator.vacuum(.incremental(pages: 0))  // a checkpoint: the file holds every row
        return url
    }
}
