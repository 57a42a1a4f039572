import Foundation

/// How a container opens its store (Core Data's `NSPersistentStoreDescription`): where, of which type, and with
/// which options and pragmas.
///
/// A value: change it in place through the container before `loadPersistentStores()`:
///
/// ```swift
/// container.persistentStoreDescriptions[0].type = .inMemory
/// container.persistentStoreDescriptions[0].setValue("OFF", forPragmaNamed: "synchronous")
/// ```
public struct PersistentStoreDescription: Sendable, Equatable, CustomStringConvertible {
    /// The store's file (ignored for an in-memory store; `/dev/null` makes an SQLite store in memory, as in Core
    /// Data).
    public var url: URL?
    /// The store type: `.sqlite` (the default) or `.inMemory`.
    public var type: PersistentStoreType = .sqlite
    /// Options as Core Data's options dictionary holds them; by default migration is automatic and inferred, as
    /// in Core Data.
    public var options: PersistentStoreOptions = [.migratesAutomatically, .infersMappingAutomatically]
    /// Pragmas in the order they were set (`setValue(_:forPragmaNamed:)`); checked when the store is added.
    public private(set) var pragmas: [(name: String, value: String)] = []

    /// A description of an SQLite store at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// A description of a store of `type` (an in-memory store needs no URL).
    public init(type: PersistentStoreType, url: URL? = nil) {
        self.type = type
        self.url = url
    }

    /// Core Data's `isReadOnly`: the store is opened read only (`PersistentStoreOptions.readOnly`).
    public var isReadOnly: Bool {
        get { options.contains(.readOnly) }
        set { options.set(.readOnly, newValue) }
    }

    /// Core Data's `shouldMigrateStoreAutomatically` (default true).
    public var shouldMigrateStoreAutomatically: Bool {
        get { options.contains(.migratesAutomatically) }
        set { options.set(.migratesAutomatically, newValue) }
    }

    /// Core Data's `shouldInferMappingModelAutomatically` (default true).
    public var shouldInferMappingModelAutomatically: Bool {
        get { options.contains(.infersMappingAutomatically) }
        set { options.set(.infersMappingAutomatically, newValue) }
    }

    /// Core Data's `NSPersistentHistoryTrackingKey` option: saves record persistent history.
    public var isPersistentHistoryTrackingEnabled: Bool {
        get { options.contains(.persistentHistoryTracking) }
        set { options.set(.persistentHistoryTracking, newValue) }
    }

    /// Core Data's `sqlitePragmas`: the pragmas set, by name.
    public var sqlitePragmas: [String: String] {
        Dictionary(pragmas.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Core Data's `setValue(_:forPragmaNamed:)`: sets a pragma the store runs when it opens (after Faultline's
    /// own WAL and `synchronous=NORMAL`, so that it wins), or removes it (nil). Names and values are checked when
    /// the store is added (`StorePragma`).
    public mutating func setValue(_ value: String?, forPragmaNamed name: String) {
        let existing = pragmas.firstIndex { $0.name.lowercased() == name.lowercased() }
        switch (value, existing) {
        case (let value?, let index?): pragmas[index].value = value
        case (let value?, nil): pragmas.append((name, value))
        case (nil, let index?): pragmas.remove(at: index)
        case (nil, nil): break
        }
    }

    /// The pragmas, checked.
    func checkedPragmas() throws -> [StorePragma] {
        try pragmas.map { try StorePragma($0.name, $0.value) }
    }

    /// Whether the two are equal.
    public static func == (a: PersistentStoreDescription, b: PersistentStoreDescription) -> Bool {
        a.url == b.url && a.type == b.type && a.options == b.options
            && a.pragmas.map(\.name) == b.pragmas.map(\.name) && a.pragmas.map(\.value) == b.pragmas.map(\.value)
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        "\(type) store" + (type == .inMemory ? "" : " at \(url?.path ?? "(no URL)")")
    }
}

extension PersistentStoreOptions {
    /// Inserts or removes `option`.
    fileprivate mutating func set(_ option: PersistentStoreOptions, _ on: Bool) {
        if on { insert(option) } else { remove(option) }
    }
}
