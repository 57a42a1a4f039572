import Faultline
import Foundation

/// The seed's City/Person graph (seed 001 L2451–L2491, L2800–L2834): cities with a population (log-normal, the
/// book's Berlin, San Francisco and Beijing pinned), one capital in 50, residents (to-many, inverse `homeTown`)
/// and a mayor (one-to-one with `Person.mayorOf`); names with accents and a normalized shadow attribute
/// (`name_normalized`, seed 001 L4829–L4912).
public enum CityWorkload {
    public static let name = Attribute<String>("name")
    public static let normalizedName = Attribute<String>("name_normalized")
    public static let population = Attribute<Int64>("population")
    public static let isCapital = Attribute<Bool>("isCapital")
    public static let residents = ToMany<ManagedObject>("residents")
    public static let mayor = ToOne<ManagedObject>("mayor")
    public static let homeTown = ToOne<ManagedObject>("homeTown")
    public static let personName = Attribute<String>("name")

    /// Every column of a `ZCITY` row but `Z_ENT`, as the peers' records read it (the values a fetched city holds).
    public static let rowColumns = "Z_PK, Z_OPT, ZISCAPITAL, ZPOPULATION, ZMAYOR, ZNAME, ZNAME_NORMALIZED"

    /// The model; `indexedPopulation` adds an index on `population`.
    public static func model(indexedPopulation: Bool = true) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: [
            EntityDescription(name: "City", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                AttributeDescription(name: "name_normalized", type: .string, isOptional: false, defaultValue: "", isIndexed: true),
                AttributeDescription(name: "population", type: .integer64, isOptional: false, defaultValue: Int64(0), isIndexed: indexedPopulation),
                AttributeDescription(name: "isCapital", type: .boolean, isOptional: false, defaultValue: false),
                RelationshipDescription(name: "residents", destination: "Person", inverse: "homeTown", isToMany: true),
                RelationshipDescription(name: "mayor", destination: "Person", inverse: "mayorOf"),
            ]),
            EntityDescription(name: "Person", properties: [
                AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: ""),
                RelationshipDescription(name: "homeTown", destination: "City", inverse: "residents"),
                RelationshipDescription(name: "mayorOf", destination: "City", inverse: "mayor"),
            ]),
        ])
    }

    /// The book's search normalization (seed 001 L4871–L4885): Latin, ASCII, lower case.
    public static func normalizedForSearch(_ text: String) -> String {
        text.applyingTransform(StringTransform("Any-Latin; Latin-ASCII; Lower"), reverse: false)
            ?? text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    private static let syllables = ["ber", "lin", "sa", "int", "é", "ti", "enne", "bé", "ziers", "mün", "chen", "zü", "rich",
                                    "kö", "ln", "pa", "ris", "são", "pau", "lo", "ma", "drid", "ró", "ma", "gdańsk", "kra",
                                    "ków", "ly", "on", "ham", "burg", "tou", "lou", "se", "ne", "apel", "ná", "ch", "od"]

    /// A city name: two to four syllables, capitalized, accents included.
    static func cityName(_ random: inout SeededGenerator) -> String {
        let count = Int.random(in: 2...4, using: &random)
        let word = (0..<count).map { _ in syllables.randomElement(using: &random)! }.joined()
        return word.prefix(1).uppercased() + word.dropFirst()
    }

    /// Populations: log-normal around 50,000 (a tail to about 20 million), from a seeded generator.
    static func population(_ random: inout SeededGenerator) -> Int64 {
        // Box–Muller: a normal variate from two uniform ones.
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random), u2 = Double.random(in: 0..<1, using: &random)
        let normal = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
        return Int64(min(2.5e7, exp(log(50_000) + 1.5 * normal)))
    }

    /// Builds the store: `cities` cities and, when `residents`, 1–33 people in each (about 5 on average, a few
    /// cities far more), each city with a mayor among its residents.
    public static func generate(cities: Int, into url: URL, indexedPopulation: Bool = true, residents withResidents: Bool = true,
                                seed: UInt64 = 2_451) throws {
        let model = try model(indexedPopulation: indexedPopulation)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model, probes: .disabled)
        try coordinator.addPersistentStore(at: url)
        let context = ManagedObjectContext(.privateQueue, coordinator: coordinator)
        var random = SeededGenerator(seed: seed)
        try context.performAndWait {
            let cityEntity = model.entity(named: "City")!, personEntity = model.entity(named: "Person")!
            let pinned: [(String, Int64, Bool)] = [("Berlin", 3_562_166, true), ("San Francisco", 852_469, false), ("Beijing", 21_516_000, true)]
            var person = 0
            for i in 0..<cities {
                let city = ManagedObject(entity: cityEntity, insertInto: context)
                let (cityName, people, capital) = i < pinned.count && cities >= 100
                    ? pinned[i] : (Self.cityName(&random), Self.population(&random), Int.random(in: 0..<50, using: &random) == 0)
                city[name] = cityName
                city[normalizedName] = normalizedForSearch(cityName)
                city[population] = people
                city[isCapital] = capital
                // Zipf-like: most cities get a few residents, some many more.
                let count = withResidents ? max(1, Int(5 / Double.random(in: 0.05...1, using: &random)) / 3) : 0
                for j in 0..<count {
                    let resident = ManagedObject(entity: personEntity, insertInto: context)
                    resident[personName] = "Person \(person)"
                    person += 1
                    city.add(resident, to: residents)
                    if j == 0 { city[mayor] = resident }
                }
                if i % 2_000 == 1_999 { try context.save(); context.reset() }
            }
            try context.save()
        }
    }

    /// `population BETWEEN low AND high` for each range, on the context's queue, each in three phases: the cities
    /// as objects (fetch), their name and population read (use), the objects dropped (release); returns the rows.
    public static func rangeQueries(_ context: ManagedObjectContext, ranges: [(Int64, Int64)], clock: PhaseClock) throws -> Int {
        try context.performAndWait {
            var count = 0
            clock.lap(.fetch)
            for (low, high) in ranges {
                let request = FetchRequest<ManagedObject>(entityName: "City",
                                                          predicate: try ObjectPredicate(parsing: "population BETWEEN {%@, %@}", argumentArray: [low, high]))
                request.returnsObjectsAsFaults = false
                var held: [ManagedObject]? = try context.fetch(request)
                clock.lap(.fetch)
                for city in held! { count += city[name].utf8.count > 0 && city[population] >= 0 ? 1 : 0 }
                clock.lap(.use)
                PhaseClock.release(&held)
                clock.lap(.release)
            }
            return count
        }
    }
}
