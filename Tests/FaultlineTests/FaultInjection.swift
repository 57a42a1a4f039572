import CFaultInjection
import CSQLite
import XCTest
@testable import Faultline

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

/// Every table's rows as SQLite holds them (but the tables in `excluding`), after the integrity check's answer.
func storeRows(of url: URL, excluding: Set<String> = []) throws -> [String] {
    let connection = try SQLiteConnection(path: url.path, create: false)
    let check = try connection.prepare("PRAGMA integrity_check")
    _ = try check.step()
    var lines = ["integrity " + check.text(at: 0)]
    let tables = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    var names: [String] = []
    while try tables.step() { names.append(tables.text(at: 0)) }
    for name in names where !excluding.contains(name) {
        let select = try connection.prepare("SELECT * FROM \(name) ORDER BY 1")
        while try select.step() {
            lines.append(name + ": " + (0..<select.columnCount).map { "\(select.slot(at: $0))" }.joined(separator: "|"))
        }
    }
    return lines
}

/// The k tried of `n` faults: every k with `FAULTLINE_FAULTS=all` (`make test-faults`), else every third and the last.
func faultSample(_ n: Int) -> [Int] {
    guard n > 0 else { return [] }
    if ProcessInfo.processInfo.environment["FAULTLINE_FAULTS"] == "all" { return Array(1...n) }
    return Array(Set(stride(from: 1, through: n, by: 3)).union([n])).sorted()
}
