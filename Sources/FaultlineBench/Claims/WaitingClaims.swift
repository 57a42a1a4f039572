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
        WaitingClaim(.startup, "A compiled model loads faster than the model's source.",
                     [ClaimSource(.kodeco, "The Core Data Stack", "The Managed Object Model", keys: ["perf-1"]), ClaimSource(.appleGuideClassic, "Managed Object Models", "Compiling a Data Model", keys: ["perf-10"])], waitingFor: "writing compiled models (.mom): Faultline reads them, it does not compile them"),
    ]
}
