extension ScenarioCatalogue {
    /// The claims no scenario measures yet, by theme (`faultline bench --list` shows them after the scenarios).
    public static let waiting: [WaitingClaim] = [
        // SQLite's own levers
        WaitingClaim(.sqlite, "Page and OS caches hide the SQL tier's cost until the database no longer fits in them.",
                     [.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-11")], waitingFor: "a cold-cache mode (dropping the OS page cache needs privileges)"),
        // Concurrency
        WaitingClaim(.concurrency, "An asynchronous fetch keeps an expensive fetch off the context that waits for it, and can be cancelled.",
                     [.objcio("Accessing Data", "Fetch Requests", "P-76")], waitingFor: "NSAsynchronousFetchRequest"),
        // Avoiding fetches
        WaitingClaim(.avoidingFetches, "A singleton-like object cached in the context's userInfo costs one fetch, then none.",
                     [.objcio("Performance", "Avoiding Fetch Requests", "P-23", "B-SINGLETON")], waitingFor: "a context's userInfo"),
        WaitingClaim(.avoidingFetches, "A small set loaded once and filtered in memory beats a fetch each time, up to a crossover size.",
                     [.objcio("Performance", "Avoiding Fetch Requests", "P-24", "B-SMALL", "B-SMALLSET"), .apple("Performance", "Fetching Managed Objects", "perf-4")]),
        WaitingClaim(.schema, "Fewer, wider entities beat data split across entities that a screen always shows together.",
                     [.objcio("Performance", "How to Build Efficient Data Models", "P-39", "P-40", "P-41", "B-WIDE")]),
        WaitingClaim(.schema, "Mandatory attributes with a default beat optional ones (NULL handling, index use).",
                     [.apple("Performance", nil, "perf-15")]),
        WaitingClaim(.schema, "Dropping an inverse saves relationship maintenance, probably a premature optimization.",
                     [.objcio("Performance", "How to Build Efficient Data Models", "P-55")]),
        WaitingClaim(.predicates, "noindex: rules an index out of a query's plan.",
                     [.apple("Persistent Store Types and Behaviors", nil, "perf-24")], waitingFor: "noindex: in the predicate language"),
        // Sorting
        WaitingClaim(.startup, "Adding the store can take an unknown time: open the store off the main queue (10⁴ and 10⁶ rows).",
                     [.apple("Integrating Core Data at iOS Startup", nil, "perf-17")]),
        WaitingClaim(.startup, "A compiled model loads faster than the model's source.",
                     [ClaimSource(.kodeco, "The Core Data Stack", "The Managed Object Model", keys: ["perf-8"])]),
        WaitingClaim(.conflicts, "Validation runs on every save of every changed object.",
                     [ClaimSource(.appleGuideClassic, "Managed Object Models", "Programmatic Models", keys: ["W-003-6"])]),
        // N+1
        WaitingClaim(.transformable, "A keyed archive wastes space; a custom encoding (3 bytes a colour) or plain attributes (latitude, longitude) do not; a transient accessor defers decoding.",
                     [.objcio("Data Types", "Custom Data Types", "P-56", "P-60", "P-61", "B-TRANSFORM")]),
        // Overheads
        WaitingClaim(.overheads, "Custom accessors and KVC cost more than the optimized storage.",
                     [.apple("Performance", "NSManagedObject Storage Mechanism", "perf-3"), ClaimSource(.studyNotes, "Understanding", "Accessors", keys: ["W-004-16"])]),
        // Migration
        WaitingClaim(.migration, "A chain of versions migrates step by step; its cost grows with the steps and the rows.",
                     [.objcio("Model Versions and Migrating Data", "Progressive Migrations"), ClaimSource(.studyNotes, "Advanced", "Migration", keys: ["W-004-12"])]),
        // Import
    ]
}
