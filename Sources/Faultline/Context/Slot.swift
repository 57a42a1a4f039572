import Foundation

/// One value in an object's flat value array, in its stored form.
///
/// Row-cache snapshots only ever hold `.null`, `.integer`, `.real`, `.text` and `.blob`, which is why the type can
/// be shared across threads; `.object` and `.many` live only in a context's own objects.
@usableFromInline
enum Slot: @unchecked Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
    /// A to-one relationship set in memory.
    case object(ManagedObject)
    /// A fired to-many relationship.
    case many(ToManyStorage)

    var isNull: Bool { if case .null = self { return true }; return false }

    /// True for a to-one's object and a to-many's storage.
    var holdsObject: Bool {
        switch self {
        case .object, .many: return true
        case .null, .integer, .real, .text, .blob: return false
        }
    }
}
