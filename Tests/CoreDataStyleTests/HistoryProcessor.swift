//
//  HistoryProcessor.swift
//  Journal
//
//  Persistent history processing after the last token, as apps with extensions or importers write it.
//

import Foundation
import Faultline

final class HistoryProcessor {
    private let container: PersistentContainer
    private(set) var lastToken: PersistentHistoryToken?
    private(set) var processedTransactions = 0

    init(container: PersistentContainer) {
        self.container = container
    }

    /// Merges every transaction after the last token made by another author into the view context, then purges
    /// the history up to it.
    func processNewHistory() throws {
        let taskContext = container.newBackgroundContext()
        try taskContext.performAndWait {
            let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
            request.resultType = .transactionsAndChanges
            guard let historyResult = try taskContext.execute(request) as? PersistentHistoryResult,
                  let history = historyResult.result as? [PersistentHistoryTransaction],
                  !history.isEmpty else {
                return
            }
            let viewContext = container.viewContext
            for transaction in history where transaction.author != "viewContext" {
                viewContext.performAndWait {
                    viewContext.mergeChanges(fromContextDidSave: transaction.objectIDNotification())
                }
                processedTransactions += 1
            }
            lastToken = history.last?.token

            let deleteRequest = PersistentHistoryChangeRequest.deleteHistory(before: lastToken)
            try taskContext.execute(deleteRequest)
        }
    }
}
