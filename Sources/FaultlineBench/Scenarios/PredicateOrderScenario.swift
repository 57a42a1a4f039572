import Faultline
import Foundation

extension ScenarioCatalogue {
    /// B2: the same two clauses in either order — a cheap, restrictive comparison and a case-insensitive text match.
    static var predicateOrder: BenchScenario {
        let cheapFirst = "salary > %@ AND name LIKE[c] %@", textFirst = "name LIKE[c] %@ AND salary > %@"
        // B2's other cases: without [c], and with an index on the number.
        let plainCheapFirst = "salary > %@ AND name LIKE %@", plainTextFirst = "name LIKE %@ AND salary > %@"
        let indexedCheapFirst = cheapFirst + ", salary indexed", indexedTextFirst = textFirst + ", salary indexed"
        return BenchScenario(
            id: "predicate-order", title: "Clause order: a restrictive number comparison before or after a case-insensitive text match",
            claim: "Put the most restrictive, cheapest clause first, above all before text matching: SQLite evaluates the clauses in order and skips the rest of a row once one fails, so the text match runs on far fewer rows.",
            theme: .predicates,
            sources: [.apple("Performance", "Fetch Predicates", "perf-5", "B2"), ClaimSource(.studyNotes, "Advanced", "Predicates", keys: ["perf-25", "W-004-2"])],
            ratios: [RatioSpec(cheapFirst, over: textFirst), RatioSpec(plainCheapFirst, over: plainTextFirst), RatioSpec(indexedCheapFirst, over: indexedTextFirst)],
            alternatesOrder: true,
            variants: { setup in
                let model = try EmployeeWorkload.model(), indexedModel = try EmployeeWorkload.model(indexedSalary: true)
                let employees = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.employees(employees), indexedStore = try setup.data.employees(employees, indexedSalary: true)
                // About 1% earn more than 98,000 (the top type's salaries reach 101,000). The case-sensitive pattern
                // matches the same names ("Employee 1…").
                let salary = 98_000.0, pattern = "*EMPLOYEE 1*", exactPattern = "*Employee 1*"
                func variant(_ name: String, _ format: String, _ model: ManagedObjectModel, _ store: URL, textFirst: Bool, pattern: String) -> BenchVariant {
                    .engine(name, model: model, store: store) { context in
                        let arguments: [Any] = textFirst ? [pattern, salary] : [salary, pattern]
                        Bench.sink(Int64(try context.fetch(try Bench.request("Employee", format, arguments[0], arguments[1])).count))
                    }
                }
                return [
                    variant(cheapFirst, cheapFirst, model, store, textFirst: false, pattern: pattern),
                    variant(textFirst, textFirst, model, store, textFirst: true, pattern: pattern),
                    variant(plainCheapFirst, plainCheapFirst, model, store, textFirst: false, pattern: exactPattern),
                    variant(plainTextFirst, plainTextFirst, model, store, textFirst: true, pattern: exactPattern),
                    variant(indexedCheapFirst, cheapFirst, indexedModel, indexedStore, textFirst: false, pattern: pattern),
                    variant(indexedTextFirst, textFirst, indexedModel, indexedStore, textFirst: true, pattern: pattern),
                ]
            },
            judge: { m in
                guard let a = m.counters(cheapFirst), let b = m.counters(textFirst), let ratio = m.ratio(cheapFirst, textFirst) else { return Verdict(held: nil, "not measured") }
                var detail = "both return \(a.rows) rows in \(a.statements) statement, scanning every employee; the number first takes \(BenchFormat.ratio(ratio)) the time of the text first"
                if let c = m.counters(plainCheapFirst), let plain = m.ratio(plainCheapFirst, plainTextFirst) {
                    detail += "; without [c] (\(c.rows) rows): \(BenchFormat.ratio(plain))"
                }
                if let d = m.counters(indexedCheapFirst), let e = m.counters(indexedTextFirst), let indexed = m.ratio(indexedCheapFirst, indexedTextFirst) {
                    detail += "; with salary indexed, SQLite searches the index whichever comes first (\(d.fullScanStatements + e.fullScanStatements) scans): \(BenchFormat.ratio(indexed))"
                }
                return Verdict(held: a.rows == b.rows && ratio <= 0.95, detail)
            })
    }
}

extension ScenarioCatalogue {
    /// perf-24: an unselective range on an indexed attribute, through the index or with `noindex:` ruling it out.
    static var noIndex: BenchScenario {
        let indexed = "population > %@ (through the index)", ruledOut = "noindex:(population) > %@ (a scan)"
        return BenchScenario(
            id: "noindex", title: "The last name among the cities a range matches (most of them), through the population index or with noindex:",
            claim: "SQLite uses a limited number of indexes per query and may pick one that does not help; noindex: in the predicate rules an index out — for a range that matches most rows, a plain scan beats walking the index.",
            theme: .predicates,
            sources: [.apple("Persistent Store Types and Behaviors", nil, "perf-24")],
            ratios: [RatioSpec(ruledOut, over: indexed)],
            alternatesOrder: true,
            variants: { setup in
                let model = try CityWorkload.model()
                let cities = setup.scale.part(2, minimum: 1_000)
                let store = try setup.data.cities(cities, indexedPopulation: true, residents: false)
                // Nearly every city has more than 100 inhabitants. The last name among them needs each row's name, which
                // the index does not hold: walking the index looks every row up in the table (a count would be answered
                // from the index alone, which is smaller than the table).
                return [(indexed, "population > %@"), (ruledOut, "noindex:(population) > %@")].map { name, format in
                    .engine(name, model: model, store: store, operations: cities) { context in
                        let request = try Bench.request("City", format, Int64(100))
                        request.propertiesToFetch = [PropertyToFetch(.max, "name", as: "last")]
                        Bench.sink(Int64((try context.fetchDictionaries(request).first?["last"] as? String)?.count ?? 0))
                    }
                }
            },
            judge: { m in
                guard let a = m.counters(indexed), let b = m.counters(ruledOut), let ratio = m.ratio(ruledOut, indexed) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.fullScanStatements == 0 && b.fullScanStatements == 1 && ratio < 1,
                               "through the index: \(a.fullScanStatements) scans; with noindex: \(b.fullScanStatements) scan, \(BenchFormat.ratio(ratio)) the time of the index walk")
            })
    }
}

extension ScenarioCatalogue {
    /// W-003-5: the guide's "PublicationForAuthorSinceDate" template, instantiated per use, with like[cd] on the
    /// author's names or with == on indexed names.
    static var fetchTemplate: BenchScenario {
        let folding = "template with like[cd] names", exact = "template with == on indexed names"
        return BenchScenario(
            id: "fetch-template", title: "A stored fetch request template, its variables substituted per use: like[cd] names or == on indexed names",
            claim: "A fetch request template in the model is instantiated with its $VARIABLES substituted at each use; its case- and diacritic-insensitive like[cd] comparisons can use no index and read every row, where == on an indexed attribute searches.",
            theme: .predicates,
            sources: [ClaimSource(.appleGuideClassic, "Managed Object Models", "Fetch Request Templates", keys: ["W-003-5"])],
            ratios: [RatioSpec(exact, over: folding)],
            alternatesOrder: true,
            variants: { setup in
                let authors = setup.scale.part(40, minimum: 200), uses = 50
                let model = try ManagedObjectModel(entities: [
                    EntityDescription(name: "Author", properties: [
                        AttributeDescription(name: "firstName", type: .string, isIndexed: true), AttributeDescription(name: "lastName", type: .string, isIndexed: true),
                        RelationshipDescription(name: "publications", destination: "Publication", inverse: "mainAuthor", isToMany: true)]),
                    EntityDescription(name: "Publication", properties: [
                        AttributeDescription(name: "title", type: .string), AttributeDescription(name: "publicationDate", type: .date),
                        RelationshipDescription(name: "mainAuthor", destination: "Author", inverse: "publications")]),
                ], fetchRequestTemplates: [
                    "PublicationForAuthorSinceDate": ("Publication", "mainAuthor.firstName like[cd] $FIRST_NAME AND mainAuthor.lastName like[cd] $LAST_NAME AND publicationDate > $DATE"),
                    "PublicationForAuthorNamedSinceDate": ("Publication", "mainAuthor.lastName == $LAST_NAME AND mainAuthor.firstName == $FIRST_NAME AND publicationDate > $DATE"),
                ])
                let now = Date(timeIntervalSinceReferenceDate: 800_000_000)
                let store = try ScenarioStore.make(setup.folder, "fetch-template", model: model) { context in
                    for a in 0..<authors {
                        let author = ManagedObject(entity: model.entity(named: "Author")!, insertInto: context)
                        try author.setValue("fiona \(a)", forKey: "firstName")
                        try author.setValue("verde \(a)", forKey: "lastName")
                        for p in 0..<4 {
                            let publication = ManagedObject(entity: model.entity(named: "Publication")!, insertInto: context)
                            try publication.setValue("paper \(a).\(p)", forKey: "title")
                            try publication.setValue(now.addingTimeInterval(-Double(p) * 20_000_000), forKey: "publicationDate")
                            try publication.setValue(author, forKey: "mainAuthor")
                        }
                    }
                }
                func run(_ context: ManagedObjectContext, template: String) throws {
                    var found = 0
                    for use in 0..<uses {
                        let a = (use * 37) % authors
                        // The guide's variables: an author, and a year ago (−31,356,000 s).
                        let request = try context.model.fetchRequest(fromTemplateWithName: template, substitutionVariables: [
                            "FIRST_NAME": "fiona \(a)", "LAST_NAME": "verde \(a)", "DATE": now.addingTimeInterval(-31_356_000)])
                        found += try context.fetch(request).count
                    }
                    Bench.sink(Int64(found))
                }
                return [
                    .engine(folding, model: model, store: store, operations: uses) { try run($0, template: "PublicationForAuthorSinceDate") },
                    .engine(exact, model: model, store: store, operations: uses) { try run($0, template: "PublicationForAuthorNamedSinceDate") },
                ]
            },
            judge: { m in
                guard let a = m.counters(folding), let b = m.counters(exact), let ratio = m.ratio(exact, folding) else { return Verdict(held: nil, "not measured") }
                return Verdict(held: a.fullScanStatements == a.fetches && b.fullScanStatements == 0 && a.fetchedObjects == b.fetchedObjects && ratio < 1,
                               "\(a.fetches) instantiations each: like[cd] scanned \(a.fullScanStatements) times, == on the indexed names \(b.fullScanStatements); both found \(a.fetchedObjects) publications; == takes \(BenchFormat.ratio(ratio)) the time")
            })
    }
}
