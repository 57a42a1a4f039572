import Logging

/// Sends Core Data's SQL debug lines (the same text as `-com.apple.CoreData.SQLDebug` at `level` 1–4, without the
/// `Faultline:` prefix) to a swift-log `Logger`, with metadata a log backend can filter on:
///
/// | key | on |
/// |---|---|
/// | `faultline.category` | every line: `sql`, `details` or `annotation` |
/// | `faultline.entity` | fetches, batch requests, migrations, faults |
/// | `faultline.duration` | every event that has one (seconds) |
/// | `faultline.rows` | statements, fetches, batch requests, migrations |
/// | `faultline.plan` | statements: `full scan`, `automatic index`, `sort` or `no scan` (`StatementEvent.planVerdict`) |
/// | `faultline.purpose` | statements: `fetch`, `fault`, `save`… |
/// | `faultline.context` | fetches, saves, faults, batch requests: the context's serial number |
///
/// Standard error stays the default destination of `FAULTLINE_SQLDEBUG`; this recorder is attached in code:
/// `Probes(recorders: [LoggingProbeRecorder(level: 1)])`.
public final class LoggingProbeRecorder: ProbeRecorder, @unchecked Sendable {
    /// The SQL debug level (1: SQL and times; 2: bind values; 3: returned values; 4: query plans).
    public let level: Int
    private let logger: Logger
    private let logLevel: Logger.Level

    /// Lines at SQL debug `level` to `logger` (label `faultline.sql` unless given), each logged at `logLevel`.
    public init(logger: Logger = Logger(label: "faultline.sql"), level: Int = 1, logLevel: Logger.Level = .debug) {
        self.logger = logger
        self.level = min(max(level, 1), 4)
        self.logLevel = logLevel
    }

    public func record(_ event: consuming ProbeEvent, at time: UInt64) {
        guard logger.logLevel <= logLevel else { return }
        let metadata = Self.metadata(of: event)
        SQLDebugLogger.lines(of: event, level: level) { category, text in
            var lineMetadata = metadata
            lineMetadata["faultline.category"] = .string(category)
            logger.log(level: logLevel, "\(text)", metadata: lineMetadata)
        }
    }

    private static func metadata(of event: borrowing ProbeEvent) -> Logger.Metadata {
        var m: Logger.Metadata = [:]
        func seconds(_ value: Double) { m["faultline.duration"] = .stringConvertible(value) }
        switch event {
        case .statement(let e):
            seconds(e.duration)
            m["faultline.rows"] = .stringConvertible(e.rows)
            m["faultline.plan"] = .string(e.planVerdict)
            m["faultline.purpose"] = .string(e.purpose.rawValue)
        case .fetch(let e):
            m["faultline.entity"] = .string(e.entity)
            seconds(e.totalTime)
            m["faultline.rows"] = .stringConvertible(e.rows)
            m["faultline.context"] = .stringConvertible(e.context)
        case .fault(let e):
            m["faultline.entity"] = .string(e.objectID.entity.name)
            seconds(e.duration)
            m["faultline.context"] = .stringConvertible(e.context)
        case .save(let e):
            seconds(e.duration)
            m["faultline.context"] = .stringConvertible(e.context)
        case .batch(let e):
            m["faultline.entity"] = .string(e.entity)
            seconds(e.duration)
            m["faultline.rows"] = .stringConvertible(e.rows)
            m["faultline.context"] = .stringConvertible(e.context)
        case .migration(let e):
            m["faultline.entity"] = .string(e.entity)
            seconds(e.duration)
            m["faultline.rows"] = .stringConvertible(e.rows)
        case .merge(let e):
            seconds(e.duration)
            m["faultline.context"] = .stringConvertible(e.context)
        case .refresh(let e):
            seconds(e.duration)
            m["faultline.context"] = .stringConvertible(e.context)
        case .resultsController(let e):
            m["faultline.entity"] = .string(e.entity)
            seconds(e.duration)
            m["faultline.objects"] = .stringConvertible(e.objects)
            m["faultline.context"] = .stringConvertible(e.context)
        case .invalidate(let e):
            seconds(e.duration)
            m["faultline.objects"] = .stringConvertible(e.objects)
            m["faultline.context"] = .stringConvertible(e.context)
        case .connect, .queryPlan, .signpost, .prefetchUse:
            break
        }
        return m
    }
}
