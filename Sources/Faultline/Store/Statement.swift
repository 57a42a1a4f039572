import CSQLite
import Foundation

let SQLITE_TRANSIENT_DESTRUCTOR = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared SQLite statement. Values are only ever bound, never spliced into SQL text.
///
/// Not thread-safe: a statement belongs to its connection, which the coordinator serializes.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    unowned(unsafe) let connection: SQLiteConnection
    /// The connection's probe when the statement was prepared (probes never change afterwards). Unmanaged: the
    /// connection owns both, and the probe is not retained on every run.
    private let probe: Unmanaged<ConnectionProbe>?
    /// True when the probes want bound values (fixed when prepared, as the probes are).
    private let recordsBindings: Bool
    /// True when each step is timed (`ProbeConfiguration.splitsFetchTime`; fixed when prepared).
    private let timesSteps: Bool
    /// How many parameters the SQL has.
    let parameterCount: Int
    // Probe state of the current run: its start (0 = not running or probes off), rows, bound values. Touched
    // only by the connection's serialized work, so exclusivity is not checked at run time (a check costs more
    // than the update).
    @exclusivity(unchecked) private var probeStart: UInt64 = 0
    @exclusivity(unchecked) private var probeRows = 0
    /// Nanoseconds of the current run spent inside `sqlite3_step` (SQLite's own work, not the caller's per row).
    @exclusivity(unchecked) private var probeStepNanoseconds: UInt64 = 0
    @exclusivity(unchecked) private var probeBindings: [String] = []
    /// The bound values recorded for the current run: empty unless bind values are wanted.
    var recordedBindings: [String] { probeBindings.isEmpty ? [] : probeBindings }
    /// True once the probe captured this statement's query plan (statements are cached per SQL text, so this is
    /// once per distinct SQL without hashing the text on every run).
    @exclusivity(unchecked) var planCaptured = false

    init(connection: SQLiteConnection, sql: String) throws {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw SQLiteError(connection: connection.handle, code: rc, sql: sql)
        }
        self.handle = stmt
        self.sql = sql
        self.connection = connection
        self.probe = connection.probe.map(Unmanaged.passUnretained)
        recordsBindings = connection.probe?.probes.wantsBindValues ?? false
        timesSteps = connection.probe?.splitsFetchTime ?? false
        parameterCount = Int(sqlite3_bind_parameter_count(stmt))
    }

    deinit { sqlite3_finalize(handle) }

    // MARK: Binding (1-based indexes, as SQLite's)

    @inline(__always) func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
        if recordsBindings { noteBinding(.integer(value), at: index) }
    }

    @inline(__always) func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(handle, index, value)
        if recordsBindings { noteBinding(.real(value), at: index) }
    }

    @inline(__always) func bindNull(at index: Int32) {
        sqlite3_bind_null(handle, index)
        if recordsBindings { noteBinding(.null, at: index) }
    }

    @inline(never)
    private func noteBinding(_ value: Slot, at index: Int32) {
        let position = Int(index) - 1
        if probeBindings.count <= position { probeBindings.append(contentsOf: repeatElement("nil", count: position - probeBindings.count + 1)) }
        probeBindings[position] = ConnectionProbe.literal(value)
    }

    func bind(_ value: String, at index: Int32) {
        if recordsBindings { noteBinding(.text(value), at: index) }
        var value = value
        value.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                _ = sqlite3_bind_text(handle, index, chars.baseAddress, Int32(chars.count), SQLITE_TRANSIENT_DESTRUCTOR)
            }
        }
    }

    func bind(_ value: Data, at index: Int32) {
        if recordsBindings { noteBinding(.blob(value), at: index) }
        value.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress {
                _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), SQLITE_TRANSIENT_DESTRUCTOR)
            } else {
                _ = sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
    }

    /// Binds a stored value.
    @inline(__always) func bind(_ value: Slot, at index: Int32) {
        switch value {
        case .null: bindNull(at: index)
        case .integer(let v): bind(v, at: index)
        case .real(let v): bind(v, at: index)
        case .text(let v): bind(v, at: index)
        case .blob(let v): bind(v, at: index)
        case .object(let o): o.primaryKeyForStorage.map { bind($0, at: index) } ?? bindNull(at: index)
        case .many: bindNull(at: index)
        }
    }

    // MARK: Stepping

    /// Steps once; returns true when a row is available.
    @inline(__always) func step() throws -> Bool {
        let rc = probe != nil ? probedStep() : sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw SQLiteError(connection: connection.handle, code: rc, sql: sql)
    }

    /// Runs the statement to completion, discarding rows.
    func execute() throws {
        defer { reset() }
        while try step() {}
    }

    @inline(__always) func reset() {
        if probeStart != 0 { finishProbe() }
        sqlite3_reset(handle)
    }

    /// A step seen by the probe: the first marks the start of the run; when fetches split their time, each adds
    /// its time inside SQLite.
    @inline(never)
    private func probedStep() -> Int32 {
        let rc: Int32
        if timesSteps {
            let before = ProbeClock.now()
            if probeStart == 0 { probeStart = before }
            rc = sqlite3_step(handle)
            let after = ProbeClock.now()
            if after > before { probeStepNanoseconds &+= after &- before }
        } else {
            if probeStart == 0 { probeStart = ProbeClock.now() }
            rc = sqlite3_step(handle)
        }
        if rc == SQLITE_ROW { probeRows &+= 1 }
        return rc
    }

    @inline(never)
    private func finishProbe() {
        probe?._withUnsafeGuaranteedRef { $0.finished(self, start: probeStart, rows: probeRows, stepTime: Double(probeStepNanoseconds) / 1e9) }
        probeStart = 0
        probeRows = 0
        probeStepNanoseconds = 0
        if !probeBindings.isEmpty { probeBindings.removeAll(keepingCapacity: true) }
    }

    // MARK: Columns (0-based)

    /// Columns of the result.
    var columnCount: Int32 { sqlite3_column_count(handle) }
    /// A result column's name.
    func columnName(at column: Int32) -> String { sqlite3_column_name(handle, column).map { String(cString: $0) } ?? "" }

    @inline(__always) func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    @inline(__always) func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }
    @inline(__always) func columnType(at column: Int32) -> Int32 { sqlite3_column_type(handle, column) }
    @inline(__always) func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(at column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    func data(at column: Int32) -> Data {
        let n = Int(sqlite3_column_bytes(handle, column))
        guard n > 0, let p = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: p, count: n)
    }

    /// Reads a column expected to hold an integer: one call unless the value is 0, which may also be NULL or a
    /// value of another storage class (then read as `slot(at:)` does).
    @inline(__always) func integerSlot(at column: Int32) -> Slot {
        let value = sqlite3_column_int64(handle, column)
        if value != 0 || sqlite3_column_type(handle, column) == SQLITE_INTEGER { return .integer(value) }
        return slot(at: column)
    }

    /// Reads a column as a slot, keeping SQLite's storage class.
    @inline(__always) func slot(at column: Int32) -> Slot {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(text(at: column))
        case SQLITE_BLOB: return .blob(data(at: column))
        default: return .null
        }
    }

}
