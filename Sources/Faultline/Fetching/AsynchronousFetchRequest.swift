import Foundation

/// Core Data's `NSAsynchronousFetchRequest`: a fetch that `execute(_:)` starts and returns from at once; it runs on
/// the context's queue, then calls `completionBlock` there with its result. It can be cancelled until its rows are
/// handed over (`AsynchronousFetchResult.cancel()`, or its `progress`).
public final class AsynchronousFetchRequest<Result: FetchRequestResult>: PersistentStoreRequest {
    /// The fetch it runs (read when it starts).
    public let fetchRequest: FetchRequest<Result>
    /// Called on the context's queue when the fetch ends: with its objects, or cancelled or failed (`finalResult`
    /// nil, `operationError` says which).
    public let completionBlock: ((AsynchronousFetchResult<Result>) -> Void)?
    /// The rows expected, for `progress` (Core Data's `estimatedResultCount`); 0: unknown.
    public var estimatedResultCount = 0

    /// Core Data's `init(fetchRequest:completionBlock:)`.
    public init(fetchRequest: FetchRequest<Result>, completionBlock: ((AsynchronousFetchResult<Result>) -> Void)?) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
    }
}

/// Core Data's `NSAsynchronousFetchResult`: returned at once by `execute(_:)`; filled when the fetch ends.
public final class AsynchronousFetchResult<Result: FetchRequestResult>: PersistentStoreResult {
    /// The request it answers.
    public let fetchRequest: AsynchronousFetchRequest<Result>
    /// The context that runs it.
    public private(set) weak var managedObjectContext: ManagedObjectContext?
    /// Its progress: one unit per row expected (or one), complete when the rows are handed over; cancelling it
    /// cancels the fetch.
    public let progress: Progress?
    private let lock = NSLock()
    private var cancelled = false
    private var result: [Result]?
    private var error: (any Error)?

    init(request: AsynchronousFetchRequest<Result>, context: ManagedObjectContext) {
        fetchRequest = request
        managedObjectContext = context
        progress = Progress(totalUnitCount: Int64(max(1, request.estimatedResultCount)))
        super.init()
        progress?.cancellationHandler = { [weak self] in self?.cancel() }
    }

    /// The objects fetched; nil until the fetch ends, and after a cancellation or a failure.
    public var finalResult: [Result]? { lock.withLock { result } }
    /// Why the fetch has no result: `CocoaError(.userCancelled)` once cancelled, else the fetch's error.
    public var operationError: (any Error)? { lock.withLock { error } }

    /// Cancels the fetch (Core Data's `cancel()`): one not yet run does not run; one that ran keeps no result.
    /// Either way the completion block is called with no result.
    public func cancel() {
        lock.withLock { cancelled = true }
    }

    var isCancelled: Bool { lock.withLock { cancelled } || progress?.isCancelled == true }

    func finish(_ outcome: Swift.Result<[Result], any Error>) {
        let cancelled = isCancelled
        lock.withLock {
            if cancelled {
                error = CocoaError(.userCancelled)
            } else {
                switch outcome {
                case .success(let rows): result = rows
                case .failure(let failure): error = failure
                }
            }
        }
        if let progress, finalResult != nil { progress.completedUnitCount = progress.totalUnitCount }
    }
}

extension ManagedObjectContext {
    /// Starts an asynchronous fetch (Core Data's `execute(_:)` with an `NSAsynchronousFetchRequest`): returns at
    /// once; the fetch runs on this context's queue and its completion block is called there.
    @discardableResult
    public func execute<Result: FetchRequestResult>(_ request: AsynchronousFetchRequest<Result>) throws -> AsynchronousFetchResult<Result> {
        let result = AsynchronousFetchResult(request: request, context: self)
        let fetch = request.fetchRequest.copy()
        perform { [self] in
            if result.isCancelled {
                result.finish(.success([]))
            } else {
                result.finish(Swift.Result { try self.fetchTyped(fetch) })
            }
            request.completionBlock?(result)
        }
        return result
    }

    /// A fetch of any result type, by the request's `resultType`, typed as the request's results.
    private func fetchTyped<Result: FetchRequestResult>(_ request: FetchRequest<Result>) throws -> [Result] {
        let rows = try fetch(FetchRequest<any FetchRequestResult>(spec: request.spec))
        var typed: [Result] = []
        typed.reserveCapacity(rows.count)
        for row in rows {
            guard let value = row as? Result else {
                throw FetchError.resultTypeMismatch(entity: request.entityName, expected: "\(Result.self)", actual: "\(type(of: row))", unresolvedClassName: nil)
            }
            typed.append(value)
        }
        return typed
    }
}
