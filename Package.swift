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
        // The Swift peer the benchmark runner measures the engine against (benchmark code only).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CGraphviz",
            pkgConfig: "libgvc",
            providers: [.apt(["libgraphviz-dev"])]
        ),
        // Processor instructions for the probes: the cycle counter (their clock) and a cache hint (the trace's queue).
        // Headers; nothing to link.
        .systemLibrary(name: "CProcessor"),
        .target(
            name: "Faultline",
            dependencies: ["CSQLite", "CProcessor"]
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "FaultlineTests", dependencies: ["Faultline", "CSQLite"]),
        .testTarget(name: "FaultlineDataTests", dependencies: ["Faultline", "FaultlineData"]),
        .testTarget(name: "FaultlineReportTests", dependencies: ["Faultline", "FaultlineReport"]),
        .testTarget(name: "FaultlineBenchTests", dependencies: ["Faultline", "FaultlineBench"]),
        .testTarget(name: "faultlineTests", dependencies: ["faultline"]),
    ],
    swiftLanguageModes: [.v6]
)
