import Foundation

/// Probe sites of a context: fetches, faults and saves. With probes off each costs one branch; with them on, the
/// work runs under the coordinator's lock so that the statements it counts are its own.
extension ManagedObjectContext {
    @inline(__always) var probesEnabled: Bool { coordinator.probes.isEnabled }

    /// Runs a probe site's work under the coordinator's lock, so that the statements it counts are its own — except
    /// in a child context, whose work waits for its parent's queue: holding the lock across that wait would deadlock
    /// with a parent busy in work of its own that needs the lock. A child's counts may then include statements
    /// another thread ran meanwhile.
    @inline(__always) func probeSection<T>(_ body: () throws -> T) rethrows -> T {
        parent == nil ? try coordinator.withLock(body) : try body()
    }

    /// The totals so far, for a caller inside `probeSection`.
    @inline(__always) func probeTotalsInSection() -> ProbeTotals {
        parent == nil ? coordinator.probeTotalsLocked() : coordinator.probeTotals()
    }

    /// The gauges, for a caller inside `probeSection`.
    var gaugesInSection: ContextGauges { parent == nil ? gaugesLocked : coordinator.withLock { gaugesLocked } }

    /// Runs a fetch, recording a `fetch` event. `registers`: the fetch returns objects, so the event counts those
    /// that were registered already.
    func tracedFetch<R>(_ request: FetchSpec, resultType: FetchEvent.ResultType, registers: Bool = false, callSite given: CallSite,
                        results: (R) -> Int, uris: (R) -> [String]?, _ body: () throws -> R) rethrows -> R {
        let callSite = outerCallSite ?? given
        let enclosing = outerCallSite
        outerCallSite = callSite
        defer { outerCallSite = enclosing }
        coordinator.probes.beginOperation(.fetch)
        defer { coordinator.probes.endOperation() }
        return try probeSection {
            let before = probeTotalsInSection()
            let registeredBefore = registry.count
            let scansBefore = predicateShape.scans
            let start = ProbeClock.now()
            let result = try body()
            let end = ProbeClock.now()
            let after = probeTotalsInSection()
            let count = results(result)
            // Objects the fetch registered are new; the rest of its objects were registered already.
            let registered = registers ? max(0, count - max(0, registry.count - registeredBefore)) : 0
            let level = coordinator.probes.sqlDebugLevel
            // The fetch's own scan (not a nested fetch's) found its template: the trace records only the constants,
            // and its event need not keep the predicate (which is then freed with the request, while still in the
            // processor's cache, rather than when the queue's slot is reused).
            let text = coordinator.probes.recordsFetchesByShape && predicateShape.scans == scansBefore &+ 1
                ? predicateShape.text?.takeUnretainedValue() : nil
            // (The coordinator keeps its probes: no reference of their own for the call.)
            Unmanaged.passUnretained(coordinator.probes)._withUnsafeGuaranteedRef { $0.record(.fetch(FetchEvent(
                entity: request.entityName, predicate: text == nil ? request.predicate : nil,
                sort: request.sortDescriptors, limit: request.fetchLimit, offset: request.fetchOffset,
                batchSize: request.fetchBatchSize, prefetch: request.relationshipKeyPathsForPrefetching, resultType: resultType,
                statements: after.statements - before.statements, rows: after.rows - before.rows, results: count, registered: registered,
                sqlTime: after.sqlTime - before.sqlTime, totalTime: ProbeClock.seconds(start, end), callSite: callSite,
                values: level >= 3 ? uris(result) : nil, context: serialNumber, contextName: name, gauges: gaugesInSection,
                optionalNotEqual: request.predicate.map { OptionalInequality.keyPaths(in: $0, model: model, entityName: request.entityName) } ?? [],
                stepTime: after.stepTime - before.stepTime, rowCacheTime: after.rowCacheTime - before.rowCacheTime,
                predicateText: PredicateTextReference(shape: text))),
                at: end, predicateConstants: predicateShape.recordedConstants) }
            return result
        }
    }

    func tracedFault(_ object: ManagedObject, _ body: () -> Void) {
        probeSection {
            let before = coordinator.probeTotals().statements
            let batched = object.flags.contains(.batched) ? object.batch?.size : nil
            let start = ProbeClock.now()
            body()
            let end = ProbeClock.now()
            let duration = ProbeClock.seconds(start, end)
            let fromDatabase = coordinator.probeTotals().statements != before
            let values = fromDatabase && batched == nil && coordinator.probes.sqlDebugLevel >= 3 ? Self.describeValues(object) : nil
            var event = FaultEvent(kind: .object, objectID: object.objectID, relationship: nil,
                                   source: fromDatabase ? .database : .rowCache, count: nil,
                                   duration: duration, values: values, batch: fromDatabase ? batched : nil,
                                   stack: coordinator.probes.wantsStack(cacheMiss: fromDatabase) ? FaultStack.capture() : nil, context: serialNumber)
            event.missing = object.flags.contains(.inaccessible)
            coordinator.probes.record(.fault(event), at: end)
        }
    }

    func tracedRelationshipFault(_ relationship: RelationshipDescription, of object: ManagedObject, countOnly: Bool,
                                 _ body: () -> [ManagedObject]) -> [ManagedObject] {
        probeSection {
            let start = ProbeClock.now()
            let members = body()
            let end = ProbeClock.now()
            let duration = ProbeClock.seconds(start, end)
            coordinator.probes.record(.fault(FaultEvent(kind: .relationship, objectID: object.objectID,
                                                        relationship: relationship.name, source: .database,
                                                        count: members.count, duration: duration, values: nil, batch: nil,
                                                        stack: coordinator.probes.wantsStack(cacheMiss: true) ? FaultStack.capture() : nil, context: serialNumber, countOnly: countOnly)), at: end)
            return members
        }
    }

    func tracedSave(_ changes: SaveChanges, callSite: CallSite, _ body: () throws -> Void) throws {
        coordinator.probes.beginOperation(.save)
        defer { coordinator.probes.endOperation() }
        try probeSection {
            let before = coordinator.probeTotals().statements
            let start = ProbeClock.now()
            var failure: Error?
            do { try body() } catch { failure = error }
            var conflicts = 0
            if case SaveError.conflicts(let list)? = failure { conflicts = list.count }
            var event = changes.event(
                statements: coordinator.probeTotals().statements - before, duration: ProbeClock.seconds(start, ProbeClock.now()),
                conflicts: conflicts, error: failure.map { "\($0)" }, callSite: callSite, context: serialNumber)
            event.gauges = gaugesInSection
            event.contextName = name
            coordinator.probes.record(.save(event))
            if let failure { throw failure }
        }
    }

    /// Runs a refresh the program asked for, recording a `refresh` event.
    func tracedRefresh(objects: Int, mergeChanges: Bool, _ body: () -> Void) {
        let start = ProbeClock.now()
        body()
        coordinator.probes.record(.refresh(RefreshEvent(objects: objects, mergeChanges: mergeChanges,
                                                        duration: ProbeClock.seconds(start, ProbeClock.now()), context: serialNumber)))
    }

    /// Records a save refused before writing (Deny rules, validation).
    func recordRefusedSave(_ changes: SaveChanges, error: Error, callSite: CallSite) {
        coordinator.probes.beginOperation(.save)
        defer { coordinator.probes.endOperation() }
        var event = changes.event(statements: 0, duration: 0, error: "\(error)", callSite: callSite, context: serialNumber)
        event.contextName = name
        coordinator.probes.record(.save(event))
    }

    /// Runs a batch request's body, recording a `batch` event when probes are on.
    func tracedBatch(_ kind: String, entity: EntityDescription, callSite: CallSite, rowCount: (() -> Int)? = nil,
                     _ body: () throws -> [(EntityDescription, Int64)]) throws -> [(EntityDescription, Int64)] {
        guard probesEnabled else { return try body() }
        coordinator.probes.beginOperation(.batch)
        defer { coordinator.probes.endOperation() }
        return try coordinator.withLock {
            let before = coordinator.probeTotals().statements
            let start = ProbeClock.now()
            var rows: [(EntityDescription, Int64)] = []
            var failure: Error?
            do { rows = try body() } catch { failure = error }
            coordinator.probes.record(.batch(BatchEvent(kind: kind, entity: entity.name, rows: rowCount?() ?? rows.count,
                                                        statements: coordinator.probeTotals().statements - before,
                                                        duration: ProbeClock.seconds(start, ProbeClock.now()),
                                                        error: failure.map { "\($0)" }, callSite: callSite, context: serialNumber)))
            if let failure { throw failure }
            return rows
        }
    }

    /// `{key = value; …}` of an object's attributes, for SQLDebug level 3.
    static func describeValues(_ object: ManagedObject) -> String {
        let pairs = object.entity.attributes.filter { !$0.isTransient }.map { attribute -> String in
            let slot = attribute.index < object.values.count ? object.values[attribute.index] : .null
            return "\(attribute.name) = \(ConnectionProbe.literal(slot))"
        }
        return "{" + pairs.joined(separator: "; ") + "}"
    }
}

/// `file:line` of a caller, for events.
@inline(__always) func callSite(_ file: StaticString, _ line: UInt) -> CallSite { CallSite(file: file, line: line) }
