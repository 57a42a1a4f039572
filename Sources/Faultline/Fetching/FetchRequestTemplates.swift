extension ManagedObjectModel {
    /// A fetch request from one of the model's stored templates (an Xcode model's `<fetchRequest>`), with its
    /// `$VARIABLE`s replaced by `substitutionVariables`.
    public func fetchRequest(fromTemplateWithName name: String, substitutionVariables: [String: Any?] = [:]) throws -> FetchRequest<ManagedObject> {
        guard let template = fetchRequestTemplates[name] else {
            throw FetchError.predicate(ObjectPredicateError(.unknownKey, "the model has no fetch request template named '\(name)'"))
        }
        let request = FetchRequest<ManagedObject>(entityName: template.entity)
        if let format = template.predicate {
            do {
                request.predicate = try ObjectPredicate(unboundFormat: format).substituting(substitutionVariables)
            } catch let error as ObjectPredicateError {
                throw FetchError.predicate(error)
            }
        }
        return request
    }
}
