import Foundation

/// A Core Data stack in one object (Core Data's `NSPersistentContainer`): the model, a coordinator, its store's
/// description, a main-queue `viewContext`, and background contexts on demand.
///
/// ```swift
/// let container = PersistentContainer(name: "Company", managedObjectModel: model)
/// container.persistentStoreDescriptions[0].type = .inMemory
/// try container.loadPersistentStores()
/// let count = try await container.performBackgroundTask { context in
///     try context.count(for: FetchRequest<ManagedObject>(entityName: "Department"))
/// }
/// ```
///
/// Thread-safe: share it between tasks; each context it makes is an isolation domain of its own.
public final class PersistentContainer: @unchecked Sendable {
    /// The container's name: the default store's file name (`<name>.sqlite`).
    public let name: String
    /// The model of every store and context.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator the contexts share.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The main-queue context, for user interface work (on a server, use background contexts).
    public let viewContext: ManagedObjectContext
    /// Guards `descriptions` (an `NSLock`: ThreadSanitizer sees it, where it does not see a `Mutex`'s futex).
    private let lock = NSLock()
    private var descriptions: [PersistentStoreDescription]

    /// Why the model could not be found or read (`init(name:)`): `loadPersistentStores()` throws it.
    private let modelError: Error?

    /// Core Data's `init(name:)`: the model named `name` (`<name>.momd`, `.xcdatamodeld`, `.mom` or `.json`), found
    /// in `ManagedObjectModel.modelSearchFolders`. When there is none, or it cannot be read, the container has an
    /// empty model and `loadPersistentStores()` fails with an error naming the folders searched (Core Data logs
    /// "Failed to load model named …").
    public convenience init(name: String, probes: Probes = .shared) {
        let folders = ManagedObjectModel.modelSearchFolders
        var failure: Error? = ModelNotFound(name: name, folders: folders, failure: nil)
        var model: ManagedObjectModel? = nil
        if let url = ManagedObjectModel.url(forModelNamed: name, in: folders) {
            do {
                model = try ManagedObjectModel(loadingContentsOf: url)
                failure = nil
            } catch {
                failure = ModelNotFound(name: name, folders: folders, failure: error)
            }
        }
        self.init(name: name, model: model ?? (try? ManagedObjectModel(entities: [])), modelError: failure, probes: probes)
    }

    /// A container for `model`, with one description: an SQLite store named `<name>.sqlite` in
    /// `defaultDirectoryURL()`. Change the descriptions, then call `loadPersistentStores()`.
    public convenience init(name: String, managedObjectModel: ManagedObjectModel, probes: Probes = .shared) {
        self.init(name: name, model: managedObjectModel, modelError: nil, probes: probes)
    }

    private init(name: String, model: ManagedObjectModel?, modelError: Error?, probes: Probes) {
        // An empty model always builds; the fallback only satisfies the type.
        let managedObjectModel = model ?? { fatalError("an empty model failed to build") }()
        self.modelError = modelError
        self.name = name
        self.managedObjectModel = managedObjectModel
        persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: managedObjectModel, probes: probes)
        viewContext = ManagedObjectContext(.mainQueue, coordinator: persistentStoreCoordinator)
        viewContext.name = "viewContext"
        descriptions = [PersistentStoreDescription(url: Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite"))]
    }

    /// Where default stores go: `FAULTLINE_STORE_DIRECTORY` when set, else the user's application support folder
    /// (`~/.local/share` on Linux, as Foundation gives it), as Core Data's `defaultDirectoryURL()`.
    public static func defaultDirectoryURL() -> URL {
        if let folder = ProcessInfo.processInfo.environment["FAULTLINE_STORE_DIRECTORY"], !folder.isEmpty {
            return URL(fileURLWithPath: folder, isDirectory: true)
        }
        return FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
    }

    /// The stores to open (Core Data's `persistentStoreDescriptions`); set them before `loadPersistentStores()`.
    /// Faultline's coordinator holds one store, so a second description fails to load.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get {
            lock.lock()
            defer { lock.unlock() }
            return descriptions
        }
        set {
            lock.lock()
            descriptions = newValue
            lock.unlock()
        }
    }

    /// Adds the described stores to the coordinator, in order; throws the first failure (a `StoreError` naming
    /// the store and why). An SQLite store's folder is created when absent.
    public func loadPersistentStores() throws {
        for description in persistentStoreDescriptions { try load(description) }
    }

    /// Core Data's `loadPersistentStores(completionHandler:)`: adds each described store and calls `handler`
    /// with it and its error, or nil (synchronously, on the caller's thread).
    public func loadPersistentStores(completionHandler handler: (PersistentStoreDescription, Error?) -> Void) {
        for description in persistentStoreDescriptions {
            do {
                try load(description)
                handler(description, nil)
            } catch {
                handler(description, error)
            }
        }
    }

    private func load(_ description: PersistentStoreDescription) throws {
        if let modelError { throw modelError }
        let pragmas = try description.checkedPragmas()
        var url = description.url
        if description.type == .sqlite, let file = url, file.path != "/dev/null", !description.isReadOnly {
            let folder = file.deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw StoreError.invalidConfiguration("the store's folder '\(folder.path)' cannot be created: \(error.localizedDescription)")
            }
        }
        // Core Data's habit for a store in memory: an SQLite store at /dev/null.
        let type = description.type == .sqlite && url?.path == "/dev/null" ? .inMemory : description.type
        if type == .inMemory { url = nil }
        try persistentStoreCoordinator.addPersistentStore(type: type, at: url, options: description.options, pragmas: pragmas)
    }

    /// A new private-queue context on the coordinator (Core Data's `newBackgroundContext()`).
    public func newBackgroundContext() -> ManagedObjectContext {
        ManagedObjectContext(.privateQueue, coordinator: persistentStoreCoordinator)
    }

    /// Runs `block` on a new background context's queue (Core Data's `performBackgroundTask(_:)`).
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new background context's queue and returns its value to the awaiting task.
    public func performBackgroundTask<T: Sendable, Failure: Error>(
        _ block: @escaping @Sendable (ManagedObjectContext) throws(Failure) -> T
    ) async throws(Failure) -> T {
        let context = newBackgroundContext()
        return try await context.perform(schedule: .enqueued) { () throws(Failure) -> T in try block(context) }
    }
}
