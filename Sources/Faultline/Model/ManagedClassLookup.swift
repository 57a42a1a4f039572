import Foundation
import Synchronization

/// Finds the Swift class an entity's `representedClassName` names, as Core Data finds an entity's class from the
/// model: a module-qualified name (`MyApp.Item`) directly; a bare name (`Item`, or Xcode's
/// `$(PRODUCT_MODULE_NAME).Item` and `.Item`) in each module of `ManagedObjectModel.classModules`.
enum ManagedClassLookup {
    /// The modules searched for bare class names (see `ManagedObjectModel.classModules`).
    static let modules = Mutex<[String]>(defaultModules)

    /// The main program's module, as SwiftPM names an executable target's module after the executable.
    static var defaultModules: [String] {
        let name = ProcessInfo.processInfo.processName
        let module = String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        return module.isEmpty || module.first?.isNumber == true ? [] : [module]
    }

    /// The class names Core Data uses for "no class of its own".
    static func isGeneric(_ name: String) -> Bool {
        name.isEmpty || name == "NSManagedObject" || name == "ManagedObject"
    }

    /// The `ManagedObject` subclass `name` stands for, or nil when there is none to be found.
    static func managedClass(named name: String, modules: [String]) -> ManagedObject.Type? {
        var bare = name
        for prefix in ["$(PRODUCT_MODULE_NAME).", "."] where bare.hasPrefix(prefix) { bare = String(bare.dropFirst(prefix.count)) }
        guard !isGeneric(bare), bare.utf8.count <= maximumNameBytes else { return nil }
        if bare == name, bare.contains("."), let type = _typeByName(bare) as? ManagedObject.Type { return type }
        for module in modules {
            if let type = _typeByName(module + "." + bare) as? ManagedObject.Type { return type }
        }
        return nil
    }

    /// The longest class name looked up (a model is input: a hostile one cannot make the runtime demangle megabytes).
    static let maximumNameBytes = 1_000
}

extension ManagedObjectModel {
    /// The modules in which a model's bare class names (`representedClassName="Item"`, as Xcode writes them) are
    /// looked up when a model is made; by default the main program's module. A qualified name (`MyApp.Item`) needs
    /// none. Set it before loading a model whose classes live in a library or a test target; `register(_:forEntityName:)`
    /// still chooses a class by hand.
    public static var classModules: [String] {
        get { ManagedClassLookup.modules.withLock { $0 } }
        set { ManagedClassLookup.modules.withLock { $0 = newValue } }
    }

    /// Gives each entity the class its `representedClassName` names, when the process has it; returns the names
    /// it could not find, by entity.
    func resolveRepresentedClasses() -> [String: String] {
        let modules = Self.classModules
        var missing: [String: String] = [:]
        for entity in entities where !entity.hasCustomClass {
            guard let name = entity.representedClassName, !ManagedClassLookup.isGeneric(name) else { continue }
            if let type = ManagedClassLookup.managedClass(named: name, modules: modules) {
                entity.register(type)
            } else {
                missing[entity.name] = name
            }
        }
        return missing
    }
}
