import Foundation

/// The changes between two states of a fetched results controller, as Core Data reports them: sections inserted
/// and deleted; objects deleted (at their old index paths), inserted (at their new ones), moved (a changed object
/// whose place among the unchanged ones, or whose section, is not what it was) and updated (a changed object that
/// stays where it was, at its old index path). An unchanged object that only shifts because others came or went is
/// not reported, as in Core Data.
struct FetchedResultsDiff<Key: Hashable> {
    struct Layout {
        /// Each object's key, in order.
        let keys: [Key]
        /// The sections: name and start, in order (the last runs to the end).
        let sections: [(name: String, start: Int)]

        func indexPath(of position: Int) -> IndexPath {
            // The last section starting at or before `position`.
            var low = 0, high = sections.count - 1
            while low < high {
                let middle = (low + high + 1) / 2
                if sections[middle].start <= position { low = middle } else { high = middle - 1 }
            }
            return IndexPath(indexes: [low, position - sections[low].start])
        }
    }

    var sectionChanges: [(name: String, index: Int, type: FetchedResultsChangeType)] = []
    /// An object's change: its key, the type, its old and new index paths and its positions in the old and new lists.
    struct ObjectChange {
        let key: Key
        let type: FetchedResultsChangeType
        let indexPath: IndexPath?
        let newIndexPath: IndexPath?
        let oldPosition: Int?
        let newPosition: Int?
    }
    var objectChanges: [ObjectChange] = []

    var isEmpty: Bool { sectionChanges.isEmpty && objectChanges.isEmpty }

    /// The changes from `old` to `new`, where `changed` holds the keys of the objects whose values changed.
    init(from old: Layout, to new: Layout, changed: Set<Key>) {
        let oldNames = Set(old.sections.map(\.name)), newNames = Set(new.sections.map(\.name))
        for (index, section) in old.sections.enumerated() where !newNames.contains(section.name) {
            sectionChanges.append((section.name, index, .delete))
        }
        for (index, section) in new.sections.enumerated() where !oldNames.contains(section.name) {
            sectionChanges.append((section.name, index, .insert))
        }
        var oldPosition: [Key: Int] = [:]
        oldPosition.reserveCapacity(old.keys.count)
        for (i, key) in old.keys.enumerated() { oldPosition[key] = i }
        var newPosition: [Key: Int] = [:]
        newPosition.reserveCapacity(new.keys.count)
        for (i, key) in new.keys.enumerated() { newPosition[key] = i }

        var deletes: [ObjectChange] = []
        for (i, key) in old.keys.enumerated() where newPosition[key] == nil {
            deletes.append(ObjectChange(key: key, type: .delete, indexPath: old.indexPath(of: i), newIndexPath: nil, oldPosition: i, newPosition: nil))
        }
        var inserts: [ObjectChange] = []
        for (i, key) in new.keys.enumerated() where oldPosition[key] == nil {
            inserts.append(ObjectChange(key: key, type: .insert, indexPath: nil, newIndexPath: new.indexPath(of: i), oldPosition: nil, newPosition: i))
        }
        // A changed object's slot: how many unchanged objects (present before and after) precede it. Their order
        // cannot change, so a changed object moved when its slot, its rank among changed objects of the same slot,
        // or its section is not what it was.
        func slots(_ keys: [Key], isUnchangedSurvivor: (Key) -> Bool) -> [Key: (slot: Int, rank: Int)] {
            var result: [Key: (Int, Int)] = [:]
            var slot = 0, rank = 0
            for key in keys {
                if isUnchangedSurvivor(key) {
                    slot += 1
                    rank = 0
                } else if changed.contains(key) {
                    result[key] = (slot, rank)
                    rank += 1
                }
            }
            return result
        }
        let survives = { (key: Key) in oldPosition[key] != nil && newPosition[key] != nil && !changed.contains(key) }
        let before = slots(old.keys.filter { newPosition[$0] != nil }, isUnchangedSurvivor: survives)
        let after = slots(new.keys.filter { oldPosition[$0] != nil }, isUnchangedSurvivor: survives)
        var moves: [ObjectChange] = []
        var updates: [ObjectChange] = []
        for (i, key) in old.keys.enumerated() where changed.contains(key) {
            guard let j = newPosition[key], let was = before[key], let now = after[key] else { continue }
            let from = old.indexPath(of: i), to = new.indexPath(of: j)
            if was.slot != now.slot || was.rank != now.rank || old.sections[from[0]].name != new.sections[to[0]].name {
                moves.append(ObjectChange(key: key, type: .move, indexPath: from, newIndexPath: to, oldPosition: i, newPosition: j))
            } else {
                updates.append(ObjectChange(key: key, type: .update, indexPath: from, newIndexPath: nil, oldPosition: i, newPosition: j))
            }
        }
        objectChanges = deletes + inserts + moves + updates
    }
}
