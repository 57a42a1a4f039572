@testable import Faultline
import Foundation
import XCTest
@testable import FaultlineReport

/// Traces written compressed (`FAULTLINE_TRACE=trace.jsonl.gz`) and read by every reader: whole, in several gzip
/// members, cut short by a crash, damaged, or followed by bytes that are not gzip.
final class CompressedTraceTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-gzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    /// Writes `count` signposts named `/tmp/store-N.sqlite` to a trace at `name`, flushed once per `perFlush`.
    private func writeTrace(_ name: String, count: Int, perFlush: Int = .max) throws -> String {
        let path = dir.appendingPathComponent(name).path
        let writer = try TraceWriter(path: path)
        for i in 0..<count {
            writer.record(.signpost(SignpostEvent(name: "/tmp/store-\(i).sqlite")), at: ProbeClock.now())
            if (i + 1) % perFlush == 0 { writer.flush() }
        }
        writer.flush()
        return path
    }

    /// The signposts' names, in order.
    private func connectPaths(_ trace: TraceFile) -> [String] {
        trace.events.filter { $0.kind == .signpost }.map(\.segment)
    }

    /// A `.gz` trace is gzip, reads as the same events as a plain one, and is much smaller.
    func testACompressedTraceReadsAsThePlainOne() throws {
        let plain = try writeTrace("trace.jsonl", count: 5_000)
        let compressed = try writeTrace("trace.jsonl.gz", count: 5_000)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: compressed))
        XCTAssertEqual(Array(bytes.prefix(2)), [0x1f, 0x8b])
        let plainSize = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: plain)[.size] as? Int)
        XCTAssertLessThan(bytes.count * 5, plainSize, "compressed at least fivefold")
        let a = try TraceFile(path: plain), b = try TraceFile(path: compressed)
        XCTAssertEqual(b.warnings, [])
        XCTAssertEqual(connectPaths(b).count, 5_000)
        XCTAssertEqual(connectPaths(a), connectPaths(b))
        XCTAssertEqual(b.header["process"], a.header["process"])
    }

    /// Each `flush()` ends a gzip member, so that the file is complete at that point; the members read as one trace.
    func testEveryFlushLeavesACompleteFileAndTheMembersReadAsOne() throws {
        let path = try writeTrace("members.jsonl.gz", count: 1_000, perFlush: 100)
        let trace = try TraceFile(path: path)
        XCTAssertEqual(trace.warnings, [])
        XCTAssertEqual(connectPaths(trace), (0..<1_000).map { "/tmp/store-\($0).sqlite" })
    }

    /// A compressed trace reaches the file while the program runs, without a flush: the writer flushes zlib's
    /// stream every 100 ms (what a crash then loses is what a plain trace loses).
    func testACompressedTraceReachesTheFileWithoutAFlush() throws {
        let path = dir.appendingPathComponent("quiet.jsonl.gz").path
        let writer = try TraceWriter(path: path)
        writer.record(.signpost(SignpostEvent(name: "/tmp/store-0.sqlite")), at: ProbeClock.now())
        let deadline = Date().addingTimeInterval(10)
        var paths: [String] = []
        while Date() < deadline {
            if let trace = try? TraceFile(path: path) { paths = connectPaths(trace) }
            if paths.count == 1 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertEqual(paths, ["/tmp/store-0.sqlite"])
        withExtendedLifetime(writer) {}
    }

    /// A trace whose writer never finished (a crash): what reached the file is read, with a warning saying so —
    /// whether the file ends at the member's trailer or in the middle of a block.
    func testATraceCutShortIsReadToItsLastCompleteBlockWithAWarning() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: try writeTrace("whole.jsonl.gz", count: 2_000)))
        for cut in [8, 200, whole.count / 2] {
            let path = dir.appendingPathComponent("cut-\(cut).jsonl.gz").path
            try whole.prefix(whole.count - cut).write(to: URL(fileURLWithPath: path))
            let trace = try TraceFile(path: path)
            XCTAssertTrue(trace.warnings.contains { $0.contains("ends inside a gzip member") }, "cut \(cut): \(trace.warnings)")
            let paths = connectPaths(trace)
            XCTAssertEqual(paths, (0..<paths.count).map { "/tmp/store-\($0).sqlite" }, "cut \(cut): a prefix of the events, in order")
            if cut == 8 { XCTAssertEqual(paths.count, 2_000, "only the trailer is missing") }
        }
    }

    /// Damaged compressed bytes, or bytes after the last member that are not gzip, are an error naming the file —
    /// never a crash, never events made up.
    func testDamagedOrTrailingBytesAreAnErrorNamingTheFile() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: try writeTrace("good.jsonl.gz", count: 2_000)))
        var damaged = whole
        for i in stride(from: 40, to: damaged.count - 20, by: 97) { damaged[i] ^= 0x5a }
        let damagedPath = dir.appendingPathComponent("damaged.jsonl.gz").path
        try damaged.write(to: URL(fileURLWithPath: damagedPath))
        XCTAssertThrowsError(try TraceFile(path: damagedPath)) { XCTAssertTrue("\($0)".contains("damaged.jsonl.gz"), "\($0)") }

        let trailingPath = dir.appendingPathComponent("trailing.jsonl.gz").path
        try (whole + Data("not gzip\n".utf8)).write(to: URL(fileURLWithPath: trailingPath))
        XCTAssertThrowsError(try TraceFile(path: trailingPath)) {
            XCTAssertTrue("\($0)".contains("trailing.jsonl.gz") && "\($0)".contains("not a gzip member"), "\($0)")
        }
        // Zeros after the last member (a preallocated file) are not data.
        let paddedPath = dir.appendingPathComponent("padded.jsonl.gz").path
        try (whole + Data(count: 4096)).write(to: URL(fileURLWithPath: paddedPath))
        XCTAssertEqual(connectPaths(try TraceFile(path: paddedPath)).count, 2_000)
    }
}

/// The trace parser's number fast path gives exactly the double `strtod` gives, for every form it takes.
final class TraceNumberTests: XCTestCase {
    private func parsed(_ text: String) -> Double? {
        let line = #"{"n":"# + text + "}"
        return line.utf8CString.withUnsafeBytes { bytes -> Double? in
            guard let pairs = TraceLineParser.object(UnsafeRawBufferPointer(rebasing: bytes.dropLast())),
                  case .number(_, let value) = pairs[0].1 else { return nil }
            return value
        }
    }

    func testEveryNumberReadsAsStrtodReadsIt() {
        var random = SystemRandomNumberGenerator()
        var texts = ["0", "-0", "0.000018", "0.000210", "0.000050000", "3.599999999", "123456789012345", "1234567890123456",
                     "0.1", "-2.5", "1e5", "9007199254740993", "0.0000000000000000000001", "0.00000000000000000000001"]
        for _ in 0..<20_000 {
            let digits = String(UInt64.random(in: 0..<1_000_000_000_000_000, using: &random))
            let point = Int.random(in: 0...min(22, digits.count), using: &random)
            let text = point == 0 ? digits : String(digits.dropLast(point)).ifEmpty("0") + "." + digits.suffix(point)
            texts.append(Bool.random(using: &random) ? "-" + text : text)
        }
        for text in texts {
            XCTAssertEqual(parsed(text)?.bitPattern, Double(text)?.bitPattern, text)
        }
    }
}

private extension String {
    func ifEmpty(_ replacement: String) -> String { isEmpty ? replacement : self }
}
