//
//  ManagedObject+Fetching.swift
//  Journal
//
//  Repository helpers on FetchRequestResult, as Core Data apps write them.
//

import Foundation
import Faultline

extension FetchRequestResult where Self: ManagedObject {
    static var entityName: String {
        return entity().name ?? String(describing: self)
    }

    static func fetchRequest(predicate: ObjectPredicate? = nil, sortedBy key: String? = nil, ascending: Bool = true) -> FetchRequest<Self> {
        let request = FetchRequest<Self>(entityName: entityName)
        request.predicate = predicate
        if let key {
            request.sortDescriptors = [FetchSortDescriptor(key: key, ascending: ascending)]
        }
        return request
    }

    static func fetch(in context: ManagedObjectContext, configure: (FetchRequest<Self>) -> Void = { _ in }) throws -> [Self] {
        let request = FetchRequest<Self>(entityName: entityName)
        configure(request)
        return try context.fetch(request)
    }

    static func first(in context: ManagedObjectContext, where predicate: ObjectPredicate) throws -> Self? {
        let request = FetchRequest<Self>(entityName: entityName)
        request.predicate = predicate
        request.fetchLimit = 1
        return try context.fetch(request).first
    }

    static func count(in context: ManagedObjectContext, where predicate: ObjectPredicate? = nil) throws -> Int {
        let request = FetchRequest<Self>(entityName: entityName)
        request.predicate = predicate
        return try context.count(for: request)
    }

    static func findOrCreate(in context: ManagedObjectContext, matching predicate: ObjectPredicate, configure: (Self) -> Void) throws -> Self {
        if let existing = try first(in: context, where: predicate) {
            return existing
        }
        let object = Self(context: context)
        configure(object)
        return object
    }

    static func objectIDs(in context: ManagedObjectContext, where predicate: ObjectPredicate? = nil) throws -> [ManagedObjectID] {
        let request = FetchRequest<ManagedObjectID>(entityName: entityName)
        request.predicate = predicate
        request.resultType = .managedObjectIDResultType
        return try context.fetch(request)
    }

    static func deleteAll(in context: ManagedObjectContext) throws {
        let request = FetchRequest<FetchRequestResult>(entityName: entityName)
        let delete = BatchDeleteRequest(fetchRequest: request)
        delete.resultType = .resultTypeObjectIDs
        let result = try context.execute(delete) as? BatchDeleteResult
        let deleted = result?.result as? [ManagedObjectID] ?? []
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [DeletedObjectsKey: deleted], into: [context])
    }
}
