//
//  EntryImporter.swift
//  Journal
//
//  A background import as Core Data apps write it: a batch insert on a private context, then the inserted IDs
//  merged into the view context.
//

import Foundation
import Faultline

enum JournalError: Error {
    case batchInsertError
}

struct EntryProperties {
    let identifier: UUID
    let title: String
    let body: String?
    let mood: Int16?
    let createdAt: Date

    var dictionaryValue: [String: Any] {
        var values: [String: Any] = ["identifier": identifier, "title": title, "createdAt": createdAt]
        if let body { values["body"] = body }
        if let mood { values["mood"] = mood }
        return values
    }
}

final class EntryImporter {
    let persistentContainer: PersistentContainer

    init(persistentContainer: PersistentContainer) {
        self.persistentContainer = persistentContainer
    }

    /// Inserts the entries with one batch insert request fed by a handler, and merges the new objects into the
    /// view context.
    func importEntries(_ entries: [EntryProperties]) throws {
        let taskContext = persistentContainer.newBackgroundContext()
        taskContext.name = "importContext"
        taskContext.transactionAuthor = "importEntries"

        try taskContext.performAndWait {
            let batchInsertRequest = newBatchInsertRequest(with: entries)
            batchInsertRequest.resultType = .objectIDs
            let fetchResult = try taskContext.execute(batchInsertRequest)
            if let batchInsertResult = fetchResult as? BatchInsertResult,
               let objectIDs = batchInsertResult.result as? [ManagedObjectID], !objectIDs.isEmpty {
                let changes: [AnyHashable: Any] = [InsertedObjectIDsKey: objectIDs]
                ManagedObjectContext.mergeChanges(fromRemoteContextSave: changes, into: [persistentContainer.viewContext])
                return
            }
            throw JournalError.batchInsertError
        }
    }

    private func newBatchInsertRequest(with entries: [EntryProperties]) -> BatchInsertRequest {
        var index = 0
        let total = entries.count
        let batchInsertRequest = BatchInsertRequest(entity: Entry.entity(), dictionaryHandler: { dictionary in
            guard index < total else { return true }
            dictionary.addEntries(from: entries[index].dictionaryValue)
            index += 1
            return false
        })
        return batchInsertRequest
    }

    /// The same with a managed-object handler: each row an Entry to fill.
    func importEntriesAsObjects(_ entries: [EntryProperties]) throws -> Int {
        let taskContext = persistentContainer.newBackgroundContext()
        return try taskContext.performAndWait {
            var index = 0
            let request = BatchInsertRequest(entityName: "Entry", managedObjectHandler: { object in
                guard index < entries.count else { return true }
                let entry = object as! Entry
                entry.identifier = entries[index].identifier
                entry.title = entries[index].title
                entry.body = entries[index].body
                entry.mood = entries[index].mood.map { NSNumber(value: $0) }
                entry.createdAt = entries[index].createdAt
                index += 1
                return false
            })
            request.resultType = .count
            let result = try taskContext.execute(request) as? BatchInsertResult
            return result?.result as? Int ?? 0
        }
    }
}
