import Instrumentation

extension ManagedObjectContext {
    /// When `perform(schedule:_:)` runs its body (Core Data's `NSManagedObjectContext.ScheduledTaskType`).
    public enum ScheduledTaskType: Sendable {
        /// At once, in place, when the caller is already on the context's queue (a main-queue context awaited from
        /// the main actor); otherwise queued.
        case immediate
        /// Always after the work already queued on the context.
        case enqueued
    }

    /// Runs `body` on the context's queue and returns its value to the awaiting task (Core Data's
    /// `perform(schedule:_:)`). Pending changes are processed when the body returns, as `perform(_:)` does.
    ///
    /// The body is `@Sendable` and its value `Sendable`: objects stay on their context's queue; pass
    /// `ManagedObjectID`s, or values read from the objects, between tasks.
    ///
    /// ```swift
    /// let names = try await context.perform {
    ///     try context.fetch(FetchRequest<ManagedObject>(entityName: "Department")).map { $0.value(forKey: "name") as? String }
    /// }
    /// ```
    public func perform<T: Sendable, Failure: Error>(schedule: ScheduledTaskType = .immediate,
                                                     _ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        if schedule == .immediate && isOnQueue {
            defer { processPendingChanges() }
            return try body()
        }
        let service = tracedServiceContext
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            enqueue {
                // The caller's service context, so that spans started on the queue join the caller's trace.
                let result = service.map { service in ServiceContext.withValue(service) { Result(catching: body) } } ?? Result(catching: body)
                self.processPendingChanges()
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }
}
