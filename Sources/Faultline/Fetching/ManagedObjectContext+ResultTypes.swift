import Foundation

/// One `fetch(_:)` for every result type, as Core Data's: a request's `Result` (or, for
/// `FetchRequest<FetchRequestResult>`, its `resultType`) says whether objects, IDs, dictionaries or a count come back.
extension ManagedObjectContext {
    /// The object IDs the request selects (Core Data's `.managedObjectIDResultType`).
    public func fetch(_ request: FetchRequest<ManagedObjectID>, file: StaticString = #fileID, line: UInt = #line) throws -> [ManagedObjectID] {
        try fetchObjectIDs(request, file: file, line: line)
    }

    /// The request's rows as dictionaries of its `propertiesToFetch` (Core Data's `.dictionaryResultType`).
    public func fetch(_ request: FetchRequest<NSDictionary>, file: StaticString = #fileID, line: UInt = #line) throws -> [NSDictionary] {
        try fetchDictionaries(request, file: file, line: line).map { NSDictionary(dictionary: $0) }
    }

    /// One number: how many objects the request selects (Core Data's `.countResultType`).
    public func fetch(_ request: FetchRequest<NSNumber>, file: StaticString = #fileID, line: UInt = #line) throws -> [NSNumber] {
        [NSNumber(value: try count(for: request, file: file, line: line))]
    }

    /// Core Data's untyped request: objects, IDs, dictionaries or a count, as its `resultType` says.
    public func fetch(_ request: FetchRequest<any FetchRequestResult>, file: StaticString = #fileID, line: UInt = #line) throws -> [any FetchRequestResult] {
        let spec = request.spec
        switch request.resultType {
        case .managedObjectResultType: return try fetch(FetchRequest<ManagedObject>(spec: spec), file: file, line: line)
        case .managedObjectIDResultType: return try fetch(FetchRequest<ManagedObjectID>(spec: spec), file: file, line: line)
        case .dictionaryResultType: return try fetch(FetchRequest<NSDictionary>(spec: spec), file: file, line: line)
        case .countResultType: return try fetch(FetchRequest<NSNumber>(spec: spec), file: file, line: line)
        }
    }
}
