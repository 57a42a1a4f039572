//
//  StoreMigrationHelper.swift
//  Journal
//
//  Store file helpers as migration and backup code writes them: destroy, replace, move, and forcing a WAL
//  checkpoint before a store's file is handled alone.
//

import Foundation
import Faultline

extension PersistentStoreCoordinator {
    static func destroyStore(at storeURL: URL) throws {
        let persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        try persistentStoreCoordinator.destroyPersistentStore(at: storeURL, ofType: SQLiteStoreType, options: nil)
    }

    static func replaceStore(at targetURL: URL, withStoreAt sourceURL: URL) throws {
        let persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel())
        try persistentStoreCoordinator.replacePersistentStore(at: targetURL, destinationOptions: nil,
                                                              withPersistentStoreFrom: sourceURL, sourceOptions: nil,
                                                              ofType: SQLiteStoreType)
    }

    static func metadata(at storeURL: URL) -> [String: Any]? {
        return try? PersistentStoreCoordinator.metadataForPersistentStore(ofType: SQLiteStoreType, at: storeURL, options: nil)
    }
}

enum StoreMigrationHelper {
    /// Folds the write-ahead log into the store file: open it in rollback-journal mode and close it again.
    static func forceWALCheckpointingForStore(at storeURL: URL, model: ManagedObjectModel) throws {
        guard PersistentStoreCoordinator.metadata(at: storeURL) != nil else { return }
        let persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let options = [SQLitePragmasOption: ["journal_mode": "DELETE"]]
        let store = try persistentStoreCoordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: storeURL, options: options)
        try persistentStoreCoordinator.remove(store)
    }

    /// Copies the container's store to `backupURL`.
    static func backup(_ container: PersistentContainer, to backupURL: URL) throws {
        let coordinator = container.persistentStoreCoordinator
        guard let storeURL = coordinator.persistentStores.first?.url else { return }
        let backupCoordinator = PersistentStoreCoordinator(managedObjectModel: container.managedObjectModel)
        try backupCoordinator.replacePersistentStore(at: backupURL, destinationOptions: nil, withPersistentStoreFrom: storeURL,
                                                     sourceOptions: nil, ofType: SQLiteStoreType)
    }

    /// Puts the store at `backupURL` back in place of the container's, and adds it again.
    static func restore(_ container: PersistentContainer, from backupURL: URL) throws {
        let coordinator = container.persistentStoreCoordinator
        for store in coordinator.persistentStores {
            guard let storeURL = store.url else { continue }
            try coordinator.remove(store)
            try coordinator.replacePersistentStore(at: storeURL, destinationOptions: nil, withPersistentStoreFrom: backupURL,
                                                   sourceOptions: nil, ofType: SQLiteStoreType)
            try coordinator.addPersistentStore(ofType: SQLiteStoreType, configurationName: nil, at: storeURL, options: store.options)
        }
        container.viewContext.reset()
    }

    /// Moves the container's store to `newURL` (an app moving its store into an app group) and destroys the old one.
    static func moveStore(of container: PersistentContainer, to newURL: URL) throws {
        let coordinator = container.persistentStoreCoordinator
        guard let store = coordinator.persistentStores.first, let oldURL = store.url else { return }
        _ = try coordinator.migratePersistentStore(store, to: newURL, options: nil, withType: SQLiteStoreType)
        try coordinator.destroyPersistentStore(at: oldURL, ofType: SQLiteStoreType, options: nil)
    }
}
