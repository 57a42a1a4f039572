import Foundation

// UIKit and AppKit give `IndexPath` its section and row (or item); Foundation on Linux does not, and a fetched results
// controller's index paths need them.
#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path of `row` in `section` (UIKit's `init(row:section:)`).
    public init(row: Int, section: Int) { self.init(indexes: [section, row]) }

    /// An index path of `item` in `section` (UIKit's `init(item:section:)`).
    public init(item: Int, section: Int) { self.init(indexes: [section, item]) }

    /// The section: the first index.
    public var section: Int { self[0] }

    /// The row in the section: the second index.
    public var row: Int { self[1] }

    /// The item in the section: the second index.
    public var item: Int { self[1] }
}
#endif
