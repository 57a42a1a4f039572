/// Core Data's `NSFetchedResultsSectionInfo`: one section of a fetched results controller.
public protocol FetchedResultsSectionInfo {
    /// The section's name: the section key path's value of its objects (`""` for nil).
    var name: String { get }
    /// The section's index title (by default its name's first letter, capitalized).
    var indexTitle: String? { get }
    /// How many objects the section holds.
    var numberOfObjects: Int { get }
    /// The section's objects, in order.
    var objects: [Any]? { get }
}

/// A section of a fetched results controller: a run of its fetched objects.
struct FetchedSection: FetchedResultsSectionInfo {
    let name: String
    let indexTitle: String?
    /// Where the section starts in the fetched objects.
    let start: Int
    let numberOfObjects: Int
    /// The controller's objects (the section is `start..<start + numberOfObjects` of them); nil for a section
    /// reported deleted.
    let rows: ControllerRows?

    var objects: [Any]? {
        guard let rows else { return [] }
        return (start..<start + numberOfObjects).map { rows.object(at: $0) }
    }
}
