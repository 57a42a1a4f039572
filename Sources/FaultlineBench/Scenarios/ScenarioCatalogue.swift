/// The built-in scenarios, in the order `faultline bench` runs them: each tests one claim of Core Data's performance
/// advice, cited by work, chapter and section (`ClaimSource`), grouped by theme (`BenchTheme`).
public enum ScenarioCatalogue {
    public static var all: [BenchScenario] {
        [tiers, contextTier, fetchObjects, fetchPhases, insertThenSave, accessors, resultTypes, faultCosts, insert, saveGranularity, permanentIDs, historyCost, update, prefetchMayors, fetchFaults, prefetchEmployees, departmentNames, denormalizedCount, traversal, idLookups, findOrFetch, singleton, smallSet, propertyValuesOff,
         batchSize, resultsControllerBatchSize, paging, earliestValue, sortInSQLite, localizedSort, nonFiringMethods, indexSmall, indexLarge, compoundIndex, capitalsIndex, moodListIndex, indexCosts, normalizedSearch, predicateOrder, predicateBuilder, subquery, noIndex, fetchTemplate, aggregate, pointLookup, rangeQuery, walReaders, changesets, coordinators, mainQueueBudget, blobs, subentities, wideOrSplit, optionalOrDefault, inverseRelationships, transformableEncoding, lazyTransformable, locationColumns, integerWidth, toManyShapes, orderedRelationships, toManyAppends, prebuiltStore, probeCost, batchUpdate, batchDelete, deleteRules, mergePolicies, validationCost, mergeCost, saveDurability, fileSize, walGrowth,
         migration, migrationChain, importReset, importQueue, findOrCreate, importUndo, fetchMemory, refreshToFault, refreshHeld, rowCacheSharing, retainsRegistered, staleness, storeOpen, resultsControllerCache, resultsControllerChangeStorm, fetchedPropertyCache]
    }

    /// The scenarios whose claims are about memory: the README's Memory table.
    public static let memoryScenarioIDs: Set<String> = ["import-reset", "import-undo", "fetch-memory", "refresh-to-fault",
                                                         "row-cache-sharing", "retains-registered", "blobs"]

    /// The theme of a built-in scenario (for results written before themes were recorded).
    static func theme(of id: String) -> BenchTheme? { all.first { $0.id == id }?.theme }
}
