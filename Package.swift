// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Faultline",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Faultline", targets: ["Faultline"]),
        .library(name: "FaultlineReport", targets: ["FaultlineReport"]),
        .library(name: "FaultlineBench", targets: ["FaultlineBench"]),
        .executable(name: "faultline", targets: ["faultline"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The Swift Server Work Group's API packages, for the probes (the engine depends on no backend).
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        // The DocC catalog's build (`make docs`): a command plugin, run only when asked for.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // The Swift peer the benchmark runner measures the engine against (benchmark code only).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // zlib: Core Data keeps the store's model (Z_MODELCACHE) as raw deflate.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CGraphviz",
            pkgConfig: "libgvc",
            providers: [.apt(["libgraphviz-dev"])]
        ),
        // Processor instructions for the probes: the cycle counter (their clock) and a cache hint (the trace's queue).
        // Headers; nothing to link.
        .systemLibrary(name: "CProcessor"),
        // Counts allocations for `faultline bench`'s memory figures: defines malloc, so only executables depend on it
        // (the faultline tool, and the tests of the runner), never a library.
        .target(name: "CMallocCounter"),
        .target(
            name: "Faultline",
            dependencies: [
                "CSQLite", "CZlib", "CProcessor",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "FaultlineData",
            dependencies: ["Faultline"]
        ),
        .target(
            name: "FaultlineReport",
            dependencies: ["Faultline", "CGraphviz"]
        ),
        .target(
            name: "FaultlineBench",
            dependencies: ["Faultline", "FaultlineReport", "CSQLite", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .executableTarget(
            name: "faultline",
            dependencies: [
                "Faultline",
                "FaultlineData",
                "FaultlineBench",
                "FaultlineReport",
                "CMallocCounter",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Fuzz targets (Fuzz/): `make fuzz` builds them with libFuzzer (-sanitize=fuzzer,address, FUZZING defined);
        // a plain build makes each a replayer of input files (`swift run fuzz-predicate CRASH-FILE`).
        .target(name: "FuzzSupport", path: "Fuzz/FuzzSupport"),
        .executableTarget(name: "fuzz-predicate", dependencies: ["Faultline", "FuzzSupport"], path: "Fuzz/PredicateFuzzer"),
        .executableTarget(name: "fuzz-xcode-model", dependencies: ["Faultline", "FuzzSupport"], path: "Fuzz/XcodeModelFuzzer"),
        .executableTarget(name: "fuzz-json-model", dependencies: ["Faultline", "FuzzSupport"], path: "Fuzz/JSONModelFuzzer"),
        .executableTarget(name: "fuzz-data", dependencies: ["Faultline", "FaultlineData", "FuzzSupport"], path: "Fuzz/DataFuzzer"),
        .executableTarget(name: "fuzz-compiled-model", dependencies: ["Faultline", "FuzzSupport"], path: "Fuzz/CompiledModelFuzzer"),
        .executableTarget(name: "fuzz-trace", dependencies: ["Faultline", "FaultlineReport", "FuzzSupport"], path: "Fuzz/TraceFuzzer"),
        .executableTarget(name: "fuzz-store", dependencies: ["Faultline", "FaultlineData", "FaultlineReport", "FuzzSupport", "CSQLite", "CZlib"], path: "Fuzz/StoreFuzzer"),
        // Tests only: an SQLite VFS that fails the k-th write, sync or truncate (failures proved by injecting them).
        .target(name: "CFaultInjection", dependencies: ["CSQLite"], path: "Tests/CFaultInjection"),
        .testTarget(name: "FaultlineTests", dependencies: [
            "Faultline", "CSQLite", "CFaultInjection",
            .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            .product(name: "MetricsTestKit", package: "swift-metrics"),
        ]),
        // Persistence code written as Core Data users write it (import and NS prefixes changed, nothing else), with
        // its model as a resource found by name: the proof that Core Data code ports by renaming.
        .testTarget(name: "CoreDataStyleTests", dependencies: [
            "Faultline",
            .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        ], resources: [.copy("Resources/Journal.xcdatamodeld")]),
        .testTarget(name: "FaultlineDataTests", dependencies: ["Faultline", "FaultlineData"]),
        .testTarget(name: "FaultlineReportTests", dependencies: [
            "Faultline", "FaultlineReport",
            .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        ], exclude: ["Inputs"]),
        .testTarget(name: "FaultlineBenchTests", dependencies: ["Faultline", "FaultlineBench", "FaultlineReport", "CMallocCounter"]),
        .testTarget(name: "faultlineTests", dependencies: ["faultline", "CSQLite"]),
    ],
    swiftLanguageModes: [.v6]
)
