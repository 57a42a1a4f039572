//
//  Entry+CoreDataClass.swift
//  Journal
//
//  As Xcode generates it ("Category/Extension" code generation), then `import CoreData` → `import Faultline` and
//  the NS prefixes dropped.
//

import Foundation
import Faultline

public class Entry: ManagedObject {
    public override func awakeFromInsert() {
        super.awakeFromInsert()
        identifier = UUID()
        createdAt = Date()
    }

    public override func willSave() {
        super.willSave()
        if !isDeleted && title.isEmpty { title = "Untitled" }
    }
}
