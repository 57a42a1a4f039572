/// One block of slots, shared by the rows cut from it: a fetch decodes its rows into blocks of many rows (one
/// allocation for up to `SlotRowWriter.fetchRowsPerBlock` rows, where an array per row was one each), and each
/// object and row-cache snapshot of those rows holds the block. The block goes when the last row cut from it does.
@usableFromInline
final class SlotBlock: ManagedBuffer<Int, Slot> {
    /// A block for `capacity` slots, none initialized yet.
    static func make(capacity: Int) -> SlotBlock {
        unsafeDowncast(SlotBlock.create(minimumCapacity: max(capacity, 1)) { _ in 0 }, to: SlotBlock.self)
    }

    /// Slots initialized so far (the rows cut from the block).
    var initialized: Int { withUnsafeMutablePointerToHeader { $0.pointee } }

    deinit {
        // Numbers and nulls need no destroying: skipped inline rather than through `Slot`'s destroy for each slot
        // (docs/performance-notes.md).
        withUnsafeMutablePointers { count, slots in
            for i in 0..<count.pointee {
                switch slots[i] {
                case .null, .integer, .real: continue
                default: (slots + i).deinitialize(count: 1)
                }
            }
        }
    }
}

/// An object's or a snapshot's values: a run of slots in a `SlotBlock`, with value semantics (a change copies the
/// row out of a shared block first, as an `Array` copies on write). Indices run from 0.
@usableFromInline
struct SlotRow: RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral {
    @usableFromInline var block: SlotBlock?
    // 32-bit offsets keep a row at 16 bytes: an object holds two (its values and its committed copy).
    @usableFromInline var start32: Int32
    @usableFromInline var count32: Int32

    @usableFromInline init(block: SlotBlock?, start: Int, count: Int) {
        self.block = block
        start32 = Int32(start)
        count32 = Int32(count)
    }

    @inlinable var start: Int { Int(start32) }
    @inlinable var count: Int { Int(count32) }

    /// No values.
    init() { self.init(block: nil, start: 0, count: 0) }

    /// The slots of `array`, in a block of their own.
    init(_ array: [Slot]) {
        guard !array.isEmpty else {
            self.init()
            return
        }
        let block = SlotBlock.make(capacity: array.count)
        block.withUnsafeMutablePointers { initialized, slots in
            array.withUnsafeBufferPointer { source in
                for i in 0..<source.count { (slots + i).initialize(to: source[i]) }
            }
            initialized.pointee = array.count
        }
        self.init(block: block, start: 0, count: array.count)
    }

    @usableFromInline init(arrayLiteral elements: Slot...) { self.init(elements) }

    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { count }
    @inlinable var isEmpty: Bool { count == 0 }

    @inlinable subscript(index: Int) -> Slot {
        @inline(__always) get {
            precondition(index >= 0 && index < count, "slot index out of range")
            return block.unsafelyUnwrapped.withUnsafeMutablePointerToElements { $0[start &+ index] }
        }
        set {
            precondition(index >= 0 && index < count, "slot index out of range")
            makeUnique()
            block.unsafelyUnwrapped.withUnsafeMutablePointerToElements { $0[index] = newValue }
        }
    }

    /// Writes slot `index` where it is, without copy-on-write: only for a row its holder knows no one else holds
    /// (`ManagedObject.storeSlot`).
    @inline(__always) func assignInPlace(_ value: Slot, at index: Int) {
        precondition(index >= 0 && index < count, "slot index out of range")
        block.unsafelyUnwrapped.withUnsafeMutablePointerToElements { $0[start &+ index] = value }
    }

    /// Sets every slot to null where it is (what the slots held is released now, not with the block): only for a
    /// row its holder knows no one else holds.
    func clearInPlace() {
        guard let block else { return }
        block.withUnsafeMutablePointerToElements { slots in
            for i in start..<(start + count) { slots[i] = .null }
        }
    }

    /// Copies the row into a block of its own unless it has one already (then `start` is 0).
    @usableFromInline mutating func makeUnique() {
        if start == 0, isKnownUniquelyReferenced(&block), block.unsafelyUnwrapped.initialized == count { return }
        self = SlotRow(Array(self))
    }

    /// The values as an array (a copy).
    var array: [Slot] { Array(self) }
}

/// Decodes a fetch's rows into shared blocks: each row is cut from the current block, and a new block starts when
/// the current one cannot hold the next row.
struct SlotRowWriter {
    /// Rows per block of a fetch: bounds what a row kept alive keeps of its neighbours (the block goes with its
    /// last row).
    static let fetchRowsPerBlock = 128
    /// Rows per block of a context's inserted objects: the context keeps its current block, so smaller.
    static let insertRowsPerBlock = 32

    private let rowsPerBlock: Int
    private var block: SlotBlock?
    private var used = 0
    private var capacity = 0

    init(rowsPerBlock: Int = SlotRowWriter.fetchRowsPerBlock) { self.rowsPerBlock = max(1, rowsPerBlock) }

    /// Lets go of the current block: the next row starts a new one, and the block goes with the last row cut
    /// from it.
    mutating func endBlock() {
        block = nil
        used = 0
        capacity = 0
    }

    /// A row of `width` slots, initialized by `fill` (which must initialize each of the `width` slots from the
    /// pointer it is given, in order).
    mutating func row(width: Int, _ fill: (UnsafeMutablePointer<Slot>) -> Void) -> SlotRow {
        guard width > 0 else { return SlotRow() }
        if block == nil || capacity - used < width {
            capacity = width * rowsPerBlock
            block = SlotBlock.make(capacity: capacity)
            used = 0
        }
        let block = block.unsafelyUnwrapped
        let start = used
        block.withUnsafeMutablePointers { initialized, slots in
            fill(slots + start)
            initialized.pointee = start + width
        }
        used += width
        return SlotRow(block: block, start: start, count: width)
    }
}
