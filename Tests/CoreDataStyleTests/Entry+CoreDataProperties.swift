//
//  Entry+CoreDataProperties.swift
//  Journal
//
//  As Xcode generates it, with the documented equivalent of `@NSManaged` (Swift on Linux has no Objective-C
//  runtime): each `@NSManaged public var x: T` becomes a property over a typed key.
//

import Foundation
import Faultline

extension Entry {
    @nonobjc public class func fetchRequest() -> FetchRequest<Entry> {
        return FetchRequest<Entry>(entityName: "Entry")
    }

    private static let bodyKey = Attribute<String?>("body")
    private static let createdAtKey = Attribute<Date?>("createdAt")
    private static let identifierKey = Attribute<UUID?>("identifier")
    private static let isFavoriteKey = Attribute<Bool>("isFavorite")
    private static let moodKey = Attribute<NSNumber?>("mood")
    private static let titleKey = Attribute<String>("title")
    private static let tagsKey = ToMany<Tag>("tags")

    /* @NSManaged */ public var body: String? { get { self[Entry.bodyKey] } set { self[Entry.bodyKey] = newValue } }
    /* @NSManaged */ public var createdAt: Date? { get { self[Entry.createdAtKey] } set { self[Entry.createdAtKey] = newValue } }
    /* @NSManaged */ public var identifier: UUID? { get { self[Entry.identifierKey] } set { self[Entry.identifierKey] = newValue } }
    /* @NSManaged */ public var isFavorite: Bool { get { self[Entry.isFavoriteKey] } set { self[Entry.isFavoriteKey] = newValue } }
    /* @NSManaged */ public var mood: NSNumber? { get { self[Entry.moodKey] } set { self[Entry.moodKey] = newValue } }
    /* @NSManaged */ public var title: String { get { self[Entry.titleKey] } set { self[Entry.titleKey] = newValue } }
    /* @NSManaged */ public var tags: [Tag] { get { self[Entry.tagsKey] } set { self[Entry.tagsKey] = newValue } }
}

extension Entry: Identifiable {}
