import Foundation

/// A fetched results controller as its delegate sees it, whatever its result type (Core Data passes
/// `NSFetchedResultsController<NSFetchRequestResult>`; a Swift generic class cannot be passed as another
/// specialization of itself).
public protocol AnyFetchedResultsController: AnyObject {
    /// The sections, once fetched.
    var sections: [any FetchedResultsSectionInfo]? { get }
    /// The fetched objects, once fetched.
    var fetchedManagedObjects: [ManagedObject]? { get }
    /// The object at `indexPath`.
    func managedObject(at indexPath: IndexPath) -> ManagedObject
}

/// Core Data's `NSFetchedResultsControllerDelegate`. Every method is optional (an extension gives each a default
/// that does nothing). The controller calls them on its context's queue, in Core Data's order: will change, the
/// section changes, the object changes (deletes, inserts, moves, updates), did change.
public protocol FetchedResultsControllerDelegate: AnyObject {
    /// Changes are about to be reported.
    func controllerWillChangeContent(_ controller: any AnyFetchedResultsController)
    /// A section was inserted or deleted.
    func controller(_ controller: any AnyFetchedResultsController, didChange sectionInfo: any FetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// An object was inserted (`newIndexPath`), deleted (`indexPath`), moved (both) or updated (`indexPath`).
    func controller(_ controller: any AnyFetchedResultsController, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// Every change of this round was reported.
    func controllerDidChangeContent(_ controller: any AnyFetchedResultsController)
    /// The index title of the section named `sectionName`; nil uses the default (its first letter, capitalized).
    func controller(_ controller: any AnyFetchedResultsController, sectionIndexTitleForSectionName sectionName: String) -> String?
}

extension FetchedResultsControllerDelegate {
    /// Does nothing.
    public func controllerWillChangeContent(_ controller: any AnyFetchedResultsController) {}
    /// Does nothing.
    public func controller(_ controller: any AnyFetchedResultsController, didChange sectionInfo: any FetchedResultsSectionInfo,
                           atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {}
    /// Does nothing.
    public func controller(_ controller: any AnyFetchedResultsController, didChange anObject: Any, at indexPath: IndexPath?,
                           for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    /// Does nothing.
    public func controllerDidChangeContent(_ controller: any AnyFetchedResultsController) {}
    /// Nil: the default title.
    public func controller(_ controller: any AnyFetchedResultsController, sectionIndexTitleForSectionName sectionName: String) -> String? { nil }
}

/// One round of a fetched results controller's changes, by object ID: what server code reads from
/// `FetchedResultsController.changeSets` (Sendable, unlike the objects).
public struct FetchedResultsChangeSet: Sendable, Equatable {
    /// A section inserted or deleted, at its index (in the old sections for a delete, the new ones for an insert).
    public struct SectionChange: Sendable, Equatable {
        /// The section's name.
        public let name: String
        /// Its index: in the old sections for a delete, in the new ones for an insert.
        public let index: Int
        /// `.insert` or `.delete`.
        public let type: FetchedResultsChangeType
    }
    /// An object's change, as the delegate hears it.
    public struct ObjectChange: Sendable, Equatable {
        /// The object's ID (as it is after the change).
        public let objectID: ManagedObjectID
        /// What happened to it.
        public let type: FetchedResultsChangeType
        /// Its index path before the change (nil for an insert).
        public let indexPath: IndexPath?
        /// Its index path after the change, for an insert or a move.
        public let newIndexPath: IndexPath?
    }
    /// Section changes, reported first.
    public let sections: [SectionChange]
    /// Object changes: deletes, inserts, moves, updates.
    public let objects: [ObjectChange]
}
