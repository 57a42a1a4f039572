//
//  PersistenceController.swift
//  Journal
//
//  The Core Data stack as apps write it: a container by name, a description with Core Data's option keys, an
//  in-memory variant at /dev/null for tests, a view context that merges background saves.
//

import Foundation
import Faultline

final class PersistenceController {
    static let modelName = "Journal"

    let container: PersistentContainer

    var viewContext: ManagedObjectContext { container.viewContext }

    init(storeURL: URL? = nil, inMemory: Bool = false) {
        container = PersistentContainer(name: Self.modelName)

        let description = container.persistentStoreDescriptions.first ?? PersistentStoreDescription()
        if inMemory {
            description.url = URL(fileURLWithPath: "/dev/null")
        } else if let storeURL {
            description.url = storeURL
        }
        description.type = SQLiteStoreType
        description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
        description.setOption(true as NSNumber, forKey: PersistentStoreRemoteChangeNotificationPostOptionKey)
        description.setOption(["journal_mode": "WAL"] as NSDictionary, forKey: SQLitePragmasOption)
        description.shouldMigrateStoreAutomatically = true
        description.shouldInferMappingModelAutomatically = true
        container.persistentStoreDescriptions = [description]

        container.loadPersistentStores { storeDescription, error in
            if let error = error as NSError? {
                fatalError("Unresolved error \(error), \(error.userInfo)")
            }
        }

        container.viewContext.automaticallyMergesChangesFromParent = true
        container.viewContext.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
        container.viewContext.name = "viewContext"
    }

    func newBackgroundContext() -> ManagedObjectContext {
        let context = container.newBackgroundContext()
        context.mergePolicy = MergeByPropertyObjectTrumpMergePolicy
        context.transactionAuthor = "importer"
        return context
    }

    func saveContext() {
        let context = container.viewContext
        if context.hasChanges {
            do {
                try context.save()
            } catch {
                let nserror = error as NSError
                fatalError("Unresolved error \(nserror), \(nserror.userInfo)")
            }
        }
    }

    /// A test stack on a context made the old way: a coordinator, a store added with an options dictionary, and a
    /// context given the coordinator after it was made.
    static func legacyStack(at url: URL) throws -> ManagedObjectContext {
        guard let modelURL = Bundle.module.url(forResource: modelName, withExtension: "xcdatamodeld"),
              let model = ManagedObjectModel(contentsOf: modelURL) else {
            fatalError("Failed to find data model")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let options: [AnyHashable: Any] = [
            MigratePersistentStoresAutomaticallyOption: true,
            InferMappingModelAutomaticallyOption: true,
            SQLitePragmasOption: ["journal_mode": "DELETE"],
        ]
        try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: url, options: options)
        let context = ManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }
}
