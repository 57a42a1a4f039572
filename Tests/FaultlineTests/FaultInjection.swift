import CFaultInjection
import CSQLite
import XCTest

/// Runs `body` with the fault-injecting VFS as the process's default SQLite VFS (connections opened inside use
/// it), and makes the real one the default again after.
func withFaultInjection<T>(_ body: () throws -> T) throws -> T {
    guard faultinjection_install() == SQLITE_OK else { throw XCTSkip("the fault-injecting VFS could not be installed") }
    defer {
        faultinjection_disarm()
        faultinjection_uninstall()
    }
    return try body()
}

/// What the fault-injecting VFS fails: the k-th write, sync or truncate (each kind alone, then all together).
struct InjectedFault: CustomStringConvertible {
    let kinds: Int32
    let code: Int32
    let k: Int
    var description: String {
        let all: [(Int32, String)] = [(InjectedFault.write, "write"), (InjectedFault.sync, "sync"), (InjectedFault.truncate, "truncate")]
        let names = all.filter { kinds & $0.0 != 0 }.map(\.1).joined(separator: "/")
        return "\(code == SQLITE_FULL ? "SQLITE_FULL" : "SQLITE_IOERR") on \(names) #\(k)"
    }

    static let write = Int32(FAULTINJECTION_WRITE), sync = Int32(FAULTINJECTION_SYNC), truncate = Int32(FAULTINJECTION_TRUNCATE)

    /// Every fault of each kind the operation `count` (run once without a fault) reaches: every k, not one.
    static func everyK(counting count: (Int32) throws -> Int) rethrows -> [InjectedFault] {
        var faults: [InjectedFault] = []
        let plan: [(Int32, Int32)] = [(write, SQLITE_IOERR | (3 << 8)), (write, SQLITE_FULL), (sync, SQLITE_IOERR | (4 << 8)), (truncate, SQLITE_IOERR | (6 << 8))]
        for (kinds, code) in plan {
            let n = try count(kinds)
            faults += (0..<n).map { InjectedFault(kinds: kinds, code: code, k: $0 + 1) }
        }
        return faults
    }

    /// Arms the VFS for this fault (a full disk stays full).
    func arm() { faultinjection_arm(kinds, k, code, code == SQLITE_FULL ? 1 : 0) }
}

/// Runs `body` once with the VFS only counting operations of `kinds`; returns how many it did.
func countingFaults(_ kinds: Int32, _ body: () throws -> Void) rethrows -> Int {
    faultinjection_arm(kinds, 0, SQLITE_OK, 0)
    try body()
    let n = faultinjection_count()
    faultinjection_disarm()
    return n
}
