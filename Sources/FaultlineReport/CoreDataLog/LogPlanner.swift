import Faultline
import Foundation

extension TraceFile {
    /// A Core Data log with SQLite's plan for each distinct SELECT it ran that has none yet (a log below level 4), from
    /// the user's store: every such statement is explained on `coordinator`'s store (read only; indexes are tried on
    /// a scratch copy). Statements the store cannot plan (a table it lacks, Core Data's own SQL functions) are left
    /// without a plan and counted in the result's warnings.
    public func withPlans(from coordinator: PersistentStoreCoordinator) -> TraceFile {
        guard source == .coreDataLog else { return self }
        var planned = Set(events.filter { $0.kind == .queryPlan }.compactMap(\.sql))
        var added: [(after: Int, event: TraceEvent)] = []
        var failed = 0
        for (index, event) in events.enumerated() where event.kind == .statement {
            guard event.purpose == "fetch" || event.purpose == "fault" || event.purpose == "relationshipFault",
                  let sql = event.sql, !planned.contains(sql) else { continue }
            planned.insert(sql)
            do {
                let queryPlan = try coordinator.queryPlan(sql: sql)
                let plan = TraceEvent(kind: .queryPlan, time: event.time, line: event.line)
                plan.sql = sql
                plan.planDetails = queryPlan.steps.map(\.detail)
                added.append((index, plan))
            } catch {
                failed += 1
            }
        }
        var merged: [TraceEvent] = []
        merged.reserveCapacity(events.count + added.count)
        var plans = added[...]
        for (index, event) in events.enumerated() {
            merged.append(event)
            while let pending = plans.first, pending.after == index {
                merged.append(pending.event)
                plans = plans.dropFirst()
            }
        }
        var notes = warnings
        if failed > 0 { notes.append("\(failed) statement\(failed == 1 ? "" : "s") of the log could not be planned on the store (tables or functions it lacks)") }
        return TraceFile(path: path, header: header, events: merged, warnings: notes, source: source, logStatistics: logStatistics)
    }
}
