import CSQLite
import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B-MIGRATE: one model change (an attribute renamed, a required attribute with a default added) on a store of
    /// the scale's rows: Faultline's inferred migration, which copies the store as Core Data's does, against SQLite
    /// altering the table in place, and a step whose policy touches every object.
    static var migration: BenchScenario {
        BenchScenario(
            id: "migration", title: "Migrating a store: an inferred step (a copy) versus ALTER TABLE in place, and a step with a policy",
            claim: "A migration moves the data into a new store, so its cost grows with the rows (test it on real data, off the main thread); SQLite can add or rename a column in place in constant time; per-object migration code costs more still.",
            theme: .migration, sources: [ClaimSource.objcio("Model Versions and Migrating Data", "The Migration Process", "V9"), ClaimSource.objcio("Model Versions and Migrating Data", "Inferred Mapping Models", "V29", "V30")],
            ratios: [RatioSpec("inferred step (copy)", over: "ALTER TABLE in place"), RatioSpec("step with a policy", over: "inferred step (copy)")],
            variants: { setup in
                let bundle = try MigrationWorkload.bundle(in: setup.folder)
                let template = setup.folder.appendingPathComponent("template.sqlite")
                try MigrationWorkload.store(rows: setup.scale.rows, bundle: bundle, at: template)
                let run = setup.folder.appendingPathComponent("run.sqlite")
                func fresh() throws {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: run.path + suffix) }
                    try FileManager.default.copyItem(at: template, to: run)
                }
                var policies = MigrationPolicies()
                policies.set(MigrationWorkload.StockFromPrice(), forEntity: "Item", migratingTo: "Shop 2")
                return [
                    BenchVariant("inferred step (copy)", operations: setup.scale.rows) { probes in
                        try fresh()
                        return { try PersistentStoreCoordinator.migrateStore(at: run, toVersionOf: bundle, debug: false, probes: probes) }
                    },
                    BenchVariant("ALTER TABLE in place", role: .rawSQLite, operations: setup.scale.rows) { _ in
                        try fresh()
                        return {
                            var db: OpaquePointer?
                            guard sqlite3_open(run.path, &db) == SQLITE_OK else { throw BenchError("cannot open \(run.path)") }
                            defer { sqlite3_close(db) }
                            let sql = "BEGIN; ALTER TABLE ZITEM RENAME COLUMN ZTITLE TO ZHEADING; ALTER TABLE ZITEM ADD COLUMN ZSTOCK INTEGER DEFAULT 7; COMMIT"
                            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError(String(cString: sqlite3_errmsg(db))) }
                        }
                    },
                    BenchVariant("step with a policy", operations: setup.scale.rows) { probes in
                        try fresh()
                        return { try PersistentStoreCoordinator.migrateStore(at: run, toVersionOf: bundle, policies: policies, debug: false, probes: probes) }
                    },
                ]
            },
            judge: { m in
                guard let copy = m.ratio("inferred step (copy)", "ALTER TABLE in place"), let policy = m.ratio("step with a policy", "inferred step (copy)") else {
                    return Verdict(held: nil, "not measured")
                }
                return Verdict(held: copy > 1 && policy > 1,
                               "the copying step took \(BenchFormat.ratio(copy)) the in-place ALTER TABLE's time; the step with a policy \(BenchFormat.ratio(policy)) the inferred step's")
            })
    }
}

/// The migration scenario's model (two versions of a shop) and its data.
enum MigrationWorkload {
    struct StockFromPrice: EntityMigrationPolicy {
        func createDestinationInstances(forSource source: MigrationSource, in migration: MigrationContext) throws {
            try migration.destination(for: source, entity: "Item")?.setValue(Int32(((source["price"] as? Int64) ?? 0) % 100), forKey: "stock")
        }
    }

    /// The model bundle: `Shop` and `Shop 2` (the current one), and with `thirdVersion` a `Shop 3` that adds an
    /// optional note (then the current one).
    static func bundle(in folder: URL, thirdVersion: Bool = false) throws -> URL {
        let bundle = folder.appendingPathComponent("Shop.xcdatamodeld")
        var versions = [("Shop.xcdatamodel", """
            <entity name="Item"><attribute name="title" optional="YES" attributeType="String"/><attribute name="price" optional="YES" attributeType="Integer 64"/></entity>
            """), ("Shop 2.xcdatamodel", """
            <entity name="Item"><attribute name="heading" optional="YES" attributeType="String" elementID="title"/>
              <attribute name="price" optional="YES" attributeType="Integer 64"/><attribute name="stock" attributeType="Integer 32" defaultValueString="7"/></entity>
            """)]
        if thirdVersion {
            versions.append(("Shop 3.xcdatamodel", """
                <entity name="Item"><attribute name="heading" optional="YES" attributeType="String"/>
                  <attribute name="price" optional="YES" attributeType="Integer 64"/><attribute name="stock" attributeType="Integer 32" defaultValueString="7"/>
                  <attribute name="note" optional="YES" attributeType="String"/></entity>
                """))
        }
        for (name, entities) in versions {
            let version = bundle.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?><model type=\"com.apple.IDECoreDataModeler.DataModel\">\(entities)</model>".utf8)
                .write(to: version.appendingPathComponent("contents"))
        }
        try Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>_XCCurrentVersionName</key><string>\(versions.last!.0)</string></dict></plist>".utf8)
            .write(to: bundle.appendingPathComponent(".xccurrentversion"))
        return bundle
    }

    /// A version-1 store of `rows` items.
    static func store(rows: Int, bundle: URL, at url: URL) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(loadingContentsOf: bundle.appendingPathComponent("Shop.xcdatamodel")), probes: .disabled)
            try coordinator.addPersistentStore(at: url)
        }
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { throw BenchError("cannot open \(url.path)") }
        defer { sqlite3_close(db) }
        let sql = """
            BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZPRICE, ZTITLE) SELECT i, 1, 1, i * 3, 'item ' || i FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(rows) WHERE Z_ENT = 1;
            COMMIT;
            PRAGMA wal_checkpoint(TRUNCATE);
            """
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchError(String(cString: sqlite3_errmsg(db))) }
    }
}

extension ScenarioCatalogue {
    /// 001b §4.5-13 / W-004-12: a store migrated one version ahead, and through a chain of two versions.
    static var migrationChain: BenchScenario {
        let one = "one step (version 1 → 2)", chain = "a chain of two steps (1 → 2 → 3)"
        return BenchScenario(
            id: "migration-chain", title: "Migrating a store one version ahead, and through a chain of two versions",
            claim: "Migrations are progressive: a store several versions behind goes through each step in turn, each a copy of every row, so the cost grows with the steps as well as the rows.",
            theme: .migration,
            sources: [.objcio("Model Versions and Migrating Data", "Progressive Migrations", "§4.5-13"), ClaimSource(.studyNotes, "Advanced", "Migration", keys: ["W-004-12"])],
            ratios: [RatioSpec(chain, over: one)],
            variants: { setup in
                let bundle = try MigrationWorkload.bundle(in: setup.folder.appendingPathComponent("chain"), thirdVersion: true)
                let rows = setup.scale.part(4, minimum: 500)
                let template = setup.folder.appendingPathComponent("chain-template.sqlite")
                try MigrationWorkload.store(rows: rows, bundle: bundle, at: template)
                return [(one, "Shop 2"), (chain, "Shop 3")].map { name, version in
                    let run = setup.folder.appendingPathComponent("chain-\(version.filter(\.isNumber)).sqlite")
                    return BenchVariant(name, operations: rows) { probes in
                        try DataSets.copy(template, to: run)
                        return { try PersistentStoreCoordinator.migrateStore(at: run, toVersionOf: bundle, version: version, debug: false, probes: probes) }
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(one), let b = m.counters(chain), let ratio = m.ratio(chain, one) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: b.statements > a.statements * 3 / 2 && ratio > 1.5,
                               "statements: \(a.statements) for one step, \(b.statements) for the chain; the chain takes \(BenchFormat.ratio(ratio)) the time")
            })
    }
}
