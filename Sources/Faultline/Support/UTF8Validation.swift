import Foundation

/// Checks that bytes are UTF-8 before a parser sees them: Foundation's XMLParser traps on some invalid sequences,
/// and a file's error should name the byte at fault.
public enum UTF8Validation {
    /// The offset of the first byte that does not begin a valid UTF-8 sequence, or nil when all of `bytes` is UTF-8.
    public static func firstInvalidByte<Bytes: Sequence>(in bytes: Bytes) -> Int? where Bytes.Element == UInt8 {
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// A description of the invalid byte at `offset` for an error message: its line, column and value.
    public static func describe(_ bytes: Data, invalidAt offset: Int) -> String {
        let before = bytes.prefix(offset)
        let line = before.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.startIndex
        let column = offset - (lineStart - bytes.startIndex) + 1
        let value = bytes[bytes.startIndex + offset]
        return "not UTF-8: byte 0x\(String(value, radix: 16, uppercase: true)) at offset \(offset) (line \(line), column \(column)) does not begin a valid UTF-8 sequence"
    }
}
