import Foundation

/// A value of a binary property list, with the keyed archiver's UIDs kept (Foundation's reader on Linux hides them).
public indirect enum PropertyListValue: Sendable, Equatable {
    /// A Boolean.
    case boolean(Bool)
    /// An integer.
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// Seconds since 2001-01-01.
    case date(Double)
    /// Bytes.
    case data(Data)
    /// A string (ASCII or UTF-16 in the file).
    case string(String)
    /// A keyed archive's reference into `$objects`.
    case uid(Int)
    /// An array.
    case array([PropertyListValue])
    /// A set, in the file's order.
    case set([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary([String: PropertyListValue])
    /// The `null` object (binary plists may hold it; keyed archives use the string "$null" instead).
    case null

    /// A dictionary's value for `key`; nil for a missing key or a value that is not a dictionary.
    public subscript(key: String) -> PropertyListValue? {
        if case .dictionary(let entries) = self { return entries[key] }
        return nil
    }

    /// The string, if this is one.
    public var string: String? { if case .string(let s) = self { return s }; return nil }
    /// The integer, if this is one.
    public var integer: Int64? { if case .integer(let n) = self { return n }; return nil }
    /// The UID (a keyed archive's object reference), if this is one.
    public var uid: Int? { if case .uid(let n) = self { return n }; return nil }
    /// The Boolean, if this is one (an integer reads as true when it is not 0).
    public var boolean: Bool? {
        switch self {
        case .boolean(let b): return b
        case .integer(let n): return n != 0
        default: return nil
        }
    }
    /// The elements of an array or set.
    public var elements: [PropertyListValue]? {
        switch self {
        case .array(let items), .set(let items): return items
        default: return nil
        }
    }
}

/// Reads Apple's binary property list format (`bplist00`): header, objects, offset table, 32-byte trailer.
public enum BinaryPropertyList {
    /// The top object of `data`.
    public static func read(_ data: Data) throws -> PropertyListValue {
        var reader = try Reader(bytes: [UInt8](data))
        return try reader.object(reader.top, depth: 0)
    }

    /// True when `data` starts like a binary property list.
    public static func isBinaryPropertyList(_ data: Data) -> Bool {
        data.count >= 40 && data.prefix(8).elementsEqual("bplist00".utf8)
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let count: Int
        let top: Int
        let offsetTable: Int
        /// Objects already read, with the depth of nesting below them (a shared object counts where each use puts it).
        var parsed: [Int: (value: PropertyListValue, height: Int)] = [:]
        var height = 0
        var inProgress: Set<Int> = []

        init(bytes: [UInt8]) throws {
            guard bytes.count >= 40, bytes.prefix(8).elementsEqual("bplist00".utf8) else {
                throw CoreDataFormatError("not a binary property list (no 'bplist00' header)")
            }
            self.bytes = bytes
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw CoreDataFormatError("binary property list: bad trailer (offset size \(offsetSize), reference size \(referenceSize))")
            }
            let objects = Self.unsigned(bytes, at: trailer + 8, size: 8)
            let topObject = Self.unsigned(bytes, at: trailer + 16, size: 8)
            let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
            guard objects >= 1, topObject < objects, table >= 8, table < UInt64(trailer),
                  objects <= UInt64(trailer - Int(table)) / UInt64(offsetSize) else {
                throw CoreDataFormatError("binary property list: bad trailer (\(objects) objects, top \(topObject), offset table at \(table))")
            }
            count = Int(objects)
            top = Int(topObject)
            offsetTable = Int(table)
        }

        static func unsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<size { value = value << 8 | UInt64(bytes[offset + i]) }
            return value
        }

        /// Bytes `offset..<offset+length` lie before the offset table.
        func check(_ offset: Int, _ length: Int, _ what: String) throws {
            guard offset >= 8, length >= 0, length <= offsetTable, offset <= offsetTable - length else {
                throw CoreDataFormatError("binary property list: \(what) at byte \(offset) runs past the objects")
            }
        }

        mutating func object(_ index: Int, depth: Int) throws -> PropertyListValue {
            guard index >= 0, index < count else {
                throw CoreDataFormatError("binary property list: reference \(index) to an object that does not exist (\(count) objects)")
            }
            if let (value, below) = parsed[index] {
                guard depth + below < Limits.propertyListDepth else {
                    throw CoreDataFormatError("binary property list: nested more than \(Limits.propertyListDepth) deep (Limits.propertyListDepth)")
                }
                height = max(height, below + 1)
                return value
            }
            guard depth < Limits.propertyListDepth else {
                throw CoreDataFormatError("binary property list: nested more than \(Limits.propertyListDepth) deep (Limits.propertyListDepth)")
            }
            guard inProgress.insert(index).inserted else {
                throw CoreDataFormatError("binary property list: object \(index) contains itself")
            }
            defer { inProgress.remove(index) }
            let outerHeight = height
            height = 0
            // An 8-byte offset or reference may not fit an Int: clamped, it fails the checks that follow.
            let offset = Int(clamping: Self.unsigned(bytes, at: offsetTable + index * offsetSize, size: offsetSize))
            try check(offset, 1, "object \(index)")
            let marker = bytes[offset]
            let info = Int(marker & 0x0f)
            let value: PropertyListValue
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: value = .null
                case 0x08: value = .boolean(false)
                case 0x09: value = .boolean(true)
                default: throw CoreDataFormatError("binary property list: unknown object marker 0x\(String(marker, radix: 16)) at byte \(offset)")
                }
            case 0x1:
                value = .integer(try integer(at: offset + 1, log2Size: info))
            case 0x2:
                guard info == 2 || info == 3 else { throw CoreDataFormatError("binary property list: real of \(1 << info) bytes at byte \(offset)") }
                try check(offset + 1, 1 << info, "real")
                let raw = Self.unsigned(bytes, at: offset + 1, size: 1 << info)
                value = .real(info == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
            case 0x3:
                guard marker == 0x33 else { throw CoreDataFormatError("binary property list: unknown object marker 0x\(String(marker, radix: 16)) at byte \(offset)") }
                try check(offset + 1, 8, "date")
                value = .date(Double(bitPattern: Self.unsigned(bytes, at: offset + 1, size: 8)))
            case 0x4:
                let (length, start) = try length(info, at: offset)
                try check(start, length, "data")
                value = .data(Data(bytes[start..<start + length]))
            case 0x5, 0x7:
                let (length, start) = try length(info, at: offset)
                try check(start, length, "string")
                guard let text = String(validating: bytes[start..<start + length], as: UTF8.self) else {
                    throw CoreDataFormatError("binary property list: string at byte \(offset) is not valid text")
                }
                value = .string(text)
            case 0x6:
                let (length, start) = try length(info, at: offset)
                guard length <= Int.max / 2 else { throw CoreDataFormatError("binary property list: string at byte \(offset) is too long") }
                try check(start, length * 2, "string")
                var units: [UInt16] = []
                units.reserveCapacity(length)
                for i in 0..<length { units.append(UInt16(bytes[start + 2 * i]) << 8 | UInt16(bytes[start + 2 * i + 1])) }
                guard let text = String(validating: units, as: UTF16.self) else {
                    throw CoreDataFormatError("binary property list: string at byte \(offset) is not valid UTF-16")
                }
                value = .string(text)
            case 0x8:
                try check(offset + 1, info + 1, "UID")
                let raw = Self.unsigned(bytes, at: offset + 1, size: min(info + 1, 8))
                guard info < 8, raw <= UInt64(Int32.max) else { throw CoreDataFormatError("binary property list: UID at byte \(offset) is out of range") }
                value = .uid(Int(raw))
            case 0xA, 0xC:
                let references = try self.references(info, at: offset, multiplier: 1)
                var items: [PropertyListValue] = []
                items.reserveCapacity(references.count)
                for reference in references { items.append(try object(reference, depth: depth + 1)) }
                value = marker >> 4 == 0xA ? .array(items) : .set(items)
            case 0xD:
                let references = try self.references(info, at: offset, multiplier: 2)
                let half = references.count / 2
                var entries: [String: PropertyListValue] = [:]
                for i in 0..<half {
                    guard case .string(let key) = try object(references[i], depth: depth + 1) else {
                        throw CoreDataFormatError("binary property list: dictionary at byte \(offset) has a key that is not a string")
                    }
                    entries[key] = try object(references[half + i], depth: depth + 1)
                }
                value = .dictionary(entries)
            default:
                throw CoreDataFormatError("binary property list: unknown object marker 0x\(String(marker, radix: 16)) at byte \(offset)")
            }
            parsed[index] = (value, height)
            height = max(outerHeight, height + 1)
            return value
        }

        func integer(at offset: Int, log2Size: Int) throws -> Int64 {
            guard log2Size <= 4 else { throw CoreDataFormatError("binary property list: integer of \(1 << log2Size) bytes at byte \(offset - 1)") }
            let size = 1 << log2Size
            try check(offset, size, "integer")
            if size == 16 {
                let high = Self.unsigned(bytes, at: offset, size: 8)
                let low = Self.unsigned(bytes, at: offset + 8, size: 8)
                guard (high == 0 && low <= UInt64(Int64.max)) || (high == .max && low > UInt64(Int64.max)) else {
                    throw CoreDataFormatError("binary property list: integer at byte \(offset - 1) does not fit in 64 bits")
                }
                return Int64(bitPattern: low)
            }
            let raw = Self.unsigned(bytes, at: offset, size: size)
            return size == 8 ? Int64(bitPattern: raw) : Int64(raw)
        }

        /// A collection's or string's length: the marker's low nibble, or an integer object after it when that is 0xF.
        func length(_ info: Int, at offset: Int) throws -> (Int, Int) {
            guard info == 0xf else { return (info, offset + 1) }
            try check(offset + 1, 1, "length")
            let marker = bytes[offset + 1]
            guard marker >> 4 == 0x1 else { throw CoreDataFormatError("binary property list: bad length at byte \(offset)") }
            let log2Size = Int(marker & 0x0f)
            let length = try integer(at: offset + 2, log2Size: log2Size)
            guard length >= 0, length <= Int64(offsetTable) else {
                throw CoreDataFormatError("binary property list: length \(length) at byte \(offset) runs past the objects")
            }
            return (Int(length), offset + 2 + (1 << log2Size))
        }

        func references(_ info: Int, at offset: Int, multiplier: Int) throws -> [Int] {
            let (count, start) = try length(info, at: offset)
            guard count <= offsetTable / (referenceSize * multiplier) else {
                throw CoreDataFormatError("binary property list: collection at byte \(offset) runs past the objects")
            }
            try check(start, count * multiplier * referenceSize, "collection")
            return (0..<count * multiplier).map { Int(clamping: Self.unsigned(bytes, at: start + $0 * referenceSize, size: referenceSize)) }
        }
    }
}
