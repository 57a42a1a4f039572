//
//  Tag+CoreDataClass.swift
//  Journal
//

import Foundation
import Faultline

public class Tag: ManagedObject {}

extension Tag {
    @nonobjc public class func fetchRequest() -> FetchRequest<Tag> {
        return FetchRequest<Tag>(entityName: "Tag")
    }

    private static let nameKey = Attribute<String>("name")
    private static let entriesKey = ToMany<Entry>("entries")

    /* @NSManaged */ public var name: String { get { self[Tag.nameKey] } set { self[Tag.nameKey] = newValue } }
    /* @NSManaged */ public var entries: [Entry] { get { self[Tag.entriesKey] } set { self[Tag.entriesKey] = newValue } }
}
