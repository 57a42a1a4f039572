import CProcessor
import Foundation

/// Writes probe events as JSON Lines (docs/trace-format.md): a header line, then one event per line. Events are
/// queued as they happen and formatted and written whole by a thread of the writer's own, which looks at the queue
/// every millisecond while events come and every 100 ms while none do, and at exit: the traced thread pays little
/// (it never wakes the writer unless 4,096 events wait), a crash loses at most the last 100 ms, and no line before
/// it is ever broken. The writer thread runs at a lower priority (nice 10 on Linux, utility QoS elsewhere): on a
/// busy machine the traced program keeps the CPU. If the writer thread gets no turn for 200 ms, or 8,192 events
/// wait, the traced thread that queues the next event writes the queue itself.
public final class TraceWriter: ProbeRecorder, @unchecked Sendable {
    /// The trace format's version.
    public static let formatVersion = 1

    /// The trace file's path.
    public let path: String
    /// The queue and the file, shared with the writer thread. The thread holds it rather than the writer, which it
    /// could only hold weakly (so that the writer can go away), and a weak reference would move the writer's
    /// reference count to a side table, where every retain takes a slow path.
    private let output: TraceOutput
    /// Events that wake the writer before its turn (it is behind: a traced thread waking it would pay a system
    /// call and, on a virtual machine, an interrupt of the other processor).
    static let backlog = 4096
    /// How often the writer looks at the queue, in seconds: while events come, often, so that a batch stays small
    /// enough for the processor's cache; while none do, rarely.
    static let busyInterval = 0.001
    static let idleInterval = 0.1
    /// How long, in nanoseconds, events may wait for the writer thread, and how many may wait, before the traced
    /// thread that queues another writes them itself: on a machine whose processors are all busy, a writer thread
    /// of lower priority may get no turn for a long time. (Twice the idle interval and twice the backlog, so that a
    /// writer thread that gets its turns is not overtaken.)
    static let longestWait: UInt64 = 200_000_000
    static let mostWaiting = 2 * backlog
    /// A path ending in `.gz` is written compressed, at zlib's fastest level: a benchmark trace comes out 30 times
    /// smaller, where the default level's 36 times takes 1.4 times as long (docs/trace-format.md).
    static let compressionLevel: Int32 = 1
    /// How often, at most, a compressed trace is flushed to the file while events come, in nanoseconds: what a crash
    /// can lose (zlib keeps input back for a better ratio until then).
    static let compressedFlushInterval: UInt64 = 100_000_000
    /// The writer thread's name (in `top -H`, debuggers and /proc; at most 15 bytes, as Linux keeps no more).
    static let threadName = "faultline-trace"

    /// Creates (or replaces) the trace file at `path` and writes its header.
    public convenience init(path: String, includeBindValues: Bool = false) throws {
        try self.init(path: path, includeBindValues: includeBindValues, startsThread: true)
    }

    /// `startsThread` false: no writer thread, as if it never got a turn (for tests). Events are then written by
    /// `flush()`, and by the thread that queues one once `longestWait` has passed or `mostWaiting` events wait.
    init(path: String, includeBindValues: Bool, startsThread: Bool) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CocoaError(.fileWriteNoPermission)
        }
        self.path = path
        output = TraceOutput(handle: handle, includeBindValues: includeBindValues,
                             deflater: Gzip.isCompressedName(path) ? try GzipDeflater(level: Self.compressionLevel) : nil)
        var header = JSONLineBuffer()
        header.begin()
        header.string("type", "header")
        header.string("format", "faultline-trace")
        header.int("version", Self.formatVersion)
        header.string("started", ISO8601DateFormatter().string(from: Date()))
        header.string("process", ProcessInfo.processInfo.processName)
        header.int("pid", Int(ProcessInfo.processInfo.processIdentifier))
        header.string("sqlite", SQLiteConnection.libraryVersion)
        header.string("host", ProcessInfo.processInfo.hostName)
        header.endLine()
        header.withBytes { output.write($0, finishing: false) }
        if startsThread { output.startThread() }
    }

    deinit {
        output.stop()
        output.flush(finishing: true)
        output.close()
    }

    public func record(_ event: consuming ProbeEvent, at time: UInt64) {
        output.enqueue(event, at: time, predicateConstants: nil)
    }

    /// Queues a fetch event whose predicate is recorded from its shape's text and these constants.
    func record(_ event: consuming ProbeEvent, at time: UInt64, predicateConstants: UnsafeRawBufferPointer) {
        output.enqueue(event, at: time, predicateConstants: predicateConstants)
    }

    /// Formats and writes every queued event now; a compressed trace is then a complete gzip file (events after
    /// this go into a gzip member of their own).
    public func flush() {
        output.flush(finishing: true)
    }

    /// One event as a JSON line, for tests and tools (the writer formats straight into its batch buffer).
    static func line(for event: ProbeEvent, at time: Double, bindValues: Bool) -> String {
        var buffer = JSONLineBuffer()
        write(event, at: time, bindValues: bindValues, into: &buffer)
        return String(buffer.string.dropLast())
    }

    /// Appends one event's line (hand-written: an encoder per event would cost more than the event). The frequent
    /// events are written with whole constant runs of keys and punctuation, and of the usual values too (no sort,
    /// limit or prefetch; no full scan, sort or automatic index).
    /// `recordedPredicate`, when not empty, is a fetch's predicate as a `PredicateRecording` made when the event
    /// was queued; the writer then reads nothing of the predicate itself.
    static func write(_ event: borrowing ProbeEvent, at time: Double, bindValues: Bool,
                      recordedPredicate: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                      into json: inout JSONLineBuffer) {
        switch event {
        case .statement(let e):
            json.begin(#"{"type":"statement","t":"#)
            json.secondsValue(time)
            json.field(#","sql":"#)
            json.quotedSQL(e.sql)
            json.field(#","purpose":""#)
            json.text(e.purpose.rawValue)
            json.field(#"","bindings":"#)
            if bindValues && !e.bindings.isEmpty { json.stringArray(e.bindings) } else { json.placeholderArray(count: e.parameters) }
            json.field(#","duration":"#, seconds: e.duration)
            json.field(#","rows":"#, integer: e.rows)
            if e.fullScanSteps == 0 && e.sorts == 0 && e.autoIndexes == 0 {
                json.field(#","fullScanSteps":0,"sorts":0,"autoIndexes":0,"vmSteps":"#, integer: e.vmSteps)
            } else {
                json.field(#","fullScanSteps":"#, integer: e.fullScanSteps)
                json.field(#","sorts":"#, integer: e.sorts)
                json.field(#","autoIndexes":"#, integer: e.autoIndexes)
                json.field(#","vmSteps":"#, integer: e.vmSteps)
            }
        case .fetch(let e):
            json.begin(#"{"type":"fetch","t":"#)
            json.secondsValue(time)
            json.field(#","entity":"#)
            json.quoted(e.entity)
            json.field(#","predicate":"#)
            if !recordedPredicate.isEmpty {
                json.literal("\"")
                PredicateRecording.replay(recordedPredicate, into: &json)
                json.literal("\"")
            } else if let predicate = e.predicate {
                json.literal("\"")
                PredicateFormatter.format(predicate, into: &json)
                json.literal("\"")
            } else {
                json.literal("null")
            }
            if e.sort.isEmpty && e.limit == 0 && e.offset == 0 && e.batchSize == 0 && e.prefetch.isEmpty {
                json.field(#","sort":[],"limit":0,"offset":0,"batchSize":0,"prefetch":[],"resultType":"#)
            } else {
                json.field(#","sort":["#)
                for (i, descriptor) in e.sort.enumerated() {
                    if i > 0 { json.literal(",") }
                    json.quoted(descriptor.description)
                }
                json.field(#"],"limit":"#, integer: e.limit)
                json.field(#","offset":"#, integer: e.offset)
                json.field(#","batchSize":"#, integer: e.batchSize)
                json.field(#","prefetch":"#)
                json.stringArray(e.prefetch)
                json.field(#","resultType":"#)
            }
            json.literal(e.resultType.quotedName)
            json.field(#","statements":"#, integer: e.statements)
            json.field(#","rows":"#, integer: e.rows)
            json.field(#","results":"#, integer: e.results)
            json.field(#","registered":"#, integer: e.registered)
            json.field(#","sqlTime":"#, seconds: e.sqlTime)
            json.field(#","totalTime":"#, seconds: e.totalTime)
            if e.stepTime > 0 {
                json.field(#","stepTime":"#, seconds: e.stepTime)
                json.field(#","rowCacheTime":"#, seconds: e.rowCacheTime)
            }
            json.field(#","callSite":"#)
            json.callSiteValue(e.callSite)
            json.field(#","context":"#, integer: e.context)
            if let gauges = e.gauges { json.gauges(gauges) }
            if !e.optionalNotEqual.isEmpty {
                json.field(#","optionalNotEqual":"#)
                json.stringArray(e.optionalNotEqual)
            }
        case .fault(let e):
            json.begin(e.source == .database ? #"{"type":"cacheMiss","t":"# : #"{"type":"fault","t":"#)
            json.secondsValue(time)
            json.field(#","kind":""#)
            json.text(e.kind.rawValue)
            json.field(#"","object":"#)
            json.quotedObjectURI(e.objectID)
            json.field(#","relationship":"#)
            json.optionalQuoted(e.relationship)
            json.field(#","source":""#)
            json.text(e.source.rawValue)
            json.literal("\"")
            if let count = e.count { json.int("count", count) }
            if let batch = e.batch { json.int("batch", batch) }
            if e.countOnly { json.field(#","countOnly":true"#) }
            if e.missing { json.field(#","missing":true"#) }
            if e.source == .database || e.stack != nil { json.optionalString("callSite", e.stack?.callSite) }
            json.field(#","duration":"#, seconds: e.duration)
            json.field(#","context":"#, integer: e.context)
        case let other:
            json.begin()
            json.key("type")
            json.literal("\"")
            json.literal(other.typeName)
            json.literal("\"")
            json.seconds("t", time)
            writeFields(of: other, into: &json)
        }
        json.endLine()
    }

    /// The fields of the less frequent events, after `type` and `t`.
    private static func writeFields(of event: ProbeEvent, into json: inout JSONLineBuffer) {
        switch event {
        case .statement, .fetch, .fault:
            break
        case .connect(let e):
            json.string("path", e.path)
        case .queryPlan(let e):
            json.string("sql", e.sql)
            json.beginArray("nodes")
            for node in e.nodes {
                json.element()
                json.int("id", node.id)
                json.int("parent", node.parent)
                json.string("detail", node.detail)
                json.end()
            }
            json.endArray()
        case .signpost(let e):
            json.string("name", e.name)
        case .batch(let e):
            json.string("kind", e.kind)
            json.string("entity", e.entity)
            json.int("rows", e.rows)
            json.int("statements", e.statements)
            json.seconds("duration", e.duration)
            json.optionalString("error", e.error)
            json.callSite(e.callSite)
            json.int("context", e.context)
        case .merge(let e):
            json.int("inserted", e.inserted)
            json.int("updated", e.updated)
            json.int("deleted", e.deleted)
            json.int("refreshed", e.refreshed)
            json.int("registered", e.registered)
            json.seconds("duration", e.duration)
            json.int("context", e.context)
        case .migration(let e):
            json.int("step", e.step)
            json.string("from", e.from)
            json.string("to", e.to)
            json.string("entity", e.entity)
            json.int("rows", e.rows)
            json.int("statements", e.statements)
            json.seconds("duration", e.duration)
        case .refresh(let e):
            json.int("objects", e.objects)
            json.key("mergeChanges")
            json.text(e.mergeChanges ? "true" : "false")
            json.seconds("duration", e.duration)
            json.int("context", e.context)
        case .resultsController(let e):
            json.string("kind", e.kind)
            json.string("entity", e.entity)
            json.optionalString("sectionNameKeyPath", e.sectionNameKeyPath)
            json.optionalString("cacheName", e.cacheName)
            json.int("objects", e.objects)
            json.int("sections", e.sections)
            json.int("batchSize", e.batchSize)
            json.string("cache", e.cache)
            json.optionalString("cacheReason", e.cacheReason)
            json.string("sectionsFrom", e.sectionsFrom)
            json.int("inserted", e.inserted)
            json.int("deleted", e.deleted)
            json.int("moved", e.moved)
            json.int("updated", e.updated)
            json.int("sectionsInserted", e.sectionsInserted)
            json.int("sectionsDeleted", e.sectionsDeleted)
            json.seconds("duration", e.duration)
            json.int("context", e.context)
        case .invalidate(let e):
            json.int("objects", e.objects)
            json.string("reason", e.reason.rawValue)
            json.seconds("duration", e.duration)
            json.int("context", e.context)
        case .prefetchUse(let e):
            json.string("keyPath", e.keyPath)
            json.string("entity", e.entity)
            json.int("loaded", e.loaded)
            json.int("used", e.used)
            json.callSite(e.callSite)
            json.int("context", e.context)
        case .save(let e):
            json.counts("inserted", e.inserted)
            json.counts("updated", e.updated)
            json.counts("deleted", e.deleted)
            json.int("statements", e.statements)
            json.seconds("duration", e.duration)
            json.int("conflicts", e.conflicts)
            json.optionalString("error", e.error)
            json.callSite(e.callSite)
            json.int("context", e.context)
            if let parent = e.parent { json.int("parent", parent) }
            if let gauges = e.gauges { json.gauges(gauges) }
            if e.bytes > 0 { json.int("bytes", e.bytes) }
        }
    }
}

extension JSONLineBuffer {
    /// `"callSite":"Module/File.swift:42"` (or `null`), written without building the string.
    fileprivate mutating func callSite(_ site: CallSite?) {
        key("callSite")
        callSiteValue(site)
    }

    /// `,"registeredObjects":N,"materializedObjects":N,"rowCacheRows":N`.
    fileprivate mutating func gauges(_ gauges: ContextGauges) {
        field(#","registeredObjects":"#, integer: gauges.registeredObjects)
        field(#","materializedObjects":"#, integer: gauges.materializedObjects)
        field(#","rowCacheRows":"#, integer: gauges.rowCacheRows)
    }

    fileprivate mutating func callSiteValue(_ site: CallSite?) {
        guard let site else { literal("null"); return }
        guard site.file.hasPointerRepresentation else { quoted(site.description); return }
        quotedCallSite(file: site.file, line: site.line)
    }
}

/// A trace writer's queue of events and its file: the traced thread enqueues, the writer thread (or `flush()`)
/// formats and writes.
private final class TraceOutput: @unchecked Sendable {
    private let handle: FileHandle
    private let includeBindValues: Bool
    /// Compresses what is written (a `.gz` trace); used under `writeLock`.
    private let deflater: GzipDeflater?
    /// When a compressed trace was last flushed to the file (under `writeLock`).
    private var lastFileFlush = ProbeClock.now()
    private let start = ProbeClock.now()
    /// Guards the queue: events waiting to be written with the times they ended, and the emptied storage of the
    /// last batch, kept so that recording does not allocate once both have grown. (The lock serializes every
    /// access, so exclusivity is not checked at run time as well.)
    private let queueLock = SpinLock()
    @exclusivity(unchecked) private var queued = EventStorage(capacity: 2 * TraceWriter.backlog)
    @exclusivity(unchecked) private var spare: EventStorage? = EventStorage(capacity: 2 * TraceWriter.backlog)
    /// Where a queued fetch's predicate is recorded (under the queue's lock).
    @exclusivity(unchecked) private var predicateRecording = PredicateRecording()
    /// Serializes writes, so lines land in the order their events happened; guards `buffer`.
    private let writeLock = NSLock()
    private var buffer: JSONLineBuffer? = JSONLineBuffer(capacity: 1 << 16)
    /// Wakes the writer thread before its turn: when it is behind, and at the end.
    private let wake = WriterWake()
    /// True where the processor can take a cache line for writing ahead of the write (`prefetch(_:)`).
    private let prefetchesForWrite = faultline_can_prefetch_for_write() != 0

    init(handle: FileHandle, includeBindValues: Bool, deflater: GzipDeflater?) {
        self.handle = handle
        self.includeBindValues = includeBindValues
        self.deflater = deflater
    }

    deinit {
        queued.deallocate()
        spare?.deallocate()
    }

    /// Starts the writer thread: it writes what is queued every `busyInterval` while events come, every
    /// `idleInterval` while none do, until `stop()`.
    func startThread() {
        let thread = Thread { [self] in
            WriterWake.lowerPriority()
            // Named from the thread itself: on Linux, Foundation names a thread only when it is the current one.
            Thread.current.name = TraceWriter.threadName
            var interval = TraceWriter.idleInterval
            while wake.wait(seconds: interval) {
                interval = flush(finishing: false) > 0 ? TraceWriter.busyInterval : TraceWriter.idleInterval
            }
        }
        thread.qualityOfService = .utility
        thread.start()
    }

    func stop() { wake.stop() }

    func close() { try? handle.close() }

    func enqueue(_ event: consuming ProbeEvent, at time: UInt64, predicateConstants: UnsafeRawBufferPointer?) {
        queueLock.lock()
        // A fetch's predicate is recorded here, so that the writer does not read it (see `PredicateRecording`).
        if let predicateConstants, let text = event.fetchPredicateText {
            swap(&predicateRecording.bytes, &queued.predicates)
            text._withUnsafeGuaranteedRef { predicateRecording.record($0, constants: predicateConstants) }
            swap(&predicateRecording.bytes, &queued.predicates)
        } else if let predicate = event.fetchPredicate {
            swap(&predicateRecording.bytes, &queued.predicates)
            PredicateFormatter.format(predicate, into: &predicateRecording)
            swap(&predicateRecording.bytes, &queued.predicates)
        }
        queued.append(event, at: time)
        let count = queued.count
        let oldest = queued.times[0]
        let next = prefetchesForWrite ? queued.nextWrites : nil
        queueLock.unlock()
        if let next { Self.prefetch(next) }
        if count == TraceWriter.backlog { wake.behind() }
        // The writer thread has had no turn for long (every processor is busy): this thread writes, unless a
        // flush is under way.
        if (time > oldest &+ TraceWriter.longestWait || count >= TraceWriter.mostWaiting) && writeLock.try() {
            defer { writeLock.unlock() }
            flushLocked(finishing: false)
        }
    }

    /// Takes the lines the next two events will be queued in for writing, now, while the traced thread goes on
    /// with its work. The writer thread read those lines when it wrote the events they held before: without this,
    /// writing them would wait for the other processor to give them up, and the atomic operations that follow (a
    /// lock, reference counts) wait for those writes. The wait is small where the two processors share a cache, and
    /// large where they do not (docs/trace-format.md, Cost).
    private static func prefetch(_ next: EventStorage.NextWrites) {
        let slot = UnsafeRawPointer(next.slot)
        let end = 2 &* MemoryLayout<ProbeEvent>.stride
        var offset = 0
        while offset < end {
            faultline_prefetch_for_write(slot + offset)
            offset &+= 64
        }
        faultline_prefetch_for_write(slot + (end &- 1))
        faultline_prefetch_for_write(next.time)
        faultline_prefetch_for_write(next.predicateEnd)
        faultline_prefetch_for_write(next.predicate)
        faultline_prefetch_for_write(next.predicateLater)
    }

    /// Formats and writes every queued event now; returns how many there were. `finishing`: a compressed trace's
    /// gzip member is ended, so that the file is complete.
    @discardableResult
    func flush(finishing: Bool) -> Int {
        writeLock.lock()
        defer { writeLock.unlock() }
        return flushLocked(finishing: finishing)
    }

    /// `flush(finishing:)` for a caller that holds `writeLock`.
    @discardableResult
    private func flushLocked(finishing: Bool) -> Int {
        queueLock.lock()
        var batch = queued
        queued = spare ?? EventStorage(capacity: batch.capacity)
        spare = nil
        queueLock.unlock()
        let written = batch.count
        if written > 0 {
            // Formatted in a local: writing to a field of `self` here would share a cache line with the queue,
            // which the traced thread updates for every event.
            var buffer = self.buffer.take() ?? JSONLineBuffer(capacity: 1 << 16)
            buffer.removeAll()
            // Each event is moved out, written and moved back: the writer releases nothing it queued.
            for i in 0..<batch.count {
                let event = (batch.events + i).move()
                TraceWriter.write(event, at: ProbeClock.seconds(start, batch.times[i]), bindValues: includeBindValues,
                                  recordedPredicate: batch.recordedPredicate(of: i), into: &buffer)
                (batch.events + i).initialize(to: event)
            }
            batch.markWritten()
            buffer.withBytes { write($0, finishing: finishing) }
            self.buffer = consume buffer
        } else if finishing || deflater != nil {
            write(UnsafeRawBufferPointer(start: nil, count: 0), finishing: finishing)
        }
        queueLock.lock()
        spare = batch
        queueLock.unlock()
        return written
    }

    /// Writes `raw` (holding whole lines): compressed for a `.gz` trace — flushed to the file every
    /// `compressedFlushInterval`, and ended as a complete member when `finishing` — else as it is. Under `writeLock`.
    func write(_ raw: UnsafeRawBufferPointer, finishing: Bool) {
        guard let deflater else { return writeToFile(raw) }
        let now = ProbeClock.now()
        let flush: GzipDeflater.Flush
        if finishing {
            flush = .finish
        } else if now &- lastFileFlush >= TraceWriter.compressedFlushInterval {
            flush = .sync
        } else {
            flush = .none
        }
        if flush != .none { lastFileFlush = now }
        deflater.write(raw, flush: flush) { writeToFile($0) }
    }

    /// Writes whole, retrying short writes (a trace line is never left half written by us).
    private func writeToFile(_ raw: UnsafeRawBufferPointer) {
        guard let start = raw.baseAddress else { return }
        let fd = handle.fileDescriptor
        var offset = 0
        while offset < raw.count {
            let n = Foundation.write(fd, start + offset, raw.count - offset)
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
        }
    }
}

extension ProbeEvent {
    /// A fetch event's predicate.
    fileprivate var fetchPredicate: ObjectPredicate? {
        if case .fetch(let fetch) = self { return fetch.predicate }
        return nil
    }

    /// A fetch event's predicate shape text (the event keeps it alive).
    fileprivate var fetchPredicateText: Unmanaged<PredicateTextShape>? {
        if case .fetch(let fetch) = self { return fetch.predicateText.shape.map(Unmanaged.passUnretained) }
        return nil
    }
}

/// Queued events in storage of their own rather than an array. The writer does not release the events it writes:
/// it hands the storage back with them in it, and the traced thread replaces each as it queues a new one. So what an
/// event holds (a predicate built for one fetch, the SQL text's reference count) is released by the thread that
/// made it, as it would be with the trace off: nothing it allocated is freed on another thread.
private struct EventStorage {
    private(set) var events: UnsafeMutablePointer<ProbeEvent>
    private(set) var times: UnsafeMutablePointer<UInt64>
    /// The queued fetches' recorded predicates (`PredicateRecording`), end to end, and where each event's ends
    /// (it starts where the last event's ends).
    var predicates = RecordedBytes(capacity: 16 * 1024)
    private var predicateEnds: UnsafeMutablePointer<Int>
    private(set) var capacity: Int
    /// Queued events, from the start.
    private(set) var count = 0
    /// Slots holding an event: the queued ones, then written ones not yet replaced.
    private var initialized = 0

    init(capacity: Int) {
        self.capacity = capacity
        events = .allocate(capacity: capacity)
        times = .allocate(capacity: capacity)
        predicateEnds = .allocate(capacity: capacity)
    }

    @inline(__always) mutating func append(_ event: consuming ProbeEvent, at time: UInt64) {
        if count == capacity { grow() }
        if count < initialized {
            (events + count).pointee = event
        } else {
            (events + count).initialize(to: event)
            initialized &+= 1
        }
        times[count] = time
        predicateEnds[count] = predicates.count
        count &+= 1
    }

    /// Where the next event goes: its slot, its time, the end of its recorded predicate, and where that starts.
    struct NextWrites {
        let slot: UnsafeMutablePointer<ProbeEvent>
        let time: UnsafeMutablePointer<UInt64>
        let predicateEnd: UnsafeMutablePointer<Int>
        /// The next recorded predicate's first bytes, and its bytes a line later (or the last byte there is).
        let predicate: UnsafeMutableRawPointer
        let predicateLater: UnsafeMutableRawPointer
    }

    /// Where the next event goes; nil when the next two would not fit without growing.
    var nextWrites: NextWrites? {
        guard count &+ 2 <= capacity else { return nil }
        return NextWrites(slot: events + count, time: times + count, predicateEnd: predicateEnds + count,
                          predicate: predicates.base + predicates.count,
                          predicateLater: predicates.base + min(predicates.count &+ 64, predicates.capacity &- 1))
    }

    /// The `i`th event's recorded predicate (empty when it has none).
    func recordedPredicate(of i: Int) -> UnsafeRawBufferPointer {
        predicates.slice(i == 0 ? 0 : predicateEnds[i - 1], predicateEnds[i])
    }

    /// Empties the queue once its events are written (they stay until replaced).
    mutating func markWritten() {
        count = 0
        predicates.count = 0
    }

    private mutating func grow() {
        let newEvents = UnsafeMutablePointer<ProbeEvent>.allocate(capacity: capacity * 2)
        newEvents.moveInitialize(from: events, count: count)
        events.deallocate()
        events = newEvents
        let newTimes = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity * 2)
        newTimes.moveInitialize(from: times, count: count)
        times.deallocate()
        times = newTimes
        let newPredicateEnds = UnsafeMutablePointer<Int>.allocate(capacity: capacity * 2)
        newPredicateEnds.moveInitialize(from: predicateEnds, count: count)
        predicateEnds.deallocate()
        predicateEnds = newPredicateEnds
        capacity *= 2
    }

    /// Releases the events and the storage.
    func deallocate() {
        events.deinitialize(count: initialized)
        events.deallocate()
        times.deallocate()
        predicateEnds.deallocate()
        predicates.deallocate()
    }
}

/// The writer thread's turns: on its own timer, or sooner when the traced thread finds it behind or the writer
/// stops.
private final class WriterWake: @unchecked Sendable {
    private let condition = NSCondition()
    private var woken = false
    private var stopped = false

    func behind() {
        condition.lock()
        woken = true
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// Waits `seconds`, or less when woken; false once stopped.
    func wait(seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !woken && !stopped && condition.wait(until: deadline) {}
        woken = false
        return !stopped
    }

    /// Lowers the calling thread's priority, so that formatting the trace yields to the traced program.
    static func lowerPriority() {
        #if os(Linux)
        // On Linux the nice value belongs to the thread: `who` 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }
}
