import Foundation
import XCTest
@testable import Faultline

/// Collects log lines (thread-safe), with timings masked so that lines compare exactly.
final class LineCollector: @unchecked Sendable {
    private var stored: [String] = []
    private let lock = NSLock()
    func append(_ line: String) { lock.lock(); stored.append(line); lock.unlock() }
    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored.map { $0.replacingOccurrences(of: #"\d+\.\d{4}s"#, with: "T", options: .regularExpression) }
    }
    func removeAll() { lock.lock(); stored.removeAll(); lock.unlock() }
}

final class ProbeTests: XCTestCase {
    func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "Dog", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "walks", destination: "Walk", inverse: "dog", isToMany: true),
            ]),
            EntityDescription(name: "Walk", properties: [
                AttributeDescription(name: "distance", type: .integer32),
                RelationshipDescription(name: "dog", destination: "Dog", inverse: "walks"),
            ]),
        ])
    }

    /// A store with one dog and three walks, written without probes; returns its path.
    func seed(_ dir: TemporaryDirectory) throws -> URL {
        let url = dir.file("dogs.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model(), probes: .disabled)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Fido", forKey: "name")
            for d in [3, 5, 8] {
                let walk = try context.insertNewObject(forEntityName: "Walk")
                try walk.setValue(d, forKey: "distance")
                try walk.setValue(dog, forKey: "dog")
            }
            try context.save()
        }
        return url
    }

    func stack(level: Int, url: URL, recorder: InMemoryProbeRecorder? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext, LineCollector) {
        let lines = LineCollector()
        let logger = SQLDebugLogger(level: level) { lines.append($0) }
        let context = try self.context(url: url, probes: Probes(configuration: ProbeConfiguration(), recorders: [logger] + (recorder.map { [$0] } ?? [])))
        return (context.coordinator, context, lines)
    }

    /// A private-queue context on the store at `url`, through a coordinator with `probes`.
    func context(url: URL, probes: Probes) throws -> ManagedObjectContext {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model(), probes: probes)
        try coordinator.addPersistentStore(at: url)
        return ManagedObjectContext(.privateQueue, coordinator: coordinator)
    }

    func testLevelOneLinesForFetchFaultsAndSave() throws {
        let dir = TemporaryDirectory()
        let url = try seed(dir)
        let (_, context, lines) = try stack(level: 1, url: url)
        XCTAssertEqual(lines.lines.first, "Faultline: annotation: Connecting to sqlite database file at \"\(url.path)\"")
        lines.removeAll()
        try context.performAndWait {
            // A fetch: its SQL, SQLite's time, the total.
            let walks = try context.fetch(FetchRequest<ManagedObject>(entityName: "Walk", predicate: try ObjectPredicate(parsing: "distance > %d", 4)))
            XCTAssertEqual(lines.lines, [
                "Faultline: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZDISTANCE, t0.ZDOG FROM ZWALK t0 WHERE t0.ZDISTANCE > ?",
                "Faultline: annotation: sql connection fetch time: T",
                "Faultline: annotation: total fetch execution time: T for 2 rows.",
            ])
            // A fault from the row cache: no line, no statement.
            lines.removeAll()
            XCTAssertEqual(walks[0].value(forKey: "distance") as? Int32, 5)
            XCTAssertEqual(lines.lines, [])
            // A fault from the database: Core Data's four-part sequence.
            let dog = try XCTUnwrap(walks[0].value(forKey: "dog") as? ManagedObject)
            _ = dog.value(forKey: "name")
            XCTAssertEqual(lines.lines, [
                "Faultline: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZDOG t0 WHERE t0.Z_PK = ?",
                "Faultline: annotation: sql connection fetch time: T",
                "Faultline: annotation: total fetch execution time: T for 1 rows.",
                "Faultline: annotation: fault fulfilled from database for : <\(dog.objectID.uriString)>",
            ])
            // A to-many relationship fault.
            lines.removeAll()
            XCTAssertEqual(dog.count(forRelationship: "walks"), 3)
            XCTAssertEqual(lines.lines, [
                "Faultline: sql: SELECT 0, t0.Z_PK FROM ZWALK t0 WHERE t0.ZDOG = ?",
                "Faultline: annotation: sql connection fetch time: T",
                "Faultline: annotation: to-many relationship fault \"walks\" for objectID <\(dog.objectID.uriString)> fulfilled from database.  Got 3 rows",
            ])
            // A save: the statements Core Data prints, then the save time it does not.
            lines.removeAll()
            try dog.setValue("Rex", forKey: "name")
            let walk = try context.insertNewObject(forEntityName: "Walk")
            try walk.setValue(dog, forKey: "dog")
            try context.save()
            XCTAssertEqual(lines.lines, [
                "Faultline: sql: BEGIN EXCLUSIVE", "Faultline: annotation: sql execution time: T",
                "Faultline: sql: SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?", "Faultline: annotation: sql execution time: T",
                "Faultline: sql: UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ? AND Z_MAX = ?", "Faultline: annotation: sql execution time: T",
                "Faultline: sql: COMMIT", "Faultline: annotation: sql execution time: T",
                "Faultline: sql: BEGIN EXCLUSIVE", "Faultline: annotation: sql execution time: T",
                "Faultline: sql: INSERT INTO ZWALK(Z_PK, Z_ENT, Z_OPT, ZDISTANCE, ZDOG) VALUES(?, ?, ?, ?, ?)", "Faultline: annotation: sql execution time: T",
                "Faultline: sql: UPDATE ZDOG SET ZNAME = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?", "Faultline: annotation: sql execution time: T",
                "Faultline: sql: COMMIT", "Faultline: annotation: sql execution time: T",
                "Faultline: annotation: save execution time: T for 1 inserted, 1 updated, 0 deleted objects.",
            ])
        }
    }

    func testBatchedFetchLines() throws {
        let dir = TemporaryDirectory()
        let url = try seed(dir)
        let (_, context, lines) = try stack(level: 1, url: url)
        lines.removeAll()
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Walk", sortDescriptors: [FetchSortDescriptor(keyPath: "distance", ascending: false)])
            request.fetchBatchSize = 2
            let walks = try context.fetch(request)
            XCTAssertEqual(lines.lines, [
                "Faultline: sql: SELECT 0, t0.Z_PK FROM ZWALK t0 ORDER BY t0.ZDISTANCE DESC",
                "Faultline: annotation: sql connection fetch time: T",
                "Faultline: annotation: total fetch execution time: T for 3 rows.",
            ])
            lines.removeAll()
            _ = walks[0].value(forKey: "distance")
            XCTAssertEqual(lines.lines, [
                // The batch's keys are one bound JSON array (Core Data binds an int array table, `_Z_intarray0`).
                "Faultline: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZDISTANCE, t0.ZDOG FROM ZWALK t0 WHERE t0.Z_PK IN (SELECT value FROM json_each(?))",
                "Faultline: annotation: sql connection fetch time: T",
                "Faultline: annotation: total fetch execution time: T for 2 rows.",
            ], "one statement fulfils the batch")
        }
    }

    func testHigherLevelsAddBindsValuesAndPlans() throws {
        let dir = TemporaryDirectory()
        let url = try seed(dir)
        let (_, context, lines) = try stack(level: 4, url: url)
        lines.removeAll()
        try context.performAndWait {
            let dogs = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog", predicate: try ObjectPredicate(parsing: "name == %@", "Fido")))
            XCTAssertEqual(lines.lines, [
                "Faultline: sql: SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZDOG t0 WHERE t0.ZNAME = ?",
                "Faultline: details: SQLite bind[0] = \"Fido\"",
                "Faultline: annotation: sql connection fetch time: T",
                "Faultline: details: SQLite: EXPLAIN QUERY PLAN SELECT 0, t0.Z_PK, t0.Z_OPT, t0.ZNAME FROM ZDOG t0 WHERE t0.ZNAME = ?",
                "Faultline: details: SQLite: 2|0|0|SCAN t0",
                "Faultline: annotation: total fetch execution time: T for 1 rows.",
                "Faultline: annotation: fetch on entity 'Dog' returned 1 rows with values: (\(dogs[0].objectID.uriString))",
            ])
            // The plan is captured once per distinct SQL.
            lines.removeAll()
            _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Dog", predicate: try ObjectPredicate(parsing: "name == %@", "Rex")))
            XCTAssertFalse(lines.lines.contains { $0.contains("EXPLAIN") })
        }
        let (_, fresh, freshLines) = try stack(level: 3, url: url)
        freshLines.removeAll()
        fresh.performAndWait {
            let dog = fresh.object(with: ManagedObjectID(entity: fresh.model.entity(named: "Dog")!, key: 1, storeIdentifier: fresh.coordinator.storeIdentifier))
            _ = dog.value(forKey: "name")
            XCTAssertEqual(freshLines.lines.last, "Faultline: annotation: fault fulfilled from database for : <\(dog.objectID.uriString)> with row values: {name = \"Fido\"}")
        }
    }

    /// A context on the seeded store whose probes record in memory and write a trace file in `dir`.
    func tracedContext(_ dir: TemporaryDirectory, _ configuration: ProbeConfiguration = ProbeConfiguration()) throws
        -> (ManagedObjectContext, Probes, InMemoryProbeRecorder, String) {
        let url = try seed(dir)
        let recorder = InMemoryProbeRecorder()
        let tracePath = dir.file("trace.jsonl").path
        let probes = Probes(configuration: configuration, recorders: [recorder, try TraceWriter(path: tracePath)])
        return (try context(url: url, probes: probes), probes, recorder, tracePath)
    }

    /// Off by default (it reads the clock four times a row): fetch events then leave the split at 0, and the trace
    /// leaves its fields out.
    func testFetchTimeIsNotSplitUnlessAsked() throws {
        let dir = TemporaryDirectory()
        let (context, probes, recorder, tracePath) = try tracedContext(dir)
        try context.performAndWait { _ = try context.fetch(FetchRequest<ManagedObject>(entityName: "Walk")) }
        let fetch = try XCTUnwrap(recorder.events.compactMap { event -> FetchEvent? in if case .fetch(let f) = event { return f }; return nil }.first)
        XCTAssertEqual([fetch.stepTime, fetch.rowCacheTime], [0, 0])
        XCTAssertGreaterThan(fetch.sqlTime, 0)
        probes.flush()
        let text = try String(contentsOfFile: tracePath, encoding: .utf8)
        XCTAssertFalse(text.contains("stepTime") || text.contains("rowCacheTime"))
        XCTAssertTrue(ProbeConfiguration(environment: ["FAULTLINE_FETCH_PHASES": "1"], arguments: []).splitsFetchTime)
        XCTAssertFalse(ProbeConfiguration(environment: [:], arguments: []).splitsFetchTime)
    }

    func testEventsCacheMissesAndTraceFile() throws {
        let dir = TemporaryDirectory()
        let (context, probes, recorder, tracePath) = try tracedContext(dir)
        var missLine = 0
        try context.performAndWait {
            let walks = try context.fetch(FetchRequest<ManagedObject>(entityName: "Walk"))
            for walk in walks { _ = walk.value(forKey: "distance") }           // three row-cache faults
            missLine = #line + 1
            _ = (walks[0].value(forKey: "dog") as? ManagedObject)?.value(forKey: "name") // one cache miss
            try walks[0].setValue(Int32(9), forKey: "distance")
            try context.save()
        }
        let events = recorder.events
        let faults = events.compactMap { event -> FaultEvent? in if case .fault(let f) = event { return f }; return nil }
        XCTAssertEqual(faults.filter { $0.source == .rowCache }.count, 3)
        let misses = faults.filter { $0.source == .database }
        XCTAssertEqual(misses.count, 1)
        // The cache miss knows where this test touched the object (a property read has no #fileID).
        XCTAssertEqual(misses[0].stack?.callSite, "FaultlineTests/ProbeTests.swift:\(missLine)")
        XCTAssertNil(faults.first { $0.source == .rowCache }?.stack, "row-cache faults capture no stack")
        // A cache miss exists exactly when SQL was issued for a fault.
        let faultStatements = events.filter { if case .statement(let s) = $0 { return s.purpose == .fault }; return false }
        XCTAssertEqual(faultStatements.count, misses.count)
        // It read one row (a single-row read that never steps to the end still counts its row).
        guard case .statement(let missStatement)? = faultStatements.first else { return XCTFail("no fault statement") }
        XCTAssertEqual(missStatement.rows, 1)
        XCTAssertEqual(events.compactMap { event -> Int? in if case .fetch(let f) = event { return f.context }; return nil }, [context.serialNumber])
        guard case .fetch(let fetch)? = events.first(where: { if case .fetch = $0 { return true }; return false }) else { return XCTFail("no fetch event") }
        XCTAssertEqual(fetch.statements, 1)
        XCTAssertEqual(fetch.rows, 3)
        XCTAssertEqual(fetch.results, 3)
        XCTAssertTrue(fetch.callSite?.description.hasPrefix("FaultlineTests/ProbeTests.swift:") == true, fetch.callSite?.description ?? "")
        guard case .save(let save)? = events.last else { return XCTFail("the save comes last") }
        XCTAssertEqual(save.updated, ["Walk": 1])
        XCTAssertEqual(save.statements, 3, "BEGIN EXCLUSIVE, UPDATE, COMMIT")
        // The trace: a header, then one parseable event per line, in the documented shape.
        probes.flush()
        let lines = try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n").map(String.init)
        let decoded = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        XCTAssertEqual(decoded[0]["type"] as? String, "header")
        XCTAssertEqual(decoded[0]["format"] as? String, "faultline-trace")
        XCTAssertEqual(decoded[0]["version"] as? Int, 1)
        XCTAssertEqual(decoded.count - 1, events.count)
        XCTAssertEqual(decoded.dropFirst().map { $0["type"] as? String }, events.map(\.type))
        let statement = try XCTUnwrap(decoded.first { $0["type"] as? String == "statement" })
        for key in ["sql", "purpose", "bindings", "duration", "rows", "fullScanSteps", "sorts", "autoIndexes", "vmSteps", "t"] {
            XCTAssertNotNil(statement[key], key)
        }
        XCTAssertEqual(decoded.first { $0["type"] as? String == "cacheMiss" }?["source"] as? String, "database")
        let traceBindings = decoded.compactMap { $0["bindings"] as? [String] }.flatMap { $0 }
        XCTAssertTrue(traceBindings.allSatisfy { $0 == "?" }, "bind values are redacted unless asked for")
    }

    /// P-25's breakdown: a fetch of objects says how much of its time was inside SQLite and how much decoding rows
    /// into the row cache; a fetch of IDs fills no row cache. The trace carries both.
    func testFetchEventsSplitTheirTimeIntoSQLiteAndTheRowCache() throws {
        let dir = TemporaryDirectory()
        var configuration = ProbeConfiguration()
        configuration.splitsFetchTime = true
        let (context, probes, recorder, tracePath) = try tracedContext(dir, configuration)
        try context.performAndWait {
            let objects = FetchRequest<ManagedObject>(entityName: "Walk")
            objects.returnsObjectsAsFaults = false
            XCTAssertEqual(try context.fetch(objects).count, 3)
            let ids = FetchRequest<ManagedObject>(entityName: "Dog")
            ids.includesPropertyValues = false
            _ = try context.fetch(ids)
        }
        let fetches = recorder.events.compactMap { event -> FetchEvent? in if case .fetch(let f) = event { return f }; return nil }
        XCTAssertEqual(fetches.count, 2)
        XCTAssertGreaterThan(fetches[0].stepTime, 0)
        XCTAssertGreaterThan(fetches[0].rowCacheTime, 0)
        XCTAssertLessThanOrEqual(fetches[0].stepTime + fetches[0].rowCacheTime, fetches[0].totalTime)
        XCTAssertLessThanOrEqual(fetches[0].stepTime, fetches[0].sqlTime)
        XCTAssertGreaterThan(fetches[1].stepTime, 0)
        XCTAssertEqual(fetches[1].rowCacheTime, 0, "an IDs-only fetch decodes no row into the row cache")
        probes.flush()
        let lines = try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n")
        let written = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }.filter { $0["type"] as? String == "fetch" }
        XCTAssertEqual(written.count, 2)
        XCTAssertEqual(try XCTUnwrap(written[0]["stepTime"] as? Double), fetches[0].stepTime, accuracy: 1e-6)
        XCTAssertEqual(try XCTUnwrap(written[0]["rowCacheTime"] as? Double), fetches[0].rowCacheTime, accuracy: 1e-6)
    }

    func testRefreshesTheProgramAsksForAreEvents() throws {
        let dir = TemporaryDirectory()
        let url = try seed(dir)
        let recorder = InMemoryProbeRecorder()
        let lines = LineCollector()
        let tracePath = dir.file("trace.jsonl").path
        let probes = Probes(configuration: ProbeConfiguration(),
                            recorders: [recorder, try TraceWriter(path: tracePath), SQLDebugLogger(level: 1) { lines.append($0) }])
        let context = try self.context(url: url, probes: probes)
        try context.performAndWait {
            let walks = try context.fetch(FetchRequest<ManagedObject>(entityName: "Walk"))
            context.refresh(walks[0], mergeChanges: false)
            context.refreshAllObjects()
        }
        let refreshes = recorder.events.compactMap { event -> RefreshEvent? in if case .refresh(let r) = event { return r }; return nil }
        XCTAssertEqual(refreshes.map(\.objects), [1, 3])
        XCTAssertEqual(refreshes.map(\.mergeChanges), [false, true])
        XCTAssertEqual(refreshes.map(\.context), [context.serialNumber, context.serialNumber])
        XCTAssertEqual(lines.lines.filter { $0.hasPrefix("Faultline: annotation: refresh of") },
                       ["Faultline: annotation: refresh of 1 object (to faults) in T", "Faultline: annotation: refresh of 3 objects (merging changes) in T"])
        probes.flush()
        let decoded = try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let traced = decoded.filter { $0["type"] as? String == "refresh" }
        XCTAssertEqual(traced.map { $0["objects"] as? Int }, [1, 3])
        XCTAssertEqual(traced.map { $0["mergeChanges"] as? Bool }, [false, true])
    }

    /// A frame whose symbol names no module is spelled as `#fileID` spells it: the module from SwiftPM's layout.
    func testCallSiteModuleFromASourcePath() {
        XCTAssertEqual(FaultStack.moduleName(path: "/work/app/Sources/FaultlineBench/Scenarios/RelationshipScenarios.swift"), "FaultlineBench")
        XCTAssertEqual(FaultStack.moduleName(path: "/work/app/Tests/AppTests/ListTests.swift"), "AppTests")
        XCTAssertEqual(FaultStack.moduleName(path: "/src/App/List.swift"), "App")
        XCTAssertEqual(FaultStack.moduleName(mangled: "$s14FaultlineBench5BenchV"), "FaultlineBench")
    }

    func testRowCacheFaultCallSitesWhenAsked() throws {
        let dir = TemporaryDirectory()
        let url = try seed(dir)
        let recorder = InMemoryProbeRecorder()
        let context = try self.context(url: url, probes: Probes(configuration: ProbeConfiguration(faultCallSites: .all), recorders: [recorder]))
        var line = 0
        try context.performAndWait {
            let walks = try context.fetch(FetchRequest<ManagedObject>(entityName: "Walk"))
            line = #line + 1
            _ = walks[0].value(forKey: "distance")
        }
        let fault = try XCTUnwrap(recorder.events.compactMap { event -> FaultEvent? in if case .fault(let f) = event { return f }; return nil }.first)
        XCTAssertEqual(fault.source, .rowCache)
        XCTAssertEqual(fault.stack?.callSite, "FaultlineTests/ProbeTests.swift:\(line)")
        XCTAssertEqual(ProbeConfiguration(environment: ["FAULTLINE_FAULT_STACKS": "64"], arguments: []).faultCallSites, .sampled(64))
        XCTAssertEqual(ProbeConfiguration(environment: [:], arguments: []).faultCallSites, .cacheMisses)
    }

    func testTraceReachesTheFileWithoutAFlushWhenTheProgramGoesQuiet() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("quiet.jsonl").path
        let trace = try TraceWriter(path: path)
        trace.record(.connect(ConnectEvent(path: "/tmp/a.sqlite")), at: DispatchTime.now().uptimeNanoseconds)
        // Nothing else happens; the writer's timer must write the event on its own (within ~100 ms; allow 10 s).
        let deadline = Date().addingTimeInterval(10)
        var lines: [Substring] = []
        while Date() < deadline {
            lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            if lines.count == 2 { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertEqual(lines.count, 2, "header and the connect event")
        XCTAssertTrue(lines.last?.hasPrefix(#"{"type":"connect","t":"#) == true, String(lines.last ?? ""))
        withExtendedLifetime(trace) {}
    }

    /// A written event stays in the queue's storage until the traced thread queues another in its slot, so that
    /// what it holds is released on the thread that made it; a fetch's predicate is formatted as it is queued, into
    /// text kept beside the events. Events that hold the only reference to a predicate built for them, mixed with
    /// fetches without one, recorded over several rounds (each slot reused, the text outgrowing its storage), must
    /// come out whole, in order, each with its own predicate.
    func testEventsKeepWhatTheyHoldUntilWrittenAndSlotsAreReused() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("reused.jsonl").path
        let trace = try TraceWriter(path: path)
        let rounds = 5, perRound = 3_000
        for round in 0..<rounds {
            for i in 0..<perRound {
                let n = round * perRound + i
                let predicate = n % 3 == 2 ? nil : try ObjectPredicate(parsing: "name == %@ AND age > %d", "dog \(n)", n)
                trace.record(.fetch(FetchEvent(entity: "Dog", predicate: predicate, sort: [], limit: 0, offset: 0, batchSize: 0,
                                               prefetch: [], resultType: .objects, statements: 1, rows: 1, results: 1,
                                               registered: 0, sqlTime: 0, totalTime: 0, callSite: nil, values: nil, context: n)),
                             at: ProbeClock.now())
            }
            if round % 2 == 0 { trace.flush() }
        }
        trace.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
        XCTAssertEqual(lines.count, rounds * perRound)
        for (n, line) in lines.enumerated() {
            let predicate = n % 3 == 2 ? "null" : #""name == \"dog \#(n)\" AND age > \#(n)""#
            if !line.contains(#""predicate":\#(predicate),"#) || !line.contains(#""context":\#(n)}"#) {
                XCTFail("line \(n + 1) is \(line)")
                break
            }
        }
    }

    /// Fetches compiled through a template record their predicate by the shape's text and their constants; fetches
    /// whose predicate is walked (a SUBQUERY) or that run fetches of their own (prefetching) record it whole. Each
    /// trace line must carry its own fetch's predicate.
    func testFetchesOfOneShapeWriteTheirOwnPredicates() throws {
        let dir = TemporaryDirectory()
        let url = try seed(dir)
        let tracePath = dir.file("shapes.jsonl").path
        let probes = Probes(configuration: ProbeConfiguration(tracePath: tracePath))
        let context = try self.context(url: url, probes: probes)
        var expected: [String] = []
        try context.performAndWait {
            for (i, name) in ["Fido", "Rex \"the\" dog", "Fido", "line\nbreak", "Fido", "Éclair"].enumerated() {
                let predicates = try [
                    ObjectPredicate(format: "name == %@ AND walks.@count > %d", name, i),
                    ObjectPredicate(format: "name == %@", i == 3 ? nil : name),
                    ObjectPredicate(format: "SUBQUERY(walks, $w, $w.distance > %d).@count > 0", i),
                ]
                for predicate in predicates {
                    let request = FetchRequest<ManagedObject>(entityName: "Dog", predicate: predicate)
                    if i % 2 == 1 { request.relationshipKeyPathsForPrefetching = ["walks"] }
                    _ = try context.fetch(request)
                    expected.append(predicate.predicateFormat)
                }
            }
        }
        probes.flush()
        let lines = try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n")
        let fetches = try lines.compactMap { line -> [String: Any]? in
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return object["type"] as? String == "fetch" && object["entity"] as? String == "Dog" ? object : nil
        }
        XCTAssertEqual(fetches.compactMap { $0["predicate"] as? String }, expected)
    }

    /// The writer writes the usual values (no sort, limit, offset, batch size or prefetch; no full scan, sort or
    /// automatic index) as one constant run: those lines must carry the same fields, in the same order, as lines
    /// with other values. Call sites are escaped once per file while they need no escape, and only then.
    func testUsualAndOtherValuesWriteTheSameFields() throws {
        func fetch(_ sort: [FetchSortDescriptor], limit: Int, prefetch: [String], resultType: FetchEvent.ResultType,
                   callSite: CallSite?) -> ProbeEvent {
            .fetch(FetchEvent(entity: "Dog", predicate: nil, sort: sort, limit: limit, offset: 0, batchSize: 0, prefetch: prefetch,
                              resultType: resultType, statements: 1, rows: 2, results: 2, registered: 0, sqlTime: 0.5,
                              totalTime: 1, callSite: callSite, values: nil, context: 3))
        }
        func statement(fullScanSteps: Int) -> ProbeEvent {
            .statement(StatementEvent(sql: "SELECT 1", bindings: [], parameters: 0, purpose: .fetch, duration: 0.25, rows: 1,
                                      fullScanSteps: fullScanSteps, sorts: 0, autoIndexes: 0, vmSteps: 9))
        }
        func object(_ event: ProbeEvent) throws -> (keys: [String], values: [String: Any]) {
            let line = TraceWriter.line(for: event, at: 2, bindValues: false)
            let values = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], line)
            let keys = line.split(separator: ",").compactMap { part -> String? in
                guard let quote = part.firstIndex(of: "\""), let colon = part.range(of: "\":") else { return nil }
                return String(part[part.index(after: quote)..<colon.lowerBound])
            }
            return (keys, values)
        }
        let weird = CallSite(file: "Mod/we\"ird.swift", line: 7)
        let plain = CallSite(file: "Mod/Plain.swift", line: 8)
        let usual = try object(fetch([], limit: 0, prefetch: [], resultType: .objects, callSite: plain))
        let other = try object(fetch([FetchSortDescriptor(keyPath: "name", ascending: false)], limit: 5, prefetch: ["owner"],
                                     resultType: .dictionary, callSite: weird))
        XCTAssertEqual(usual.keys, other.keys)
        XCTAssertEqual(usual.values["sort"] as? [String], [])
        XCTAssertEqual(usual.values["limit"] as? Int, 0)
        XCTAssertEqual(usual.values["prefetch"] as? [String], [])
        XCTAssertEqual(usual.values["resultType"] as? String, "objects")
        XCTAssertEqual(other.values["sort"] as? [String], ["name:desc"])
        XCTAssertEqual(other.values["limit"] as? Int, 5)
        XCTAssertEqual(other.values["prefetch"] as? [String], ["owner"])
        XCTAssertEqual(other.values["resultType"] as? String, "dictionary")
        XCTAssertEqual(usual.values["callSite"] as? String, "Mod/Plain.swift:8")
        XCTAssertEqual(other.values["callSite"] as? String, "Mod/we\"ird.swift:7")
        for type in [FetchEvent.ResultType.objects, .faults, .ids, .count, .dictionary] {
            XCTAssertEqual(try object(fetch([], limit: 0, prefetch: [], resultType: type, callSite: nil)).values["resultType"] as? String,
                           type.rawValue)
        }
        let quiet = try object(statement(fullScanSteps: 0)), scanning = try object(statement(fullScanSteps: 4))
        XCTAssertEqual(quiet.keys, scanning.keys)
        XCTAssertEqual(quiet.values["fullScanSteps"] as? Int, 0)
        XCTAssertEqual(scanning.values["fullScanSteps"] as? Int, 4)
        XCTAssertEqual(quiet.values["vmSteps"] as? Int, 9)

        // One buffer, as the writer uses it: a plain file is remembered, an escaped one never is.
        var json = JSONLineBuffer()
        for site in [plain, weird, plain, weird, weird] { json.quotedCallSite(file: site.file, line: site.line); json.literal(",") }
        XCTAssertEqual(json.string, #""Mod/Plain.swift:8","Mod/we\"ird.swift:7","Mod/Plain.swift:8","Mod/we\"ird.swift:7","Mod/we\"ird.swift:7","#)
    }

    /// Events recorded faster than the writer's thread writes them (the queue grows past its first storage) all
    /// reach the file once, in the order they were recorded, while the thread and the recording thread take turns.
    func testEveryEventIsWrittenOnceInOrder() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("many.jsonl").path
        let trace = try TraceWriter(path: path)
        let count = 20_000
        for i in 0..<count {
            trace.record(.signpost(SignpostEvent(name: "s\(i)")), at: ProbeClock.now())
        }
        trace.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
        XCTAssertEqual(lines.count, count)
        for (i, line) in lines.enumerated() where !line.contains(#""name":"s\#(i)""#) {
            XCTFail("line \(i + 1) is \(line)")
            break
        }
    }

    /// Threads record while another flushes over and over, and the writer thread takes its turns: every event
    /// reaches the file once, each thread's in the order it recorded them.
    func testEventsFromSeveralThreadsAreWrittenOnceWhileFlushesRun() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("threads.jsonl").path
        let trace = try TraceWriter(path: path)
        let threads = 4, perThread = 20_000
        let group = DispatchGroup()
        for t in 0..<threads {
            DispatchQueue.global().async(group: group) {
                for i in 0..<perThread { trace.record(.signpost(SignpostEvent(name: "\(t)-\(i)")), at: ProbeClock.now()) }
            }
        }
        var flushes = 0
        while group.wait(timeout: .now()) == .timedOut { trace.flush(); flushes += 1 }
        trace.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst()
        XCTAssertEqual(lines.count, threads * perThread)
        var next = Array(repeating: 0, count: threads)
        for line in lines {
            guard let name = line.range(of: #""name":""#).map({ line[$0.upperBound...].prefix(while: { $0 != "\"" }) }),
                  let dash = name.firstIndex(of: "-"), let t = Int(name[..<dash]), let i = Int(name[name.index(after: dash)...]),
                  t < threads, i == next[t] else {
                XCTFail("unexpected line \(line) (expected next: \(next)), after \(flushes) flushes")
                return
            }
            next[t] += 1
        }
        XCTAssertEqual(next, Array(repeating: perThread, count: threads))
    }

    /// With no turn for the writer thread (here there is none), the thread that queues an event once an earlier
    /// one has waited longer than `longestWait`, or when `mostWaiting` wait, writes the queue itself: a crash loses
    /// no more than that wait, and the queue does not grow without end.
    func testEventsThatWaitedTooLongAreWrittenByTheThreadThatRecords() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("starved.jsonl").path
        let trace = try TraceWriter(path: path, includeBindValues: false, startsThread: false)
        func names() throws -> [String] {
            try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst().map { line in
                String(line.split(separator: "\"").dropLast().last ?? "")
            }
        }
        let start = ProbeClock.now()
        trace.record(.signpost(SignpostEvent(name: "a")), at: start)
        trace.record(.signpost(SignpostEvent(name: "b")), at: start + TraceWriter.longestWait / 2)
        XCTAssertEqual(try names(), [], "no event has waited long")
        trace.record(.signpost(SignpostEvent(name: "c")), at: start + TraceWriter.longestWait + 1)
        XCTAssertEqual(try names(), ["a", "b", "c"], "written by the thread that queued c")
        trace.record(.signpost(SignpostEvent(name: "d")), at: start + TraceWriter.longestWait + 2)
        XCTAssertEqual(try names(), ["a", "b", "c"], "d has not waited")
        trace.flush()
        XCTAssertEqual(try names(), ["a", "b", "c", "d"])

        let now = ProbeClock.now()
        for i in 0..<TraceWriter.mostWaiting - 1 { trace.record(.signpost(SignpostEvent(name: "e\(i)")), at: now) }
        XCTAssertEqual(try names().count, 4, "fewer than mostWaiting wait")
        trace.record(.signpost(SignpostEvent(name: "last")), at: now)
        let written = try names()
        XCTAssertEqual(written.count, 4 + TraceWriter.mostWaiting)
        XCTAssertEqual(written.last, "last")
    }

    /// The writer thread can be found by its name, and runs at a lower priority than the program it traces
    /// (nice 10 on Linux).
    func testTheWriterThreadIsNamedAndNice() throws {
        #if os(Linux)
        let dir = TemporaryDirectory()
        let trace = try TraceWriter(path: dir.file("nice.jsonl").path)
        var niceValues: [Int32] = []
        let deadline = Date().addingTimeInterval(10)
        while niceValues.isEmpty && Date() < deadline {
            for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
                // The thread names itself after lowering its priority: a named writer has its nice value.
                guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                      name.trimmingCharacters(in: .newlines) == TraceWriter.threadName, let tid = UInt32(task) else { continue }
                niceValues.append(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), tid))
            }
            if niceValues.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
        }
        XCTAssertFalse(niceValues.isEmpty, "no thread named \(TraceWriter.threadName)")
        XCTAssertEqual(Set(niceValues), [10], "every trace writer thread runs at nice 10")
        withExtendedLifetime(trace) {}
        #else
        throw XCTSkip("threads are found in /proc")
        #endif
    }

    /// A fault event's object is written from its ID, not from a URI string built for the event: the text must be
    /// the ID's `uriString` for plain and percent-encoded entity names, IDs of two stores in one buffer, a store
    /// name that needs escaping, the largest key, and temporary IDs.
    func testFaultEventsWriteTheObjectsURIFromItsID() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Dog", properties: []),
                                                      EntityDescription(name: "Hünd", properties: [])])
        let dog = try XCTUnwrap(model.entity(named: "Dog")), hund = try XCTUnwrap(model.entity(named: "Hünd"))
        let ids = [ManagedObjectID(entity: dog, key: 7, storeIdentifier: "S1"), ManagedObjectID(entity: dog, key: 8, storeIdentifier: "S1"),
                   ManagedObjectID(entity: dog, key: 9, storeIdentifier: "S2"), ManagedObjectID(entity: hund, key: 3, storeIdentifier: "S2"),
                   ManagedObjectID(entity: dog, key: Int64.max, storeIdentifier: "S2"), ManagedObjectID(entity: dog, key: -4, storeIdentifier: "S2"),
                   ManagedObjectID(entity: dog, key: 5, storeIdentifier: "we\"ird"), ManagedObjectID(entity: dog, key: 6, storeIdentifier: "S1")]
        var json = JSONLineBuffer()
        for id in ids { json.quotedObjectURI(id); json.literal(",") }
        XCTAssertEqual(json.string, ids.map { JSONLineBuffer.quote($0.uriString) + "," }.joined())
        XCTAssertTrue(json.string.contains(#""x-coredata://S2/H%C3%BCnd/p3""#), json.string)

        let event = FaultEvent(kind: .object, objectID: ids[0], relationship: nil, source: .rowCache, count: nil, duration: 0,
                               values: nil, batch: nil, stack: nil, context: 1)
        XCTAssertEqual(event.object, "x-coredata://S1/Dog/p7")
        let line = TraceWriter.line(for: .fault(event), at: 1, bindValues: false)
        XCTAssertTrue(line.contains(#","object":"x-coredata://S1/Dog/p7","relationship":null,"#), line)
    }

    func testConfigurationFromEnvironmentAndLaunchArguments() {
        XCTAssertEqual(ProbeConfiguration(environment: [:], arguments: []), ProbeConfiguration())
        XCTAssertEqual(ProbeConfiguration(environment: ["FAULTLINE_SQLDEBUG": "3", "FAULTLINE_TRACE": "/tmp/t.jsonl"], arguments: []),
                       ProbeConfiguration(sqlDebugLevel: 3, tracePath: "/tmp/t.jsonl"))
        XCTAssertEqual(ProbeConfiguration(environment: ["FAULTLINE_SQLDEBUG": "1"], arguments: ["app", "-com.apple.CoreData.SQLDebug", "4",
                                                                                              "-com.apple.CoreData.ConcurrencyDebug", "1"]).sqlDebugLevel, 4)
        XCTAssertTrue(ProbeConfiguration(environment: ["FAULTLINE_CONCURRENCYDEBUG": "1"], arguments: []).concurrencyDebug)
        XCTAssertEqual(ProbeConfiguration(environment: ["FAULTLINE_SQLDEBUG": "9"], arguments: []).sqlDebugLevel, 4)
    }
}

final class ConcurrencyDebugTests: XCTestCase {
    func testUseOffTheQueueIsNamed() throws {
        let dir = TemporaryDirectory()
        let model = try makeTestModel()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: Probes(configuration: ProbeConfiguration(concurrencyDebug: true)))
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertTrue(context.checksQueue)
        let dog = try context.performAndWait { () throws -> ManagedObject in
            XCTAssertNil(context.concurrencyViolation(), "on the queue: fine")
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try context.save()
            return dog
        }
        // Off the queue (this test's thread): the message names the object, the context and the queue.
        let message = try XCTUnwrap(context.concurrencyViolation(touching: dog))
        XCTAssertTrue(message.hasPrefix("Faultline: concurrency violation: Dog \(dog.objectID.uriString) of context 0x"), message)
        XCTAssertTrue(message.contains("(private-queue)") && message.contains("outside its private queue"), message)
        XCTAssertFalse(ManagedObjectContext(.privateQueue, coordinator: PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)).checksQueue)
    }

    /// The stop itself, in a real process: this test bundle runs `offQueueChild` in a child process with
    /// `FAULTLINE_CONCURRENCYDEBUG=1` (the probes read it at start), which touches an object off its context's
    /// queue; the child dies with the documented message.
    func testAProcessThatTouchesAnObjectOffItsQueueStops() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["FaultlineTests.ConcurrencyDebugTests/testOffQueueChild"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FAULTLINE_") }
        environment["FAULTLINE_CONCURRENCYDEBUG"] = "1"
        environment["FAULTLINE_TEST_OFF_QUEUE_CHILD"] = "1"
        // No crash backtrace: symbolicating a sanitizer build takes the runtime's backtracer minutes.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // Killed by the trap (a sanitizer's runtime may turn that into a non-zero exit instead).
        XCTAssertTrue(process.terminationReason == .uncaughtSignal || process.terminationStatus != 0, text)
        XCTAssertTrue(text.contains("child: touching the dog off its queue"), text)
        XCTAssertFalse(text.contains("child: still running"), text)
        let message = try XCTUnwrap(text.range(of: #"Faultline: concurrency violation: Dog x-coredata://[0-9A-F-]+/Dog/p1 of context 0x[0-9a-f]+ \(private-queue\) used on the main thread, outside its private queue; use perform or performAndWait"#, options: .regularExpression), text)
        XCTAssertFalse(text[message].isEmpty)
    }

    /// The child of the test above; skipped in a normal run.
    func testOffQueueChild() throws {
        guard ProcessInfo.processInfo.environment["FAULTLINE_TEST_OFF_QUEUE_CHILD"] == "1" else {
            throw XCTSkip("runs only as the child process of testAProcessThatTouchesAnObjectOffItsQueueStops")
        }
        let dir = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel())
        XCTAssertTrue(coordinator.probes.configuration.concurrencyDebug, "FAULTLINE_CONCURRENCYDEBUG=1 reached the probes")
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let dog = try context.performAndWait { () throws -> ManagedObject in
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Rex", forKey: "name")
            try context.save()
            return dog
        }
        FileHandle.standardError.write(Data("child: touching the dog off its queue\n".utf8))
        _ = dog.value(forKey: "name")
        FileHandle.standardError.write(Data("child: still running\n".utf8))
    }

    /// A main-queue context runs its blocks on the main thread: in place from the main thread, on the main queue
    /// from elsewhere; from another thread, a use is named as outside the main queue.
    func testMainQueueContextRunsOnTheMainThread() throws {
        let dir = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeTestModel(), probes: Probes(configuration: ProbeConfiguration(concurrencyDebug: true)))
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let context = ManagedObjectContext(.mainQueue, coordinator: coordinator)
        XCTAssertTrue(Thread.isMainThread)
        let dog = try context.performAndWait { () throws -> ManagedObject in
            XCTAssertNil(context.concurrencyViolation())
            let dog = try context.insertNewObject(forEntityName: "Dog")
            try dog.setValue("Rex", forKey: "name")
            try context.save()
            return dog
        }
        let performed = expectation(description: "perform ran on the main thread")
        context.perform {
            XCTAssertTrue(Thread.isMainThread)
            XCTAssertEqual(try? context.count(for: FetchRequest<ManagedObject>(entityName: "Dog")), 1)
            performed.fulfill()
        }
        wait(for: [performed], timeout: 10)
        let elsewhere = expectation(description: "a background thread")
        let box = UncheckedBox((context, dog))
        Thread.detachNewThread {
            let (context, dog) = box.value
            let message = context.concurrencyViolation(touching: dog)
            XCTAssertTrue(message?.contains("(main-queue) used on thread 0x") == true && message?.hasSuffix("outside the main queue; use perform or performAndWait") == true, message ?? "nil")
            elsewhere.fulfill()
        }
        wait(for: [elsewhere], timeout: 10)
    }
}

/// Hands a value to another thread in a test that knows the access is safe.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

final class TraceSchemaTests: XCTestCase {
    /// The fields docs/trace-format.md documents for each event type (optional ones marked with ?).
    static let schema: [String: Set<String>] = [
        "header": ["type", "format", "version", "started", "process", "pid", "sqlite", "host"],
        "connect": ["type", "t", "path"],
        "statement": ["type", "t", "sql", "purpose", "bindings", "duration", "rows", "fullScanSteps", "sorts", "autoIndexes", "vmSteps"],
        "queryPlan": ["type", "t", "sql", "nodes"],
        "fetch": ["type", "t", "entity", "predicate", "sort", "limit", "offset", "batchSize", "prefetch", "resultType", "statements",
                  "rows", "results", "registered", "sqlTime", "totalTime", "stepTime?", "rowCacheTime?", "callSite", "context",
                  "registeredObjects", "materializedObjects", "rowCacheRows", "optionalNotEqual?"],
        "fault": ["type", "t", "kind", "object", "relationship", "source", "duration", "callSite?", "context"],
        "cacheMiss": ["type", "t", "kind", "object", "relationship", "source", "duration", "count?", "batch?", "countOnly?", "missing?", "callSite", "context"],
        "save": ["type", "t", "inserted", "updated", "deleted", "statements", "duration", "conflicts", "error", "callSite", "context",
                 "registeredObjects", "materializedObjects", "rowCacheRows", "bytes?"],
        "signpost": ["type", "t", "name"],
        "prefetchUse": ["type", "t", "keyPath", "entity", "loaded", "used", "callSite", "context"],
        "batch": ["type", "t", "kind", "entity", "rows", "statements", "duration", "error", "callSite", "context"],
        "merge": ["type", "t", "inserted", "updated", "deleted", "refreshed", "registered", "duration", "context"],
        "invalidate": ["type", "t", "objects", "reason", "duration", "context"],
        "resultsController": ["type", "t", "kind", "entity", "sectionNameKeyPath?", "cacheName?", "objects", "sections", "batchSize", "cache", "cacheReason?", "sectionsFrom",
                              "inserted", "deleted", "moved", "updated", "sectionsInserted", "sectionsDeleted", "duration", "context"],
    ]

    func testScriptedSessionMatchesTheDocumentedSchema() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("session.jsonl").path
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCityModel(),
                                                     probes: Probes(configuration: ProbeConfiguration(tracePath: path, traceBindValues: true)))
        try coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        coordinator.probes.signpost("insert \"Paris\"")
        try context.performAndWait {
            let city = try context.insertNewObject(forEntityName: "City")
            try city.setValue("Paris", forKey: "name")
            for i in 0..<3 {
                let person = try context.insertNewObject(forEntityName: "Person")
                try person.setValue("p\(i)", forKey: "name")
                try person.setValue(city, forKey: "city")
            }
            try context.save()
            context.reset()
            let cities = try context.fetch(FetchRequest<ManagedObject>(entityName: "City"))
            _ = cities[0].value(forKey: "name")             // a fault from the row cache
            let request = FetchRequest<ManagedObject>(entityName: "Person", predicate: try ObjectPredicate(parsing: "name BEGINSWITH %@", "p"),
                                                      sortDescriptors: [FetchSortDescriptor(keyPath: "name", ascending: false)])
            request.fetchBatchSize = 2
            let people = try context.fetch(request)
            _ = people.map { $0.value(forKey: "name") }
            _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "City"))
            let paris = try XCTUnwrap(people[0].value(forKey: "city") as? ManagedObject)
            _ = paris.objects(forRelationship: "residents")
            // A prefetch whose objects nobody reads: reported when the context resets.
            context.reset()
            let prefetching = FetchRequest<ManagedObject>(entityName: "Person")
            prefetching.relationshipKeyPathsForPrefetching = ["city"]
            _ = try context.fetch(prefetching)
            context.reset()
            // A batch request and the merge of its IDs.
            let update = BatchUpdateRequest(entityName: "Person", predicate: try ObjectPredicate(parsing: "name == 'p0'"), propertiesToUpdate: ["name": "q0"])
            update.resultType = .objectIDs
            let changed = try context.execute(update)
            context.merge(RemoteChanges(updated: changed.objectIDs))
        }
        coordinator.probes.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        var seen: Set<String> = []
        for line in lines {
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
            let type = try XCTUnwrap(object["type"] as? String)
            let documented = try XCTUnwrap(Self.schema[type], "undocumented event type \(type)")
            let required = Set(documented.filter { !$0.hasSuffix("?") })
            let allowed = Set(documented.map { $0.hasSuffix("?") ? String($0.dropLast()) : $0 })
            XCTAssertTrue(required.isSubset(of: Set(object.keys)), "\(type) lacks \(required.subtracting(object.keys))")
            XCTAssertTrue(Set(object.keys).isSubset(of: allowed), "\(type) has undocumented \(Set(object.keys).subtracting(allowed))")
            seen.insert(type)
        }
        XCTAssertEqual(seen, ["header", "connect", "statement", "queryPlan", "fetch", "fault", "cacheMiss", "save", "signpost", "prefetchUse", "batch", "merge", "invalidate"])
        XCTAssertTrue(lines.contains { $0.contains(#""type":"prefetchUse""#) && $0.contains(#""keyPath":"city","entity":"Person","loaded":1,"used":0"#) })
        XCTAssertTrue(lines.contains { $0.contains(#""type":"signpost""#) && $0.contains(#""name":"insert \"Paris\"""#) })
        XCTAssertTrue(lines.contains { $0.contains(#""bindings":["\"p*\""]"#) }, "bind values when asked for")
    }
}
