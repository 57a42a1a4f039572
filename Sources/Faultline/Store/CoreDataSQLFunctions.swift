import CSQLite
import Foundation

/// Rows whose derived attributes a trigger recomputed during a write (Core Data's triggers report each through
/// `NSCoreDataDATrigger…AffectedObjectValue`): their cached snapshots are stale once the write commits.
final class DerivedValueChanges {
    private(set) var rows: [(table: String, key: Int64)] = []
    /// More rows than `Limits.derivedValueChanges` changed: every cached row is to be dropped.
    private(set) var overflowed = false

    func add(table: String, key: Int64) {
        guard !overflowed else { return }
        guard rows.count < Limits.derivedValueChanges else {
            overflowed = true
            rows.removeAll()
            return
        }
        rows.append((table, key))
    }

    func drain() -> (rows: [(table: String, key: Int64)], overflowed: Bool) {
        defer { rows.removeAll(keepingCapacity: true); overflowed = false }
        return (rows, overflowed)
    }
}

/// Core Data's own SQL functions and collations, which the triggers, indexes and views of a store it wrote call
/// (docs/store-format.md, "Core Data's SQL functions"): registered on every connection, so that writing to such a
/// store runs its triggers instead of failing with "no such function".
///
/// - `NSCoreDataNow()`: the current time in seconds since 2001-01-01 (Core Data's date columns).
/// - `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue`, `NSCoreDataDATriggerUpdatedAffectedObjectValue`,
///   `NSCoreDataTriggerUpdateAffectedObjectValue` `(table, Z_ENT, Z_PK, property, value)`: a trigger recomputed a
///   derived value; returns NULL and notes the row, whose cached snapshot the coordinator drops after the write.
/// - `NSCoreDataToUpper`, `NSCoreDataToLower`, `NSCoreDataCanonical` (case- and diacritic-folded, lower case).
/// - `NSCoreDataLike`, `NSCoreDataMatches`, `NSCoreDataStringSearch`, `NSCoreDataStringCompare`: their arguments are
///   not documented; calling one is an error naming it, never a guess.
/// - Collations `NSCollateNoCase`, `NSCollateNumericallyNoCase`, `NSCollateLocaleSensitive`,
///   `NSCollateLocaleSensitiveNoCase`, `NSCollateFinderlike`.
enum CoreDataSQLFunctions {
    static let derivedValueHooks = [
        "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "NSCoreDataDATriggerUpdatedAffectedObjectValue",
        "NSCoreDataTriggerUpdateAffectedObjectValue",
    ]
    static let unimplemented = ["NSCoreDataLike", "NSCoreDataMatches", "NSCoreDataStringSearch", "NSCoreDataStringCompare"]

    /// Registers the functions and collations on `db`; derived-value notes go to `changes` (none when nil).
    static func register(on db: OpaquePointer, changes: DerivedValueChanges?) {
        let pointer = changes.map { Unmanaged.passUnretained($0).toOpaque() }
        sqlite3_create_function_v2(db, "NSCoreDataNow", 0, SQLITE_UTF8, nil, { context, _, _ in
            sqlite3_result_double(context, Date().timeIntervalSinceReferenceDate)
        }, nil, nil, nil)
        for name in derivedValueHooks {
            sqlite3_create_function_v2(db, name, 5, SQLITE_UTF8, pointer, { context, _, arguments in
                defer { sqlite3_result_null(context) }
                guard let user = sqlite3_user_data(context), let arguments, sqlite3_value_type(arguments[2]) == SQLITE_INTEGER,
                      let table = SQLFunctions.text(arguments[0]) else { return }
                Unmanaged<DerivedValueChanges>.fromOpaque(user).takeUnretainedValue().add(table: table, key: sqlite3_value_int64(arguments[2]))
            }, nil, nil, nil)
        }
        let deterministic = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        for (name, transform) in [("NSCoreDataToUpper", 0), ("NSCoreDataToLower", 1), ("NSCoreDataCanonical", 2)] {
            sqlite3_create_function_v2(db, name, 1, deterministic, UnsafeMutableRawPointer(bitPattern: transform + 1), { context, _, arguments in
                guard let arguments, let text = SQLFunctions.text(arguments[0]) else {
                    if let arguments { sqlite3_result_value(context, arguments[0]) } else { sqlite3_result_null(context) }
                    return
                }
                switch Int(bitPattern: sqlite3_user_data(context)) - 1 {
                case 0: SQLFunctions.result(context, text.uppercased())
                case 1: SQLFunctions.result(context, text.lowercased())
                default: SQLFunctions.result(context, SQLFunctions.fold(text, flags: 3))
                }
            }, nil, nil, nil)
        }
        for name in unimplemented {
            sqlite3_create_function_v2(db, name, -1, SQLITE_UTF8, nil, { context, _, _ in
                sqlite3_result_error(context, "a Core Data SQL function whose arguments are not documented (NSCoreDataLike, NSCoreDataMatches, NSCoreDataStringSearch, NSCoreDataStringCompare) is not implemented by Faultline", -1)
            }, nil, nil, nil)
        }
        let collations: [(String, Int)] = [
            ("NSCollateNoCase", 0), ("NSCollateNumericallyNoCase", 1), ("NSCollateLocaleSensitive", 2),
            ("NSCollateLocaleSensitiveNoCase", 3), ("NSCollateFinderlike", 4),
        ]
        for (name, kind) in collations {
            sqlite3_create_collation_v2(db, name, SQLITE_UTF8, UnsafeMutableRawPointer(bitPattern: kind + 1), { user, length1, bytes1, length2, bytes2 in
                let a = CoreDataSQLFunctions.string(bytes1, length1), b = CoreDataSQLFunctions.string(bytes2, length2)
                let order: ComparisonResult
                switch Int(bitPattern: user) - 1 {
                case 0: order = a.compare(b, options: .caseInsensitive)
                case 1: order = a.compare(b, options: [.caseInsensitive, .numeric])
                case 2: order = a.compare(b, options: [], range: nil, locale: Locale.current)
                case 3: order = a.compare(b, options: .caseInsensitive, range: nil, locale: Locale.current)
                default: order = a.compare(b, options: [.caseInsensitive, .numeric, .diacriticInsensitive, .widthInsensitive], range: nil, locale: Locale.current)
                }
                return order == .orderedAscending ? -1 : order == .orderedDescending ? 1 : 0
            }, nil)
        }
    }

    /// A collation's argument: `length` bytes of UTF-8, not terminated.
    private static func string(_ bytes: UnsafeRawPointer?, _ length: Int32) -> String {
        guard let bytes, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(length)), as: UTF8.self)
    }
}
