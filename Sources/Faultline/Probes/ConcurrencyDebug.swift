import Foundation

/// Concurrency debugging (`FAULTLINE_CONCURRENCYDEBUG=1`, `-com.apple.CoreData.ConcurrencyDebug 1`): using a context
/// or one of its objects off the context's queue stops the program with a message naming the context, the object
/// and the queue. Off, it costs one branch per access.
extension ManagedObjectContext {
    /// The message for a use of `object` (or the context itself) from the current thread, or nil when the use is
    /// on the context's queue.
    public func concurrencyViolation(touching object: ManagedObject? = nil) -> String? {
        guard !isOnQueue else { return nil }
        let queue = concurrencyType == .mainQueue ? "the main queue" : "its private queue"
        let what = object.map { "\($0.entity.name) \($0.objectID.uriString)" } ?? "the context"
        let thread = Thread.isMainThread ? "the main thread" : "thread \(Unmanaged.passUnretained(Thread.current).toOpaque())"
        return "Faultline: concurrency violation: \(what) of context \(Unmanaged.passUnretained(self).toOpaque()) (\(concurrencyType == .mainQueue ? "main-queue" : "private-queue")) used on \(thread), outside \(queue); use perform or performAndWait"
    }

    @inline(never)
    func checkQueue(touching object: ManagedObject?) {
        if let message = concurrencyViolation(touching: object) {
            fatalError(message)
        }
    }
}
