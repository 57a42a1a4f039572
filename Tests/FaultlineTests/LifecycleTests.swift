import Foundation
import XCTest
@testable import Faultline

// MARK: Seed 000's refresh example

final class Employee: ManagedObject {
    override class var entityName: String { "Employee" }
    var firstName: String { value(forKey: "firstName") as? String ?? "" }
    var lastName: String { value(forKey: "lastName") as? String ?? "" }
    var fullName: String? { value(forKey: "fullName") as? String }

    /// The cached full name is computed when the object is loaded…
    override func awakeFromFetch() {
        try? setPrimitiveValue("\(firstName) \(lastName)", forKey: "fullName")
    }

    /// …and kept up to date by the setters.
    func set(firstName: String? = nil, lastName: String? = nil) throws {
        if let firstName { try setValue(firstName, forKey: "firstName") }
        if let lastName { try setValue(lastName, forKey: "lastName") }
        try setValue("\(self.firstName) \(self.lastName)", forKey: "fullName")
    }
}

// MARK: Moody's denormalized counters (seed 001 L2884–2945) and delete propagation (L4154–4182)

final class Mood: ManagedObject {
    override class var entityName: String { "Mood" }
    var country: Country? { value(forKey: "country") as? Country }

    /// Deleting the last mood of a country deletes the country.
    override func prepareForDeletion() {
        guard let country, let context = managedObjectContext else { return }
        if country.moods.allSatisfy({ $0 === self || $0.isDeleted }) { context.delete(country) }
    }
}

final class Country: ManagedObject {
    override class var entityName: String { "Country" }
    var moods: [Mood] { value(forKey: "moods") as? [Mood] ?? [] }
    var continent: Continent? { value(forKey: "continent") as? Continent }
    var numberOfMoods: Int64 { value(forKey: "numberOfMoods") as? Int64 ?? 0 }
    var committedNumberOfMoods: Int64 { committedValue(forKey: "numberOfMoods") as? Int64 ?? 0 }
    /// The change of the mood count not yet saved.
    var changedMoodCountDelta: Int64 { numberOfMoods - committedNumberOfMoods }

    override func willSave() {
        if changedValues()["moods"] != nil || isDeleted { updateMoodCount() }
    }

    /// Exits early when the count is right, so that the country is not dirtied again.
    func updateMoodCount() {
        let count = isDeleted ? 0 : Int64(moods.count { !$0.isDeleted })
        guard count != numberOfMoods else { return }
        // Moody's refreshUpdateDate: only when the program did not set the date itself.
        if count > numberOfMoods && changedValues()["updatedAt"] == nil { try? setValue(Date(), forKey: "updatedAt") }
        try? setValue(count, forKey: "numberOfMoods")
        // A deleted country no longer has a continent: its committed one still counts it.
        (continent ?? committedValue(forKey: "continent") as? Continent)?.updateMoodCount()
    }

    /// Deleting the last country of a continent deletes the continent.
    override func prepareForDeletion() {
        guard let continent, let context = managedObjectContext else { return }
        if continent.countries.allSatisfy({ $0 === self || $0.isDeleted }) { context.delete(continent) }
    }
}

final class Continent: ManagedObject {
    override class var entityName: String { "Continent" }
    var countries: [Country] { value(forKey: "countries") as? [Country] ?? [] }
    var numberOfMoods: Int64 { value(forKey: "numberOfMoods") as? Int64 ?? 0 }
    var numberOfCountries: Int64 { value(forKey: "numberOfCountries") as? Int64 ?? 0 }

    override func willSave() {
        if changedValues()["countries"] != nil {
            let count = Int64(countries.count)
            if count != numberOfCountries { try? setValue(count, forKey: "numberOfCountries") }
        }
    }

    func updateMoodCount() {
        var all = countries
        for case let country as Country in (committedValue(forKey: "countries") as? [ManagedObject] ?? []) where !all.contains(where: { $0 === country }) {
            all.append(country)
        }
        let delta = all.reduce(Int64(0)) { $0 + $1.changedMoodCountDelta }
        let committed = committedValue(forKey: "numberOfMoods") as? Int64 ?? 0
        guard numberOfMoods - committed != delta else { return }
        if delta > 0 && changedValues()["updatedAt"] == nil { try? setValue(Date(), forKey: "updatedAt") }
        try? setValue(committed + delta, forKey: "numberOfMoods")
    }
}

/// Seed 001 L3878–4005: object-trump for the sync context, the newest `updatedAt` wins, and denormalized counters are
/// recomputed from the persisted state (a country recounts its moods; a continent counts them in SQL).
final class MoodyMergePolicy: MergePolicy, @unchecked Sendable {
    init() { super.init(merge: .mergeByPropertyObjectTrump) }

    override func resolve(optimisticLockingConflicts conflicts: [MergeConflict], in context: ManagedObjectContext) throws {
        let newest = conflicts.map { conflict -> Date in
            let object = context.object(with: conflict.object)
            return [object.value(forKey: "updatedAt"), conflict.objectSnapshot?["updatedAt"], conflict.cachedSnapshot?["updatedAt"],
                    conflict.persistedSnapshot?["updatedAt"]].compactMap { $0 as? Date }.max() ?? Date(timeIntervalSince1970: 0)
        }
        try super.resolve(optimisticLockingConflicts: conflicts, in: context)
        for (conflict, date) in zip(conflicts, newest) {
            let object = context.object(with: conflict.object)
            try object.setValue(date, forKey: "updatedAt")
            switch object {
            case let country as Country:
                context.refresh(country, mergeChanges: true)
                try country.setValue(Int64(country.moods.count), forKey: "numberOfMoods")
            case let continent as Continent:
                context.refresh(continent, mergeChanges: true)
                try continent.setValue(Int64(continent.countries.count), forKey: "numberOfCountries")
                let moods = try context.count(for: FetchRequest<Mood>(predicate: try ObjectPredicate(parsing: "country IN %@", continent.countries)))
                try continent.setValue(Int64(moods), forKey: "numberOfMoods")
            default:
                break
            }
        }
    }
}

/// A subclass that records its lifecycle calls and validates itself.
final class Walker: ManagedObject {
    override class var entityName: String { "Walker" }
    nonisolated(unsafe) static var log: [String] = []
    var name: String { value(forKey: "name") as? String ?? "" }
    private func note(_ event: String) { Walker.log.append("\(event) \(name)") }

    override func awakeFromInsert() { note("awakeFromInsert") }
    override func awakeFromFetch() { note("awakeFromFetch") }
    override func willSave() { note("willSave") }
    override func didSave() { note("didSave") }
    override func prepareForDeletion() { note("prepareForDeletion") }
    override func willTurnIntoFault() { note("willTurnIntoFault") }
    override func didTurnIntoFault() { Walker.log.append("didTurnIntoFault") }
    override func validateForInsert() throws {
        if name.hasPrefix("x") { throw ValidationFailure(object: objectID, key: "name", value: name, rule: "must not start with x") }
    }
    override func validateForUpdate() throws {
        if name.hasPrefix("y") { throw ValidationFailure(object: objectID, key: "name", value: name, rule: "must not start with y") }
    }
    override func validateForDelete() throws {
        if name == "keep" { throw ValidationFailure(object: objectID, key: "name", value: name, rule: "cannot be deleted") }
    }
}

final class LifecycleTests: XCTestCase {
    func testSaritSmithRefreshKeepsTheStaleTransient() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Employee", properties: [
                AttributeDescription(name: "firstName", type: .string),
                AttributeDescription(name: "lastName", type: .string),
                AttributeDescription(name: "fullName", type: .string, isTransient: true),
            ]),
        ])
        model.entity(named: "Employee")!.register(Employee.self)
        let dir = TemporaryDirectory()
        let (coordinator, setup) = try makeStack(model, in: dir)
        let id = try setup.performAndWait { () throws -> ManagedObjectID in
            let employee = Employee(context: setup)
            try employee.set(firstName: "Sarit", lastName: "Smith")
            try setup.save()
            return employee.objectID
        }
        let one = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let two = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let inTwo = try two.performAndWait { try two.existingObject(with: id) as! Employee }
        XCTAssertEqual(two.performAndWait { inTwo.fullName }, "Sarit Smith", "computed in awakeFromFetch")
        XCTAssertFalse(two.performAndWait { inTwo.hasChanges }, "a primitive set marks nothing")
        try one.performAndWait {
            let employee = try one.existingObject(with: id) as! Employee
            try employee.set(firstName: "Fiona")
            XCTAssertEqual(employee.fullName, "Fiona Smith")
            try one.save()
        }
        try two.performAndWait {
            try inTwo.set(lastName: "Jones")
            XCTAssertEqual(inTwo.fullName, "Sarit Jones")
            two.refresh(inTwo, mergeChanges: true)
            XCTAssertEqual(inTwo.firstName, "Fiona", "not changed here: the store's new value")
            XCTAssertEqual(inTwo.lastName, "Jones", "changed here: kept")
            XCTAssertEqual(inTwo.fullName, "Sarit Jones", "the transient is restored after awakeFromFetch, stale as the guide says")
        }
    }

    private func moodyModel() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Mood", properties: [
                AttributeDescription(name: "date", type: .date),
                RelationshipDescription(name: "country", destination: "Country", inverse: "moods", deleteRule: .nullify),
            ]),
            EntityDescription(name: "Region", isAbstract: true, properties: [
                AttributeDescription(name: "numericISO3166Code", type: .integer16),
                AttributeDescription(name: "updatedAt", type: .date),
                AttributeDescription(name: "numberOfMoods", type: .integer64, defaultValue: Int64(0)),
            ], uniquenessConstraints: [["numericISO3166Code"]]),
            EntityDescription(name: "Country", parent: "Region", properties: [
                RelationshipDescription(name: "moods", destination: "Mood", inverse: "country", isToMany: true, deleteRule: .cascade),
                RelationshipDescription(name: "continent", destination: "Continent", inverse: "countries", deleteRule: .nullify),
            ]),
            EntityDescription(name: "Continent", parent: "Region", properties: [
                AttributeDescription(name: "numberOfCountries", type: .integer64, defaultValue: Int64(0)),
                RelationshipDescription(name: "countries", destination: "Country", inverse: "continent", isToMany: true, deleteRule: .cascade),
            ]),
        ])
        model.entity(named: "Mood")!.register(Mood.self)
        model.entity(named: "Country")!.register(Country.self)
        model.entity(named: "Continent")!.register(Continent.self)
        return model
    }

    func testMoodyDenormalizedCounters() throws {
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(try moodyModel(), in: dir)
        let past = Date(timeIntervalSinceReferenceDate: 0)
        let (europe, france) = try context.performAndWait { () throws -> (Continent, Country) in
            let europe = Continent(context: context)
            try europe.setValue(Int16(150), forKey: "numericISO3166Code")
            try europe.setValue(past, forKey: "updatedAt")
            let france = Country(context: context)
            try france.setValue(Int16(250), forKey: "numericISO3166Code")
            try france.setValue(past, forKey: "updatedAt")
            try france.setValue(europe, forKey: "continent")
            try context.save()
            return (europe, france)
        }
        func mood(in country: Country) throws -> Mood {
            let mood = Mood(context: context)
            try mood.setValue(Date(), forKey: "date")
            try mood.setValue(country, forKey: "country")
            return mood
        }
        try context.performAndWait {
            XCTAssertEqual(europe.numberOfCountries, 1, "counted by the continent's willSave on insert")

            // Inserting moods updates the counts and updatedAt of the country and its continent.
            let first = try mood(in: france)
            _ = try mood(in: france)
            try context.save()
            XCTAssertFalse(context.hasChanges, "willSave's changes were saved, nothing dirtied again")
            XCTAssertEqual(france.numberOfMoods, 2)
            XCTAssertEqual(europe.numberOfMoods, 2)
            XCTAssertGreaterThan(france.value(forKey: "updatedAt") as! Date, past)
            XCTAssertGreaterThan(europe.value(forKey: "updatedAt") as! Date, past)

            // Deleting a mood updates the counts but not updatedAt.
            try france.setValue(past, forKey: "updatedAt")
            try europe.setValue(past, forKey: "updatedAt")
            try context.save()
            context.delete(first)
            try context.save()
            XCTAssertEqual(france.numberOfMoods, 1)
            XCTAssertEqual(europe.numberOfMoods, 1)
            XCTAssertEqual(france.value(forKey: "updatedAt") as? Date, past)
            XCTAssertEqual(europe.value(forKey: "updatedAt") as? Date, past)

            // A mood in a new country counts the country on the continent.
            let germany = Country(context: context)
            try germany.setValue(Int16(276), forKey: "numericISO3166Code")
            try germany.setValue(europe, forKey: "continent")
            let german = try mood(in: germany)
            try context.save()
            XCTAssertEqual(europe.numberOfCountries, 2)
            XCTAssertEqual(europe.numberOfMoods, 2)
            XCTAssertEqual(germany.numberOfMoods, 1)

            // Deleting the last mood of a country deletes the country and updates both counters.
            context.delete(german)
            XCTAssertTrue(germany.isDeleted, "prepareForDeletion propagated the delete")
            try context.save()
            XCTAssertEqual(europe.numberOfCountries, 1)
            XCTAssertEqual(europe.numberOfMoods, 1)
        }
        // The counters are in the store, not only in memory.
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let continent = try XCTUnwrap(try reader.fetch(FetchRequest<Continent>()).first)
            XCTAssertEqual(continent.numberOfMoods, 1)
            XCTAssertEqual(continent.numberOfCountries, 1)
            XCTAssertEqual(try reader.count(for: FetchRequest<Country>()), 1)
            XCTAssertEqual(try reader.count(for: FetchRequest<Mood>()), 1)
        }
    }

    func testMoodyMergePolicy() throws {
        let dir = TemporaryDirectory()
        let (coordinator, setup) = try makeStack(try moodyModel(), in: dir)
        // Later than the dates the hooks set while setting up.
        let early = Date().addingTimeInterval(1000), late = Date().addingTimeInterval(2000)
        try setup.performAndWait {
            let europe = Continent(context: setup)
            try europe.setValue(Int16(150), forKey: "numericISO3166Code")
            let france = Country(context: setup)
            try france.setValue(Int16(250), forKey: "numericISO3166Code")
            try france.setValue(europe, forKey: "continent")
            let mood = Mood(context: setup)
            try mood.setValue(france, forKey: "country")
            try setup.save()
        }
        // Two contexts on separate coordinators (the app and its sync) each add a mood to France.
        let other = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel)
        try other.addPersistentStore(at: dir.file("store.sqlite"))
        let view = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        let sync = ManagedObjectContext(.privateQueue, coordinator: other)
        view.mergePolicy = MoodyMergePolicy()
        sync.mergePolicy = MoodyMergePolicy()
        func addMood(in context: ManagedObjectContext, updatedAt: Date) throws {
            let france = try XCTUnwrap(try context.fetch(FetchRequest<Country>()).first)
            _ = france.moods
            let mood = Mood(context: context)
            try mood.setValue(france, forKey: "country")
            try france.setValue(updatedAt, forKey: "updatedAt")
        }
        try view.performAndWait { try addMood(in: view, updatedAt: late) }
        try sync.performAndWait {
            try addMood(in: sync, updatedAt: early)
            try sync.save()
        }
        try view.performAndWait { try view.save() }   // conflicts on France and Europe; the policy resolves them

        let reader = ManagedObjectContext(.privateQueue, coordinator: PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel))
        try reader.coordinator.addPersistentStore(at: dir.file("store.sqlite"))
        try reader.performAndWait {
            let france = try XCTUnwrap(try reader.fetch(FetchRequest<Country>()).first)
            let europe = try XCTUnwrap(try reader.fetch(FetchRequest<Continent>()).first)
            XCTAssertEqual(france.numberOfMoods, 3, "the counter is the persisted count, not either context's guess of 2")
            XCTAssertEqual(europe.numberOfMoods, 3)
            XCTAssertEqual(europe.numberOfCountries, 1)
            XCTAssertEqual(france.value(forKey: "updatedAt") as? Date, late, "the latest updatedAt wins")
        }

        // The ISO code is unique: the sync context creating France again ends with one France, holding both moods.
        try sync.performAndWait {
            let france = Country(context: sync)
            try france.setValue(Int16(250), forKey: "numericISO3166Code")
            let mood = Mood(context: sync)
            try mood.setValue(france, forKey: "country")
            try sync.save()
        }
        try reader.performAndWait {
            reader.reset()
            let countries = try reader.fetch(FetchRequest<Country>())
            XCTAssertEqual(countries.count, 1)
            XCTAssertEqual(countries.first?.moods.count, 4, "the new France's mood moved to the stored France")
        }
    }

    func testHooksRunInCoreDataOrderAndCustomValidationAggregates() throws {
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Walker", properties: [
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(name: "steps", type: .integer32, maxValue: 100),
            ]),
        ])
        model.entity(named: "Walker")!.register(Walker.self)
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(model, in: dir)
        Walker.log = []
        try context.performAndWait {
            let walker = try context.insertNewObject(forEntityName: "Walker")
            try walker.setValue("ann", forKey: "name")
            try context.save()
            XCTAssertEqual(Walker.log, ["awakeFromInsert ", "willSave ann", "didSave ann"])
        }
        Walker.log = []
        let other = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let ann = try XCTUnwrap(try other.fetch(FetchRequest<Walker>()).first)
            XCTAssertEqual(Walker.log, [], "a fault: not awake yet")
            _ = ann.name
            XCTAssertEqual(Walker.log, ["awakeFromFetch ann"])
            other.refresh(ann, mergeChanges: false)
            XCTAssertEqual(Walker.log.suffix(2), ["willTurnIntoFault ann", "didTurnIntoFault"])
            other.delete(ann)
            XCTAssertEqual(Walker.log.filter { $0.hasPrefix("prepareForDeletion") }, ["prepareForDeletion ann"])
            other.rollback()
        }

        // Every failure of one save together: the model's rule and each object's custom rule; nothing written and
        // the context keeps its changes.
        try context.performAndWait {
            let keep = try context.insertNewObject(forEntityName: "Walker")
            try keep.setValue("keep", forKey: "name")
            try context.save()
            let bad = try context.insertNewObject(forEntityName: "Walker")
            try bad.setValue("xavier", forKey: "name")
            try bad.setValue(Int32(500), forKey: "steps")
            let ann = try XCTUnwrap(try context.fetch(FetchRequest<Walker>(predicate: try ObjectPredicate(parsing: "name == 'ann'"))).first)
            try ann.setValue("yann", forKey: "name")
            context.delete(keep)
            XCTAssertThrowsError(try context.save()) { error in
                guard case SaveError.validation(let failures) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(failures.map(\.rule).sorted(), ["cannot be deleted", "greater than the maximum 100.0", "must not start with x", "must not start with y"])
            }
            XCTAssertTrue(context.hasChanges)
            XCTAssertTrue(bad.isInserted && ann.isUpdated && keep.isDeleted)
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try reader.performAndWait { try reader.fetch(FetchRequest<Walker>()).map(\.name).sorted() }, ["ann", "keep"])
    }
}

// MARK: A willSave that never settles

final class Breeder: ManagedObject {
    override class var entityName: String { "Breeder" }
    /// Every save of a breeder inserts another breeder: the context never settles.
    override func willSave() {
        guard isInserted, let context = managedObjectContext else { return }
        _ = try? context.insertNewObject(forEntityName: "Breeder")
    }
}

final class WillSaveLimitTests: XCTestCase {
    /// Core Data gives up after 100 attempts ("the context is still dirty"); so does a save here, writing nothing.
    func testAWillSaveThatKeepsDirtyingTheContextFailsTheSave() throws {
        let model = try ManagedObjectModel(entities: [EntityDescription(name: "Breeder", properties: [AttributeDescription(name: "name", type: .string)])])
        model.entity(named: "Breeder")!.register(Breeder.self)
        let dir = TemporaryDirectory()
        let (coordinator, context) = try makeStack(model, in: dir)
        try context.performAndWait {
            _ = try context.insertNewObject(forEntityName: "Breeder")
            XCTAssertThrowsError(try context.save()) { error in
                XCTAssertEqual("\(error)", "the context is still dirty after 100 rounds of willSave(): a hook keeps changing objects (Limits.willSaveRounds)")
            }
            XCTAssertEqual(context.insertedObjects.count, 101, "the first breeder and one more per round")
        }
        let reader = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        XCTAssertEqual(try reader.performAndWait { try reader.count(for: FetchRequest<ManagedObject>(entityName: "Breeder")) }, 0, "nothing written")
    }
}
