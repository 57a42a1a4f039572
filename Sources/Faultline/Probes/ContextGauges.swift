/// A context's object counts and its coordinator's row-cache size at one moment, recorded on `fetch` and `save`
/// events so that a report can follow a context's growth (docs/trace-format.md).
public struct ContextGauges: Sendable, Equatable {
    /// Objects registered in the context: the saved ones it holds (weakly or not) and the inserted ones.
    public var registeredObjects: Int
    /// Of those, the ones holding values (not faults).
    public var materializedObjects: Int
    /// Snapshots in the coordinator's row cache (every context's).
    public var rowCacheRows: Int

    /// Gauges with these counts.
    public init(registeredObjects: Int, materializedObjects: Int, rowCacheRows: Int) {
        self.registeredObjects = registeredObjects
        self.materializedObjects = materializedObjects
        self.rowCacheRows = rowCacheRows
    }
}

extension ManagedObjectContext {
    /// The gauges now; called under the coordinator's lock (the probe sites hold it).
    var gaugesLocked: ContextGauges {
        ContextGauges(registeredObjects: registry.count + insertedCount, materializedObjects: materializedCount + insertedCount,
                      rowCacheRows: reader.rowCacheCountLocked)
    }
}
