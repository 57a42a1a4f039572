import Foundation

/// The limits Faultline puts on its inputs, far above anything a real model, predicate or store holds, so that a
/// hostile or broken input gets a clear error rather than a stack overflow, a hang or memory without bound.
/// docs/limits.md lists each with what happens at it.
public enum Limits {
    /// How deeply a predicate may nest: parentheses, `NOT`s, unary minus, function arguments, subqueries, and each
    /// operator of a chain such as `1 + 1 + …` (each makes the tree one level deeper).
    public static let predicateNestingDepth = 100

    /// The most components of one key path (`a.b.c` has three), in predicates, sort descriptors and properties.
    public static let keyPathComponents = 100

    /// The most characters of a predicate's format string.
    public static let predicateLength = 1_000_000

    /// The batches a batched fetch result (`FetchedResults` with `fetchBatchSize`) keeps materialized: a screen spans at
    /// most two batches when the batch is 1.3–2× a screenful (objc.io's rule), and one more on each side lets a list
    /// scroll back and forth across a batch boundary without fetching again. Older batches' objects are let go of
    /// (reading them again fetches their batch again; objects still held anywhere are the same objects).
    public static let batchedResultsBatches = 4

    /// The longest chain of parent entities (an entity, its parent, its parent's parent, …).
    public static let inheritanceDepth = 100

    /// How deep composite attributes may nest (a composite among a composite's elements).
    public static let compositeDepth = 32

    /// The most entities a model diagram lays out as a graph; a larger model is drawn as a table.
    public static let diagramLaidOutEntities = 150

    /// The most edges (relationship pairs and inheritance) a model diagram lays out as a graph: Graphviz's time grows
    /// steeply with edges (300 among 60 entities take seconds); a model with more is drawn as a table.
    public static let diagramLaidOutEdges = 150

    /// The most entities a model diagram draws at all; the diagram's title says how many were left out.
    public static let diagramEntities = 1_000

    /// The most objects an object-graph diagram (`faultline diagram --store`) may be asked to draw.
    public static let diagramObjects = 5_000
    /// Rows whose derived attributes a store's triggers may recompute in one write and be listed for the row cache
    /// to drop; past it the whole row cache is dropped.
    public static let derivedValueChanges = 100_000
    /// Bits of a persistent-history change's column mask named one by one (an entity has far fewer properties).
    public static let historyMaskBits = 4_096

    /// Rounds of `willSave()` a save runs while hooks keep changing (inserting) objects; then it fails, as Core
    /// Data's does after 100 attempts.
    public static let willSaveRounds = 100

    /// The longest time a trace may give, in seconds (ten years): no trace runs longer.
    public static let traceSeconds = 315_576_000.0

    /// The longest line a trace may have (16 MiB): the longest the engine writes (a statement with hundreds of
    /// bound keys, a predicate with a long list) is a few hundred kilobytes; a longer one is not a trace line, and
    /// reading it would hold it all in memory.
    public static let traceLineBytes = 16 << 20

    /// The largest count a trace may give (rows, objects, statements): 2^32, more than one statement returns, small
    /// enough that no sum over a trace overflows.
    public static let traceCount: Int64 = 1 << 32

    /// The dates a Date attribute holds: Foundation's `distantPast` to `distantFuture` (years 1 to 4001), as
    /// seconds since 2001-01-01, the form Core Data stores.
    public static let dateSecondsSinceReferenceDate: ClosedRange<Double> =
        Date.distantPast.timeIntervalSinceReferenceDate...Date.distantFuture.timeIntervalSinceReferenceDate

    /// The most entities a store's `Z_PRIMARYKEY` may list for `faultline info` to show it without a model: real
    /// models have tens to hundreds.
    public static let storeEntities = 10_000

    /// The primary keys (and foreign keys) a store's rows may hold: Core Data numbers rows from 1; a to-one to an
    /// entity with sub-entities packs its destination's entity number above the key's 48 bits. A row with another key
    /// is refused, naming its table, column and row.
    public static let primaryKeys: ClosedRange<Int64> = 1...((1 << 48) - 1)

    /// The most bytes a compressed model (`Z_MODELCACHE`) may inflate to: real models take tens of kilobytes.
    public static let inflatedBytes = 64 << 20
    /// The most a gzip input read whole (a model, a Core Data log, results) may decompress to; traces and data files
    /// are read in pieces and have no such limit.
    public static let decompressedInputBytes = 1 << 30

    /// How deeply a property list or keyed archive may nest (arrays in dictionaries in arrays …).
    public static let propertyListDepth = 100

    /// The most objects decoding one keyed archive (a transformable value) may visit, counting a shared object once
    /// per reference to it: a real value visits a handful.
    public static let archivedObjectVisits = 1_000_000

    /// Bytes of one record (or entity name) of a data file: `faultline load` reads a file record by record, and a
    /// record longer than this is refused rather than held.
    public static let dataRecordBytes = 16 << 20

    /// Nesting of arrays and objects inside one record of a data file (a transformable attribute's JSON value).
    public static let dataNestingDepth = 100
}
