// swift-tools-version:6.1
import PackageDescription

// A program written as a Core Data user writes it, against Faultline as a dependency: a container with an in-memory
// store, a background context inserting and saving, eight tasks awaiting `perform` on contexts of their own, and a
// fetch inside a request's span. Run it with `make example` (or `swift run` here): it exits 1 unless the fetch's span
// is inside the request's trace.
let package = Package(
    name: "ServerQuickstart",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Faultline", path: "../.."),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
    ],
    targets: [
        .executableTarget(
            name: "ServerQuickstart",
            dependencies: [
                .product(name: "Faultline", package: "Faultline"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
