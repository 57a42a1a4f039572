import Foundation
import Synchronization

/// Counts the file-system steps of a store operation (copying an external value, removing a file), so that tests
/// fail the k-th one and prove each step's failure leaves the files whole. SQLite's own writes are failed by a VFS in
/// the tests instead.
struct StoreFileSteps {
    /// The step that fails (1-based) in operations begun from now on, and what it failed with; nil: none (tests).
    static let injectedFailure = Mutex<Int?>(nil)
    /// Steps taken by the last operation (tests: how many k to try).
    static let lastCount = Mutex(0)

    private var taken = 0
    private let failing: Int?

    init() { failing = Self.injectedFailure.withLock { $0 } }

    /// Takes a step (`body`), failing it instead when it is the injected one.
    mutating func run<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        taken += 1
        let count = taken
        Self.lastCount.withLock { $0 = count }
        if count == failing {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "injected failure of step \(count) (\(what()))"])
        }
        return try body()
    }
}
