import Faultline
import Foundation

/// Splits a data file (docs/data-format.md) into entity names and records as its bytes come, so that a load never
/// holds the whole text: each record's own text is handed on to be parsed alone. Checks the file's outline
/// (an object of entity names to arrays of objects) itself; a record's inside is the parser's to judge.
struct DataFileReader {
    enum Event {
        /// An entity name at the top level; its records follow.
        case entity(String)
        /// The text of one record of the latest entity, and its position in the entity's array (1-based).
        case record(Data, position: Int)
    }

    private enum State {
        case start, firstKeyOrClose, key, inKey, colon, arrayOpen, firstRecordOrClose, record, inRecord, commaOrArrayClose,
             commaOrClose, end
    }

    let file: String
    private var state = State.start
    private var capture: [UInt8] = []
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var entity: String?
    private var position = 0
    private var line = 1
    private var column = 0
    private var bytesRead = 0
    /// Bytes of a UTF-8 byte order mark skipped at the start.
    private var byteOrderMark = 0

    init(file: String) { self.file = file }

    /// Reads the next piece of the file, handing on each entity name and record as soon as it is whole.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) throws -> Void) throws {
        for byte in bytes {
            if bytesRead == 0 && byteOrderMark < 3 && byte == [0xEF, 0xBB, 0xBF][byteOrderMark] {
                byteOrderMark += 1
                continue
            }
            bytesRead &+= 1
            if byte == UInt8(ascii: "\n") { line += 1; column = 0 } else { column += 1 }
            try step(byte, handle)
        }
    }

    /// Checks that the file ended where its top-level object does.
    func finish() throws {
        guard case .end = state else {
            throw fail(bytesRead == 0 ? "the file is empty" : "the file ends inside its \(state == .inRecord ? "record #\(position)" : "top-level object")",
                       json: true)
        }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private mutating func step(_ byte: UInt8, _ handle: (Event) throws -> Void) throws {
        switch state {
        case .inKey:
            capture.append(byte)
            if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") {
                guard let name = try? JSONSerialization.jsonObject(with: Data(capture), options: .fragmentsAllowed) as? String else {
                    throw fail("an entity name is not a valid JSON string", json: true)
                }
                capture.removeAll(keepingCapacity: true)
                entity = name
                position = 0
                state = .colon
                try handle(.entity(name))
            } else if capture.count > Limits.dataRecordBytes {
                throw fail("an entity name is longer than \(Limits.dataRecordBytes) bytes (Limits.dataRecordBytes)", json: false)
            }
        case .inRecord:
            capture.append(byte)
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
                guard depth <= Limits.dataNestingDepth else {
                    throw recordFailure("nested deeper than \(Limits.dataNestingDepth) levels (Limits.dataNestingDepth)")
                }
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                depth -= 1
                if depth == 0 {
                    let text = Data(capture)
                    capture.removeAll(keepingCapacity: true)
                    state = .commaOrArrayClose
                    try handle(.record(text, position: position))
                    return
                }
            }
            if capture.count > Limits.dataRecordBytes {
                throw recordFailure("the record is longer than \(Limits.dataRecordBytes) bytes (Limits.dataRecordBytes)")
            }
        default:
            guard !Self.isSpace(byte) else { return }
            try structural(byte)
        }
    }

    /// A byte of the file's outline, outside names and records (white space skipped).
    private mutating func structural(_ byte: UInt8) throws {
        switch (state, byte) {
        case (.start, UInt8(ascii: "{")): state = .firstKeyOrClose
        case (.start, _): throw DataFileError(file: file, problem: "the top level must be an object of entity names to arrays of records")
        case (.firstKeyOrClose, UInt8(ascii: "}")), (.commaOrClose, UInt8(ascii: "}")): state = .end
        case (.firstKeyOrClose, UInt8(ascii: "\"")), (.key, UInt8(ascii: "\"")):
            capture = [byte]
            escaped = false
            state = .inKey
        case (.commaOrClose, UInt8(ascii: ",")): state = .key
        case (.colon, UInt8(ascii: ":")): state = .arrayOpen
        case (.arrayOpen, UInt8(ascii: "[")): state = .firstRecordOrClose
        case (.arrayOpen, _): throw DataFileError(file: file, entity: entity, problem: "must be an array of records")
        case (.firstRecordOrClose, UInt8(ascii: "]")), (.commaOrArrayClose, UInt8(ascii: "]")): state = .commaOrClose
        case (.commaOrArrayClose, UInt8(ascii: ",")): state = .record
        case (.firstRecordOrClose, UInt8(ascii: "{")), (.record, UInt8(ascii: "{")):
            position += 1
            capture = [byte]
            depth = 1
            inString = false
            escaped = false
            state = .inRecord
        case (.firstRecordOrClose, _), (.record, _):
            position += 1
            throw DataFileError(file: file, entity: entity, record: "#\(position)", problem: "must be an object")
        case (.end, _): throw fail("text after the top-level object", json: true)
        default:
            throw fail(byte < 0x80 ? "unexpected '\(Character(Unicode.Scalar(byte)))'" : "unexpected byte 0x\(String(byte, radix: 16, uppercase: true))", json: true)
        }
    }

    private func fail(_ problem: String, json: Bool) -> DataFileError {
        DataFileError(file: file, problem: (json ? "not valid JSON at line \(line), column \(column): " : "") + problem)
    }

    private func recordFailure(_ problem: String) -> DataFileError {
        DataFileError(file: file, entity: entity, record: "#\(position)", problem: problem)
    }
}
