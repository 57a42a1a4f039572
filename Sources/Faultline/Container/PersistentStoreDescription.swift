import Foundation

/// How a container opens its store (Core Data's `NSPersistentStoreDescription`): where, of which type, and with
/// which options and pragmas.
///
/// A class, as in Core Data: configure the container's own description, or make one and give it to the container,
/// before `loadPersistentStores()`:
///
/// ```swift
/// container.persistentStoreDescriptions.first?.url = URL(fileURLWithPath: "/dev/null")
/// let description = PersistentStoreDescription()
/// description.type = .inMemory
/// description.setValue("OFF", forPragmaNamed: "synchronous")
/// container.persistentStoreDescriptions = [description]
/// ```
///
/// Thread-safe: its properties are read and written under a lock.
public final class PersistentStoreDescription: @unchecked Sendable, Equatable, CustomStringConvertible {
    private struct State {
        var url: URL?
        var type: PersistentStoreType = .sqlite
        var options: PersistentStoreOptions = [.migratesAutomatically, .infersMappingAutomatically]
        var pragmas: [(name: String, value: String)] = []
        /// A known option key given a value of the wrong kind (`setOption`), reported when the store loads.
        var invalidOption: String?
    }
    private let lock = NSLock()
    private var state = State()

    private func read<T>(_ body: (State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(state)
    }

    private func write(_ body: (inout State) -> Void) {
        lock.lock()
        body(&state)
        lock.unlock()
    }

    /// The store's file (ignored for an in-memory store; `/dev/null` makes an SQLite store in memory, as in Core
    /// Data).
    public var url: URL? {
        get { read(\.url) }
        set { write { $0.url = newValue } }
    }
    /// The store type: `.sqlite` (the default) or `.inMemory`.
    public var type: PersistentStoreType {
        get { read(\.type) }
        set { write { $0.type = newValue } }
    }
    /// Options as Core Data's options dictionary holds them; by default migration is automatic and inferred, as
    /// in Core Data.
    public var options: PersistentStoreOptions {
        get { read(\.options) }
        set { write { $0.options = newValue } }
    }
    /// Pragmas in the order they were set (`setValue(_:forPragmaNamed:)`); checked when the store is added.
    public var pragmas: [(name: String, value: String)] { read(\.pragmas) }

    /// A description of an SQLite store with no URL yet (Core Data's `init()`): set `url`, or `type = .inMemory`.
    public init() {}

    /// A description of an SQLite store at `url`.
    public init(url: URL) {
        state.url = url
    }

    /// A description of a store of `type` (an in-memory store needs no URL).
    public init(type: PersistentStoreType, url: URL? = nil) {
        state.type = type
        state.url = url
    }

    /// Core Data's `isReadOnly`: the store is opened read only (`PersistentStoreOptions.readOnly`).
    public var isReadOnly: Bool {
        get { options.contains(.readOnly) }
        set { write { $0.options.set(.readOnly, newValue) } }
    }

    /// Core Data's `shouldMigrateStoreAutomatically` (default true).
    public var shouldMigrateStoreAutomatically: Bool {
        get { options.contains(.migratesAutomatically) }
        set { write { $0.options.set(.migratesAutomatically, newValue) } }
    }

    /// Core Data's `shouldInferMappingModelAutomatically` (default true).
    public var shouldInferMappingModelAutomatically: Bool {
        get { options.contains(.infersMappingAutomatically) }
        set { write { $0.options.set(.infersMappingAutomatically, newValue) } }
    }

    /// Core Data's `NSPersistentHistoryTrackingKey` option: saves record persistent history.
    public var isPersistentHistoryTrackingEnabled: Bool {
        get { options.contains(.persistentHistoryTracking) }
        set { write { $0.options.set(.persistentHistoryTracking, newValue) } }
    }

    /// Core Data's `sqlitePragmas`: the pragmas set, by name.
    public var sqlitePragmas: [String: String] {
        Dictionary(pragmas.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Core Data's `setValue(_:forPragmaNamed:)`: sets a pragma the store runs when it opens (after Faultline's
    /// own WAL and `synchronous=NORMAL`, so that it wins), or removes it (nil). Names and values are checked when
    /// the store is added (`StorePragma`).
    public func setValue(_ value: String?, forPragmaNamed name: String) {
        write { state in
            let existing = state.pragmas.firstIndex { $0.name.lowercased() == name.lowercased() }
            switch (value, existing) {
            case (let value?, let index?): state.pragmas[index].value = value
            case (let value?, nil): state.pragmas.append((name, value))
            case (nil, let index?): state.pragmas.remove(at: index)
            case (nil, nil): break
            }
        }
    }

    /// Core Data's `setOption(_:forKey:)` with Core Data's keys: `MigratePersistentStoresAutomaticallyOption`,
    /// `InferMappingModelAutomaticallyOption`, `PersistentHistoryTrackingKey`, `ReadOnlyPersistentStoreOption`,
    /// `PersistentStoreRemoteChangeNotificationPostOptionKey` (a Boolean; nil clears it) and `SQLitePragmasOption` (a dictionary of pragmas). Other keys are ignored, as the
    /// options Faultline has no use for; a known key with a value of the wrong kind is reported when the store loads.
    public func setOption(_ option: Any?, forKey key: String) {
        let flags: [String: PersistentStoreOptions] = [
            MigratePersistentStoresAutomaticallyOption: .migratesAutomatically, InferMappingModelAutomaticallyOption: .infersMappingAutomatically,
            PersistentHistoryTrackingKey: .persistentHistoryTracking, ReadOnlyPersistentStoreOption: .readOnly,
            PersistentStoreRemoteChangeNotificationPostOptionKey: .postsRemoteChangeNotifications,
        ]
        if let flag = flags[key] {
            let on = (option as? Bool) ?? (option as? NSNumber)?.boolValue
            write { state in
                state.options.set(flag, on ?? false)
                if option != nil && on == nil { state.invalidOption = key }
            }
        } else if key == SQLitePragmasOption {
            guard let pragmas = option as? [String: Any] else {
                write { $0.invalidOption = option == nil ? nil : key }
                return
            }
            for (name, value) in pragmas.sorted(by: { $0.key < $1.key }) { setValue("\(value)", forPragmaNamed: name) }
        }
    }

    /// The pragmas, checked.
    func checkedPragmas() throws -> [StorePragma] {
        if let key = read(\.invalidOption) {
            throw StoreError.invalidConfiguration("the option \(key) was given a value of the wrong kind (a Boolean, or for \(SQLitePragmasOption) a dictionary)")
        }
        return try pragmas.map { try StorePragma($0.name, $0.value) }
    }

    /// Whether the two describe the same store the same way.
    public static func == (a: PersistentStoreDescription, b: PersistentStoreDescription) -> Bool {
        if a === b { return true }
        let (x, y) = (a.read { $0 }, b.read { $0 })
        return x.url == y.url && x.type == y.type && x.options == y.options
            && x.pragmas.map(\.name) == y.pragmas.map(\.name) && x.pragmas.map(\.value) == y.pragmas.map(\.value)
    }

    /// The text `print` and `String(describing:)` show.
    public var description: String {
        let (type, url) = read { ($0.type, $0.url) }
        return "\(type) store" + (type == .inMemory ? "" : " at \(url?.path ?? "(no URL)")")
    }
}

extension PersistentStoreOptions {
    /// Inserts or removes `option`.
    fileprivate mutating func set(_ option: PersistentStoreOptions, _ on: Bool) {
        if on { insert(option) } else { remove(option) }
    }
}
