extension ScenarioCatalogue {
    /// The claims no scenario measures yet, by theme (`faultline bench --list` shows them after the scenarios).
    public static let waiting: [WaitingClaim] = [
        // SQLite's own levers
        WaitingClaim(.sqlite, "Page and OS caches hide the SQL tier's cost until the database no longer fits in them.",
                     [.objcio("Performance", "Performance Characteristics of Core Data's Stack", "P-11")], waitingFor: "a cold-cache mode (dropping the OS page cache needs privileges)"),
        // Concurrency
        WaitingClaim(.concurrency, "A fetch is synchronous and blocks its context; an asynchronous fetch keeps an expensive fetch off the context that waits for it, and can be cancelled.",
                     [.objcio("Accessing Data", "Fetch Requests", "P-64", "P-76")], waitingFor: "NSAsynchronousFetchRequest"),
        // Memory
        WaitingClaim(.memory, "Iterating a million objects, reading one attribute, stays in bounded memory when they are refreshed or the context reset as it goes.",
                     [ClaimSource(.studyNotes, "Understanding", "Memory", keys: ["W-004-5"]), .apple("Performance", "Reducing Memory Overhead", "B11")],
                     waitingFor: "a scenario over 10⁶ objects (the scales stop at 200,000 on this machine's budget)"),
        // Start-up
        WaitingClaim(.startup, "Two configurations in two store files split the data each part of the app opens.",
                     [ClaimSource(.appleGuideClassic, "Managed Object Models", "Configurations", keys: ["W-003-2"])], waitingFor: "several stores per coordinator"),
        // Migration
        WaitingClaim(.migration, "Moving a store to another type (an atomic store to SQLite) rewrites it whole.",
                     [ClaimSource(.studyNotes, "Advanced", "Store types", keys: ["W-004-10"])], waitingFor: "migratePersistentStore and a second store type"),
        // Avoiding fetches
        WaitingClaim(.startup, "A compiled model loads faster than the model's source.",
                     [ClaimSource(.kodeco, "The Core Data Stack", "The Managed Object Model", keys: ["perf-1"]), ClaimSource(.appleGuideClassic, "Managed Object Models", "Compiling a Data Model", keys: ["perf-10"])], waitingFor: "writing compiled models (.mom): Faultline reads them, it does not compile them"),
    ]
}
