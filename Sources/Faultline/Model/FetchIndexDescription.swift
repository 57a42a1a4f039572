/// A named index an entity asks for (Core Data's `NSFetchIndexDescription`): stored as
/// `CREATE INDEX Z_<Entity>_<name> ON <table> (<column> COLLATE BINARY ASC, …)`.
public struct FetchIndexDescription: Sendable, Equatable {
    /// One indexed property.
    public struct Element: Sendable, Equatable {
        /// How the element is indexed.
        public enum Kind: String, Sendable {
            /// An ordinary B-tree index column.
            case binary = "Binary"
            /// Core Data's R-tree index (a virtual table); Faultline records it but creates no index for it.
            case rTree = "RTree"
        }
        /// The property's name.
        public var property: String
        /// Ascending (the default) or descending.
        public var isAscending: Bool
        /// B-tree or R-tree.
        public var kind: Kind

        /// Creates an element.
        public init(property: String, isAscending: Bool = true, kind: Kind = .binary) {
            self.property = property
            self.isAscending = isAscending
            self.kind = kind
        }
    }

    /// The index's name in the model.
    public var name: String
    /// The indexed properties, in order.
    public var elements: [Element]

    /// Creates a fetch index.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
